/// Runs `body` over the bytes of any `Collection<UInt8>`, without copying when the
/// collection already has contiguous storage (Array, ArraySlice, String.UTF8View, ...).
///
/// Inlinable, like the public generic entry points that use it, so that callers in other
/// modules get it specialized for their concrete collection instead of paying for
/// run-time generic dispatch on every call.
@inlinable
func withContiguousBytes<Bytes: Collection<UInt8>, R, E: Error>(
    _ bytes: Bytes, _ body: (UnsafeBufferPointer<UInt8>) throws(E) -> R
) throws(E) -> R {
    // withContiguousStorageIfAvailable is untyped-rethrows, so carry the typed error out by hand.
    var failure: E?
    let direct: R?? = bytes.withContiguousStorageIfAvailable { buffer -> R? in
        do throws(E) { return try body(buffer) } catch { failure = error; return nil }
    }
    if let failure { throw failure }
    if let direct, let result = direct { return result }
    return try Array(bytes).withUnsafeBufferPointer { buffer throws(E) -> R in try body(buffer) }
}

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
