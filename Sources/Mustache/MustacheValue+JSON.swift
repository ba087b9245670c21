import Foundation

extension MustacheValue {
    /// Converts `JSONSerialization` output (or the same shapes built in Swift).
    ///
    /// JSON booleans arrive as `NSNumber`s, and on Linux `NSNumber(1) as? Bool` succeeds,
    /// so booleans are told apart by the number's type encoding ("c") instead of a cast.
    /// Anything that is not a JSON shape becomes `.null`.
    public init(jsonObject: Any) {
        switch jsonObject {
        case let value as MustacheValue:
            self = value
        case is NSNull:
            self = .null
        case let string as String:
            self = .string(string)
        case let number as NSNumber:
            self = Self(number: number)
        case let items as [Any]:
            self = .array(items.map(MustacheValue.init(jsonObject:)))
        case let object as [String: Any]:
            self = .object(object.mapValues(MustacheValue.init(jsonObject:)))
        default:
            self = .null
        }
    }

    private init(number: NSNumber) {
        switch String(cString: number.objCType) {
        case "c", "B":
            self = .bool(number.boolValue)
        case "f", "d":
            self = .double(number.doubleValue)
        default:
            if let integer = Int(exactly: number) {
                self = .int(integer)
            } else {
                self = .double(number.doubleValue)
            }
        }
    }
}
