extension Array {
    /// The element at `index`, or nil past either end.
    public subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
