import Foundation
import InkyTestSupport

/// The binary listings (`listing_bin`) of a state database's index, read and written with the
/// sqlite3 tool as an older inkyfs, or a person, would leave them.
enum IndexedListings {
    /// The only comic's listing bytes (the tests that use it index one comic).
    static func read(_ database: String) throws -> [UInt8] {
        let hex = Array(try ArchiveMaker.run("/usr/bin/sqlite3", [database, "SELECT hex(listing_bin) FROM comic_index"])
            .trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        return stride(from: 0, to: hex.count - 1, by: 2).compactMap { UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16) }
    }

    static func write(_ listing: [UInt8], to database: String) throws {
        let hex = listing.map { String(format: "%02X", $0) }.joined()
        _ = try ArchiveMaker.run("/usr/bin/sqlite3", [database, "UPDATE comic_index SET listing_bin = X'\(hex)'"])
    }
}
