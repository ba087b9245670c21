import Synchronization

/// One histogram series that threads record into without taking a lock: an observation is an atomic add to its
/// bucket and one to the sum. Made for what every request records (the request-duration histogram): under the one
/// lock of `Metrics.observe` the listener threads took turns for it on every request.
///
/// `@unchecked Sendable`: the cells are atomics, reached through a pointer that lives as long as the series.
public final class HistogramSeries: @unchecked Sendable {
    /// Upper bounds of the buckets but the last (+Inf).
    package let bounds: [Double]
    /// A count per bucket, the last for +Inf.
    private let buckets: UnsafeMutablePointer<Atomic<Int>>
    /// The sum's `Double`, as its bit pattern.
    private let sumBits = Atomic<UInt64>(0.0.bitPattern)

    package init(bounds: [Double]) {
        self.bounds = bounds
        buckets = .allocate(capacity: bounds.count + 1)
        for index in 0...bounds.count { (buckets + index).initialize(to: Atomic(0)) }
    }

    deinit {
        buckets.deinitialize(count: bounds.count + 1)
        buckets.deallocate()
    }

    public func record(_ value: Double) {
        buckets[Metrics.Distribution.bucket(of: value, bounds: bounds)].wrappingAdd(1, ordering: .relaxed)
        var old = sumBits.load(ordering: .relaxed)
        while true {
            let (exchanged, found) = sumBits.compareExchange(
                expected: old, desired: (Double(bitPattern: old) + value).bitPattern, ordering: .relaxed)
            if exchanged { return }
            old = found
        }
    }

    /// The counts as they are now. Taken while others record, the count is the sum of the buckets read (so the +Inf
    /// bucket always equals it), and the sum may include an observation or two more or less.
    package var distribution: Metrics.Distribution {
        var distribution = Metrics.Distribution(bounds: bounds)
        for index in 0...bounds.count {
            let count = buckets[index].load(ordering: .relaxed)
            distribution.buckets[index] = count
            distribution.count += count
        }
        distribution.sum = Double(bitPattern: sumBits.load(ordering: .relaxed))
        return distribution
    }
}
