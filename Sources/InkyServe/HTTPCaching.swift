import Foundation
import InkyCore

/// What HTTP caching and partial requests need: an entity tag and date from a comic's file
/// identity, and one `Range` header understood (RFC 9110, §14).
enum HTTPCaching {
    /// A strong tag for a representation made from the file as it is (size, mtime, inode): it
    /// changes when the file does. `variant` tells the representations of one comic apart.
    static func entityTag(_ identity: FileIdentity, variant: String) -> String {
        "\"\(String(identity.size, radix: 16))-\(String(identity.modifiedNanoseconds, radix: 16))-\(String(identity.inode, radix: 16))-\(variant)\""
    }

    /// `If-None-Match`: "*" or a list of tags; compared weakly (a `W/` prefix aside), as §13.1.2 says.
    static func matches(ifNoneMatch header: String?, _ tag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || (trimmed.hasPrefix("W/") ? String(trimmed.dropFirst(2)) : trimmed) == tag
        }
    }

    /// An IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
    static func date(_ nanoseconds: Int64) -> String {
        var seconds = time_t(nanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// An RFC 3339 date for Atom: `2026-11-28T23:53:44Z`.
    static func atomDate(_ nanoseconds: Int64) -> String {
        var seconds = time_t(nanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    static func atomDate(_ date: Date) -> String { atomDate(Int64(date.timeIntervalSince1970 * 1e9)) }

    /// What a `Range` header asks of a representation of `size` bytes.
    enum RangeRequest: Equatable {
        /// No range, one this server does not take (several ranges, another unit), or one `If-Range` voids: all of it.
        case whole
        /// One satisfiable range (206).
        case part(ClosedRange<Int64>)
        /// A range that starts past the end (416).
        case unsatisfiable
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n` (the last n bytes). Several ranges are answered
    /// with the whole, which §14.2 allows.
    static func range(_ header: String?, size: Int64) -> RangeRequest {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let count = Int64(last), count >= 0 else { return .whole }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - count)...(size - 1))
        }
        guard let start = Int64(first), start >= 0 else { return .whole }
        var end = size - 1
        if !last.isEmpty {
            guard let value = Int64(last), value >= start else { return .whole }
            end = min(value, size - 1)
        }
        return start >= size ? .unsatisfiable : .part(start...end)
    }
}
