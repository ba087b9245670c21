import Foundation
import JSON

/// JWT NumericDate (RFC 7519 §2): seconds since 1970. Every time claim goes through here, so a value no clock
/// can hold (1e19, -1e19, a string, a fraction of a second before 1970) is refused with a rejection, and every
/// date that leaves this module converts to a 64-bit second count without trapping.
enum NumericDate {
    /// 9999-12-31T23:59:59Z: later than any token, earlier than anything that overflows a conversion.
    static let latest: TimeInterval = 253_402_300_799

    /// nil when the claim is absent; a rejection when it is present but not a time between 1970 and 9999.
    static func decode(_ value: JSONValue?, claim: String) throws(TokenRejection) -> Date? {
        guard let value else { return nil }
        guard let seconds = value.doubleValue, seconds.isFinite, seconds >= 0, seconds <= latest else {
            throw .invalidTime(claim)
        }
        return Date(timeIntervalSince1970: seconds)
    }

    /// A time that may come in seconds or milliseconds (Apple's `event_time`); nil for anything out of range.
    static func lenient(_ value: JSONValue?) -> Date? {
        let number: Double? = switch value {
        case let .number(number)?: number
        case let .string(text)?: Double(text)
        default: nil
        }
        guard let number, number.isFinite, number > 0 else { return nil }
        // Past year 5000 in seconds is read as milliseconds.
        let seconds = number > 1e11 ? number / 1000 : number
        return seconds <= latest ? Date(timeIntervalSince1970: seconds) : nil
    }
}

extension NumericDate {
    /// Whole seconds since 1970 for a date this process made (a clock reading), clamped to 1970...9999 so
    /// the conversion cannot trap whatever the clock says.
    static func seconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite else { return 0 }
        return Int64(min(max(seconds, 0), latest))
    }
}
