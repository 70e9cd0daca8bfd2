/// The window cache's arithmetic, kept pure so it can be tested alone: which pages to keep,
/// which to fetch ahead, and which to drop when a reader is on page `current`.
public struct WindowPolicy: Sendable, Equatable {
    /// Pages kept on each side of the current one.
    public var window: Int
    /// Pages fetched ahead of the current one.
    public var prefetch: Int

    public init(window: Int = 5, prefetch: Int = 5) {
        self.window = max(0, window)
        self.prefetch = max(0, prefetch)
    }

    /// Pages that must stay cached while `current` is read.
    public func kept(around current: Int, pageCount: Int) -> ClosedRange<Int> {
        clamp(current - window, current + max(window, prefetch), pageCount)
    }

    /// Pages to fetch (in this order of preference) after a read of `current`.
    public func prefetched(after current: Int, pageCount: Int) -> [Int] {
        guard prefetch > 0, current + 1 < pageCount else { return [] }
        return Array((current + 1)...min(pageCount - 1, current + prefetch))
    }

    /// True when page `page` is far enough from `current` to be dropped: beyond twice the window.
    public func shouldEvict(_ page: Int, current: Int) -> Bool {
        abs(page - current) > 2 * max(window, prefetch)
    }

    private func clamp(_ low: Int, _ high: Int, _ count: Int) -> ClosedRange<Int> {
        let lower = max(0, low)
        let upper = max(lower, min(count - 1, high))
        return lower...upper
    }
}
