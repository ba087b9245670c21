/// Writes UTF-8 into a buffer sized beforehand, for text built on every request (a Set-Cookie value, a metrics
/// label) as one `String(unsafeUninitializedCapacity:)`: no appends, no growth. A struct, not a closure capturing
/// its position, so that each write needs no runtime exclusivity check. Inlinable: its callers are in other modules
/// (the HTTP server, the metrics), where a call per write cost about 230 instructions a sign-in.
@frozen
public struct UTF8Writer {
    @usableFromInline let buffer: UnsafeMutableBufferPointer<UInt8>
    @usableFromInline var written = 0
    /// Bytes written so far.
    @inlinable public var count: Int { written }

    @inlinable
    public init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    @inlinable
    public mutating func write(_ text: String) {
        var text = text
        text.withUTF8 { write($0) }
    }

    @inlinable
    public mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write($0) }
    }

    @inlinable
    public mutating func write(_ byte: UInt8) {
        buffer[written] = byte
        written += 1
    }

    @inlinable
    public mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        _ = UnsafeMutableBufferPointer(rebasing: buffer[written..<written + bytes.count]).initialize(from: bytes)
        written += bytes.count
    }
}
