import JSON

extension UnsafeBufferPointer<UInt8> {
    /// A base address that is never nil: OpenSSL rejects NULL even with a zero length.
    var nonNullBase: UnsafePointer<UInt8> {
        baseAddress ?? UnsafePointer(emptyBytePointer)
    }
}

/// One static byte, so empty inputs can still be passed as a valid pointer.
nonisolated(unsafe) let emptyBytePointer: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return pointer
}()
