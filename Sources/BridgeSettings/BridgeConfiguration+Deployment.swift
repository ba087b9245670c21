import Foundation

/// The settings of a deployment in front of the service: which proxies are believed, which origins may call
/// the API from JavaScript, and the token `/metrics` requires. BRIDGE_TRUSTED_PROXIES is a comma list of addresses and
/// CIDR networks, `none` to believe no proxy, or unset for loopback (a proxy on the same host).
extension BridgeConfiguration {
    package static let minimumMetricsTokenLength = 16

    package static func trustedProxies(_ settings: Settings) throws(ConfigurationError) -> [AddressRange] {
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

    package static func metricsToken(_ settings: Settings) throws(ConfigurationError) -> String? {
        guard let token = settings.value("BRIDGE_METRICS_TOKEN") else { return nil }
        // The characters of an RFC 6750 bearer token, so a scraper can send it as one.
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
        guard token.count >= minimumMetricsTokenLength, token.allSatisfy({ allowed.contains($0) }) else {
            throw ConfigurationError("BRIDGE_METRICS_TOKEN", "must be at least \(minimumMetricsTokenLength) characters of A-Z a-z 0-9 - . _ ~ + / = (try: openssl rand -hex 24)")
        }
        return token
    }

    package static func corsOrigins(_ settings: Settings) throws(ConfigurationError) -> [String] {
        let origins = (settings.value("BRIDGE_CORS_ORIGINS") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let bad = origins.first(where: { !isOrigin($0) }) {
            throw ConfigurationError("BRIDGE_CORS_ORIGINS", "must be a comma list of exact origins, scheme://host[:port] without a path, such as https://app.example.com (got \"\(bad)\")")
        }
        return origins
    }

    /// `scheme://host[:port]` exactly as a browser sends it in `Origin`: lower-case scheme and host, no path,
    /// query, fragment or user.
    package static func isOrigin(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme, let host = url.host, !host.isEmpty,
              url.user == nil, url.password == nil, url.path.isEmpty, url.query == nil, url.fragment == nil,
              text == text.lowercased() else { return false }
        let port = url.port.map { ":\($0)" } ?? ""
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return text == "\(scheme)://\(shownHost)\(port)"
    }
}
