import Foundation

/// Which `return_to` addresses a sign-in may send a person back to (`BRIDGE_RETURN_URLS`): a comma list whose
/// entries are exact URLs, or prefixes written with a trailing `*` (`https://app.example.com/account/*`). A prefix
/// must end in `/` before its `*`, so `https://app.example.com*` cannot admit `https://app.example.com.evil.net`.
/// Entries are an http(s) URL with a host, or a path on this server (`/welcome`). Nothing else is ever a target:
/// an address is compared as written, never decoded, and one with a backslash, control character, space, `..`,
/// an encoded dot or slash, user info, or a `//` start is refused before it is compared.
public struct ReturnURLPolicy: Sendable, Equatable {
    public struct SettingError: Error, Equatable { public let problem: String }

    public private(set) var exact: Set<String> = []
    public private(set) var prefixes: [String] = []

    public init() {}

    public init(setting: String?) throws(SettingError) {
        for raw in (setting ?? "").split(separator: ",") {
            let entry = raw.trimmingCharacters(in: .whitespaces)
            guard !entry.isEmpty else { continue }
            if entry.hasSuffix("*") {
                let prefix = String(entry.dropLast())
                guard prefix.hasSuffix("/"), Self.isWellFormed(prefix) else {
                    throw SettingError(problem: "has the prefix \"\(entry)\"; a prefix is a URL or path ending in /*")
                }
                prefixes.append(prefix)
            } else {
                guard Self.isWellFormed(entry) else {
                    throw SettingError(problem: "has \"\(entry)\", which is not a path (/…) or an http(s) URL without user info")
                }
                exact.insert(entry)
            }
        }
    }

    /// `candidate` if it may be a target, else nil.
    public func allowed(_ candidate: String?) -> String? {
        guard let candidate, candidate.utf8.count <= 2048, Self.isWellFormed(candidate) else { return nil }
        if exact.contains(candidate) || prefixes.contains(where: { candidate.hasPrefix($0) }) { return candidate }
        return nil
    }

    /// A path on this server or an http(s) URL with a host and no user info, free of the tricks browsers forgive.
    package static func isWellFormed(_ text: String) -> Bool {
        let forbidden = text.unicodeScalars.contains { $0.value <= 0x20 || $0.value >= 0x7f || $0 == "\\" }
        let lowered = text.lowercased()
        if forbidden || lowered.contains("..") || lowered.contains("%2e") || lowered.contains("%2f")
            || lowered.contains("%5c") || lowered.contains("%00") {
            return false
        }
        if text.hasPrefix("/") { return !text.hasPrefix("//") }
        guard lowered.hasPrefix("https://") || lowered.hasPrefix("http://"),
              let components = URLComponents(string: text), let host = components.host, !host.isEmpty,
              components.user == nil, components.password == nil else { return false }
        let authority = text.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false).dropFirst(2).first ?? ""
        return !authority.contains("@")
    }
}
