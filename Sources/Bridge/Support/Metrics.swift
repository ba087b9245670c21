import Synchronization

/// Counters exposed at `GET /metrics` in Prometheus text format.
public final class Metrics: Sendable {
    private let counters = Mutex<[String: Int]>([:])

    public init() {}

    /// Increments `name{labels}`; labels are fixed words chosen by the code, never user input.
    public func increment(_ name: String, _ labels: KeyValuePairs<String, String> = [:]) {
        let key = labels.isEmpty ? name : name + "{" + labels.map { "\($0.key)=\"\($0.value)\"" }.joined(separator: ",") + "}"
        counters.withLock { $0[key, default: 0] += 1 }
    }

    public func value(_ key: String) -> Int { counters.withLock { $0[key] ?? 0 } }

    public func prometheusText(extra: [(String, Int)] = []) -> String {
        let snapshot = counters.withLock { $0 }
        var lines: [String] = []
        var typed: Set<String> = []
        for (key, value) in snapshot.sorted(by: { $0.key < $1.key }) + extra.sorted(by: { $0.0 < $1.0 }) {
            let name = String(key.prefix { $0 != "{" })
            if typed.insert(name).inserted { lines.append("# TYPE \(name) counter") }
            lines.append("\(key) \(value)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
