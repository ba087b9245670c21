import JOSE

/// Keys generated once per test run and shared: RSA generation takes a noticeable moment.
enum TestKeys {
    static let rsa: RSAPrivateKey = try! RSAPrivateKey.generate()
    static let otherRSA: RSAPrivateKey = try! RSAPrivateKey.generate()
    static let ec: ECPrivateKey = try! ECPrivateKey.generate()
}

extension Array where Element == UInt8 {
    /// A copy with one bit inverted.
    func flippingBit(_ bit: Int) -> [UInt8] {
        var copy = self
        copy[bit / 8] ^= UInt8(1 << (bit % 8))
        return copy
    }
}
