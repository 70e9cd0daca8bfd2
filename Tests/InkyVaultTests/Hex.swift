/// Test vectors are published in hex; these keep the expected values readable as published.
func hex(_ string: String) -> [UInt8] {
    let digits = Array(string.filter { !$0.isWhitespace }.utf8)
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    return stride(from: 0, to: digits.count, by: 2).map {
        UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}
