extension String {
    /// A value from a token or request, shortened and made printable before it reaches a log or a rejection.
    var loggable: String {
        let printable = unicodeScalars.prefix(60).map { (0x20..<0x7F).contains($0.value) ? Character($0) : "?" }
        return String(printable) + (unicodeScalars.count > 60 ? "…" : "")
    }
}
