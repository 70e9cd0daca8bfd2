extension Array {
    /// The element at `index`, or nil past either end. Inlinable: specialized where it is used,
    /// a generic call copied each element through its type's witnesses (a listing ahead asks
    /// for every page of 20,000 comics).
    @inlinable
    public subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
