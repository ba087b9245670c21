/// Writes UTF-8 into a buffer sized beforehand, for text built on every request (a Set-Cookie value, a metrics
/// label) as one `String(unsafeUninitializedCapacity:)`: no appends, no growth. A struct, not a closure capturing
/// its position, so that each write needs no runtime exclusivity check.
public struct UTF8Writer {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    public private(set) var count = 0

    public init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    public mutating func write(_ text: String) {
        var text = text
        text.withUTF8 { write($0) }
    }

    public mutating func write(_ text: StaticString) {
        text.withUTF8Buffer { write($0) }
    }

    public mutating func write(_ byte: UInt8) {
        buffer[count] = byte
        count += 1
    }

    public mutating func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        _ = UnsafeMutableBufferPointer(rebasing: buffer[count..<count + bytes.count]).initialize(from: bytes)
        count += bytes.count
    }
}
