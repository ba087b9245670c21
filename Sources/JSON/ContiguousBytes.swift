/// Runs `body` over the bytes of any `Collection<UInt8>`, without copying when the
/// collection already has contiguous storage (Array, ArraySlice, String.UTF8View, ...).
///
/// Inlinable, like `JSONValue.parse`, so that callers in other modules get it specialized for their
/// concrete collection instead of paying for run-time generic dispatch on every call. JOSE uses it too.
@inlinable
package func withContiguousBytes<Bytes: Collection<UInt8>, R, E: Error>(
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
