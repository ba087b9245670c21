// The strict JSON parser (every token header, claims set, JWKS and API body goes through it).
// The parser's module is whichever of these exists: JSON once the parser has its own module, JOSE before.
#if canImport(JSON)
import JSON
#else
import JOSE
#endif

/// Properties: parsing never crashes; an error points inside the input; whatever parses serializes to JSON
/// that parses back to the same value and serializes to the same bytes (so two readers never disagree).
func fuzzJSON(_ input: UnsafeBufferPointer<UInt8>) {
    let value: JSONValue
    do {
        value = try JSONValue.parse(input)
    } catch {
        guard error.offset >= 0, error.offset <= input.count else {
            fatalError("error offset \(error.offset) outside an input of \(input.count) bytes: \(error.reason)")
        }
        return
    }
    let serialized = value.serializedBytes()
    let reparsed: JSONValue
    do {
        reparsed = try JSONValue.parse(serialized)
    } catch {
        fatalError("serialized output does not parse: \(error) in \(String(decoding: serialized, as: UTF8.self))")
    }
    guard reparsed == value else { fatalError("round trip changed the value: \(value) became \(reparsed)") }
    guard reparsed.serializedBytes() == serialized else { fatalError("serialization is not stable") }
}
