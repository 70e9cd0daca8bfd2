import Foundation

/// Human byte counts ("128 MiB") without Foundation's locale-dependent formatter,
/// so messages read the same on every machine and in every test.
public enum ByteCountText {
    public static func format(_ bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) bytes" }
        let rounded = (value * 10).rounded() / 10
        let text = rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
        return "\(text) \(units[unit])"
    }

    /// Parses "256M", "1G", "512MiB", "4096" (bytes). Returns nil for anything else.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let digits = trimmed.prefix { $0.isNumber }
        guard let number = Int64(digits) else { return nil }
        let suffix = trimmed.dropFirst(digits.count)
        let shift: Int64
        switch suffix {
        case "", "b": shift = 0
        case "k", "kb", "kib": shift = 10
        case "m", "mb", "mib": shift = 20
        case "g", "gb", "gib": shift = 30
        case "t", "tb", "tib": shift = 40
        default: return nil
        }
        let (result, overflow) = number.multipliedReportingOverflow(by: 1 << shift)
        return overflow ? nil : result
    }
}
