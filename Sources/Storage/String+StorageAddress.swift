extension String {
    /// Where the string's UTF-8 lives, for strings stored on the heap (longer than 15 bytes): the same for every copy
    /// of one string value, and not reused while a cache holds a copy. A statement cache can so find a statement's
    /// text by address instead of hashing all of it; it still compares the text on a hit, which for a copy of the same
    /// value is a pointer comparison. nil for shorter strings, which are kept inline.
    var heapStorageAddress: UInt? {
        guard utf8.count > 15 else { return nil }
        return utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
    }
}
