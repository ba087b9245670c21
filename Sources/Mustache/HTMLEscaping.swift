extension String {
    /// Appends `text` with `& < > " '` replaced by entities.
    public mutating func appendHTMLEscaped(_ text: String) {
        let bytes = text.utf8
        var chunkStart = bytes.startIndex
        for index in bytes.indices {
            let entity: String
            switch bytes[index] {
            case UInt8(ascii: "&"): entity = "&amp;"
            case UInt8(ascii: "<"): entity = "&lt;"
            case UInt8(ascii: ">"): entity = "&gt;"
            case UInt8(ascii: "\""): entity = "&quot;"
            case UInt8(ascii: "'"): entity = "&#39;"
            default: continue
            }
            append(contentsOf: text[chunkStart..<index])
            append(entity)
            chunkStart = bytes.index(after: index)
        }
        append(contentsOf: text[chunkStart...])
    }
}

/// `text` with `& < > " '` replaced by entities.
public func htmlEscaped(_ text: String) -> String {
    var escaped = ""
    escaped.reserveCapacity(text.utf8.count)
    escaped.appendHTMLEscaped(text)
    return escaped
}
