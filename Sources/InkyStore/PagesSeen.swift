import Foundation

/// The pages of a comic read so far, as the `pages_seen` column holds them: a JSON array of
/// 0-based page numbers, ascending. Written once per recorded read, so a 10,000-page comic read
/// whole rewrites it 10,000 times: parsing and writing it here is a scan of its digits, not a
/// JSON decode into a set, a sort and a JSON encode (which made that read quadratic).
struct PagesSeen: Equatable {
    private(set) var pages: [Int] = []

    init() {}

    /// The column's text; anything but a plain array of numbers goes through JSONDecoder.
    init(json text: String) {
        var pages: [Int] = []
        var number: Int?
        var plain = text.utf8.first == UInt8(ascii: "[") && text.utf8.last == UInt8(ascii: "]")
        for byte in text.utf8.dropFirst().dropLast() where plain {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (times, overflow1) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                if overflow1 || overflow2 { plain = false }
                number = sum
            case UInt8(ascii: ","):
                if let value = number { pages.append(value) } else { plain = false }
                number = nil
            default:
                plain = false
            }
        }
        if let number { pages.append(number) }
        if !plain {
            pages = ((try? JSONDecoder().decode([Int].self, from: Data(text.utf8))) ?? [])
        }
        // Written sorted and unique; anything else (another writer) is made so once.
        if zip(pages, pages.dropFirst()).contains(where: { $0 >= $1 }) { pages = Array(Set(pages)).sorted() }
        self.pages = pages
    }

    mutating func insert(_ page: Int) {
        var low = 0, high = pages.count
        while low < high {
            let middle = (low + high) / 2
            if pages[middle] < page { low = middle + 1 } else { high = middle }
        }
        if low == pages.count || pages[low] != page { pages.insert(page, at: low) }
    }

    /// The column's text, exactly as JSONEncoder writes an array of numbers.
    var json: String {
        var text = "["
        text.reserveCapacity(pages.count * 6 + 2)
        for (index, page) in pages.enumerated() {
            if index > 0 { text += "," }
            text += String(page)
        }
        return text + "]"
    }
}
