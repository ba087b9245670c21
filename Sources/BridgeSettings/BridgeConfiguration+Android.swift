extension BridgeConfiguration {
    /// Where the `intent://` relay for an Android app (`POST /apple/android/<package>`) is served below the public URL.
    package static let androidRelayPathPrefix = "/apple/android/"

    /// The relay's URL for `package`: the Return URL of the Services ID, and the `redirect_uri` the app's plugin
    /// sends to Apple, so Apple issues the code for it and it is exchanged with it.
    public func androidRelayURL(package: String) -> String { publicURL + Self.androidRelayPathPrefix + package }

    /// For `dev`'s Apple ID simulator: its form post to a relay URL is answered with a redirect to `intent:`, which
    /// Chromium checks against the posting page's `form-action`.
    public var androidRelayDestinationSources: [String: [String]] {
        Dictionary(androidPackages.map { (androidRelayURL(package: $0), ["intent:"]) }) { first, _ in first }
    }

    /// APPLE_ANDROID_PACKAGES: the Android application ids the relay may hand a sign-in to. Each is written as
    /// Android's build tools require (two segments or more, each a letter then letters, digits or `_`), which is also
    /// what the path, the `intent://` URL and the Return URL at Apple can carry as it is. The relay's codes are issued
    /// to the Services ID, so it needs one.
    package static func androidPackages(_ settings: Settings, servicesID: String?) throws(ConfigurationError) -> [String] {
        let packages = (settings.value("APPLE_ANDROID_PACKAGES") ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let bad = packages.first(where: { !isAndroidApplicationID($0) }) {
            throw ConfigurationError("APPLE_ANDROID_PACKAGES", "must be a comma list of Android application ids such as com.example.app (got \"\(bad)\")")
        }
        if !packages.isEmpty && servicesID == nil {
            throw ConfigurationError("APPLE_ANDROID_PACKAGES", "is set but APPLE_SERVICES_ID is not: Apple's web sign-in on Android signs in to the Services ID")
        }
        return packages
    }

    package static func isAndroidApplicationID(_ id: String) -> Bool {
        let segments = id.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return id.utf8.count <= 255 && segments.count >= 2 && segments.allSatisfy { segment in
            guard let first = segment.first, isASCIILetter(first) else { return false }
            return segment.allSatisfy { isASCIILetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }
        }
    }

    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
