import TextBytes
import Locking

/// The service's metrics, exposed at `GET /metrics` in Prometheus text format (0.0.4): counters and histograms the
/// code records, and samples taken at scrape time (gauges, counters kept elsewhere). Every family that
/// `MetricFamily.all` describes is listed with its `# HELP` and `# TYPE` lines from the first scrape on, samples or
/// not, so a dashboard or an alert can rely on each name being there.
public final class Metrics: Sendable {
    /// One sample taken at scrape time (a gauge, or a counter another object keeps).
    public struct Sample: Sendable {
        public let name: String
        public let labels: [(String, String)]
        public let value: Double

        public init(_ name: String, _ value: Double, labels: [(String, String)] = []) {
            self.name = name
            self.labels = labels
            self.value = value
        }
    }

    /// A histogram's counts per bucket (not cumulative; the last is +Inf), sum and count.
    package struct Distribution {
        /// Upper bounds of the buckets but the last (+Inf): the family's.
        package let bounds: [Double]
        package var buckets: [Int]
        package var sum = 0.0
        package var count = 0

        package init(bounds: [Double]) {
            self.bounds = bounds
            buckets = Array(repeating: 0, count: bounds.count + 1)
        }
    }

    /// Counters by family, then by rendered label set (`flow="web"`, or empty).
    private let counters = Lock<[String: [String: Int]]>([:])
    private let histograms = Lock<[String: [String: Distribution]]>([:])
    /// Series recorded without the lock (`series(_:_:)`), by family and rendered label set; listed once they have an
    /// observation.
    private let lockFreeSeries = Lock<[String: [String: HistogramSeries]]>([:])

    public init() {}

    /// Increments `name{labels}`; labels are fixed words chosen by the code (or operator configuration, like an
    /// OpenID client's ID), never a secret or unchecked user input.
    public func increment(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) {
        let series = Self.labelText(labels)
        counters.withLock { $0[name, default: [:]][series, default: 0] += 1 }
    }

    /// Records one observation of the histogram `name` (its buckets are `MetricFamily.all`'s, else the defaults).
    public func observe(_ name: String, _ value: Double, _ labels: KeyValuePairs<String, String> = [:]) {
        let series = Self.labelText(labels)
        histograms.withLock { families in
            // The family's bounds are looked up by name only for a new series; a series keeps them.
            families[name, default: [:]][series, default: Distribution(bounds: MetricFamily.named(name)?.buckets ?? MetricFamily.defaultBuckets)]
                .record(value)
        }
    }

    /// The series `name{labels}` for a caller to keep and record into without a lock (see `HistogramSeries`); the
    /// same object for the same name and labels.
    public func series(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> HistogramSeries {
        let series = Self.labelText(labels)
        return lockFreeSeries.withLock { families in
            if let existing = families[name]?[series] { return existing }
            let made = HistogramSeries(bounds: MetricFamily.named(name)?.buckets ?? MetricFamily.defaultBuckets)
            families[name, default: [:]][series] = made
            return made
        }
    }

    /// Every histogram: those recorded under the lock, and the lock-free series that have an observation.
    private func allHistograms() -> [String: [String: Distribution]] {
        var all = histograms.withLock { $0 }
        for (name, family) in lockFreeSeries.withLock({ $0 }) {
            for (series, recorded) in family {
                let distribution = recorded.distribution
                guard distribution.count > 0 else { continue }
                all[name, default: [:]][series, default: Distribution(bounds: distribution.bounds)].add(distribution)
            }
        }
        return all
    }

    /// The counter `key`, written as it appears in the text (`name` or `name{label="value"}`).
    public func value(_ key: String) -> Int {
        let name = String(key.prefix { $0 != "{" })
        let series = key.count > name.count ? String(key.dropFirst(name.count + 1).dropLast()) : ""
        return counters.withLock { $0[name]?[series] ?? 0 }
    }

    /// How many observations the histogram `name{labels}` holds.
    public func observations(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) -> Int {
        let series = Self.labelText(labels.map { ($0.key, $0.value) })
        return allHistograms()[name]?[series]?.count ?? 0
    }

    /// The exposition: every described family in name order with HELP and TYPE, then any the description does not
    /// know (a name added without describing it: listed rather than lost, and `scripts/operations-check` fails).
    public func prometheusText(collected: [Sample] = []) -> String {
        let (counters, histograms) = (counters.withLock { $0 }, allHistograms())
        var collectedByName: [String: [Sample]] = [:]
        for sample in collected { collectedByName[sample.name, default: []].append(sample) }
        let described = Set(MetricFamily.all.map(\.name))
        var kinds: [String: MetricFamily.Kind] = [:]
        for name in counters.keys { kinds[name] = .counter }
        for name in histograms.keys { kinds[name] = .histogram }
        for name in collectedByName.keys { kinds[name] = .gauge }
        let undescribed = kinds.filter { !described.contains($0.key) }.sorted { $0.key < $1.key }
            .map { MetricFamily($0.key, $0.value, "Not described in MetricFamily.all.") }
        var text = ""
        for family in MetricFamily.all.sorted(by: { $0.name < $1.name }) + undescribed {
            text += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.kind.rawValue)\n"
            var lines: [String] = []
            for (series, value) in counters[family.name] ?? [:] {
                lines.append(Self.line(family.name, series, String(value)))
            }
            for sample in collectedByName[family.name] ?? [] {
                lines.append(Self.line(family.name, Self.labelText(sample.labels), Self.number(sample.value)))
            }
            for (series, distribution) in (histograms[family.name] ?? [:]).sorted(by: { $0.key < $1.key }) {
                lines += distribution.lines(family.name, series, bounds: family.buckets ?? MetricFamily.defaultBuckets)
            }
            // Series in a stable order; a histogram's own lines keep theirs (buckets, then sum and count).
            text += (family.kind == .histogram ? lines : lines.sorted()).map { $0 + "\n" }.joined()
        }
        return text
    }

    /// `label="value",…` in the order given, as the array's version writes it: built on every count and
    /// observation (once per request for the latency histogram), so as bytes into one string, without the array,
    /// and with label values that need no escaping (all of them in practice) taken as they are.
    package static func labelText(_ labels: KeyValuePairs<String, String>) -> String {
        if labels.isEmpty { return "" }
        var count = 0
        for (name, value) in labels {
            if Self.needsEscaping(value) { return labelText(labels.map { ($0.key, $0.value) }) }
            count += name.utf8.count + value.utf8.count + 4
        }
        return String(unsafeUninitializedCapacity: count - 1) { buffer in
            var text = UTF8Writer(buffer)
            for (index, (name, value)) in labels.enumerated() {
                if index > 0 { text.write(UInt8(ascii: ",")) }
                text.write(name)
                text.write("=\"" as StaticString)
                text.write(value)
                text.write(UInt8(ascii: "\""))
            }
            return text.count
        }
    }

    private static func needsEscaping(_ value: String) -> Bool {
        value.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") })
    }

    /// `label="value",…` in the order given, values escaped as the text format asks.
    package static func labelText(_ labels: [(String, String)]) -> String {
        var text = ""
        for (index, (name, value)) in labels.enumerated() {
            if index > 0 { text += "," }
            text += name
            text += "=\""
            text += escape(value)
            text += "\""
        }
        return text
    }

    package static func escape(_ value: String) -> String {
        guard needsEscaping(value) else { return value }
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    package static func line(_ name: String, _ series: String, _ value: String) -> String {
        series.isEmpty ? "\(name) \(value)" : "\(name){\(series)} \(value)"
    }

    /// A sample value: whole numbers without a fraction, infinities as the text format spells them.
    package static func number(_ value: Double) -> String {
        if value == .infinity { return "+Inf" }
        if value == -.infinity { return "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

extension Metrics.Distribution {
    /// The bucket `value` falls in: the first whose upper bound it does not exceed, else +Inf's.
    package static func bucket(of value: Double, bounds: [Double]) -> Int {
        bounds.firstIndex { value <= $0 } ?? bounds.count
    }

    package mutating func record(_ value: Double) {
        buckets[Self.bucket(of: value, bounds: bounds)] += 1
        sum += value
        count += 1
    }

    /// Adds another distribution of the same bounds.
    package mutating func add(_ other: Self) {
        for index in buckets.indices { buckets[index] += other.buckets[index] }
        sum += other.sum
        count += other.count
    }

    /// `_bucket` lines (cumulative, `le` last among the labels, ending with +Inf), then `_sum` and `_count`.
    package func lines(_ name: String, _ series: String, bounds: [Double]) -> [String] {
        var lines: [String] = []
        var cumulative = 0
        for (index, bound) in (bounds + [.infinity]).enumerated() {
            cumulative += buckets[index]
            let le = "le=\"\(bound == .infinity ? "+Inf" : String(bound))\""
            lines.append(Metrics.line(name + "_bucket", series.isEmpty ? le : series + "," + le, String(cumulative)))
        }
        lines.append(Metrics.line(name + "_sum", series, String(sum)))
        lines.append(Metrics.line(name + "_count", series, String(count)))
        return lines
    }
}
