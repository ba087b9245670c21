import Foundation

/// The settings of a deployment in front of the service. BRIDGE_TRUSTED_PROXIES is a comma list of addresses and
/// CIDR networks, `none` to believe no proxy, or unset for loopback (a proxy on the same host).
extension BridgeConfiguration {
    static func trustedProxies(_ settings: Settings) throws(ConfigurationError) -> [AddressRange] {
        guard let list = settings.value("BRIDGE_TRUSTED_PROXIES") else { return AddressRange.loopback }
        if list.lowercased() == "none" { return [] }
        var ranges: [AddressRange] = []
        for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            guard let range = AddressRange(entry) else {
                throw ConfigurationError("BRIDGE_TRUSTED_PROXIES", "must be a comma list of numeric addresses or CIDR networks such as 127.0.0.1, 10.0.0.0/8, ::1 (got \"\(entry)\")")
            }
            ranges.append(range)
        }
        return ranges
    }
}
