import Foundation

/// Numbers written the way a language writes them (digit grouping, native digits where that is the norm).
public enum NumberFormatting {
    public static func integer(_ number: Int, language: String) -> String {
        let formatter = NumberFormatter()
        formatter.locale = Locale(identifier: language)
        formatter.numberStyle = .decimal
        return formatter.string(from: NSNumber(value: number)) ?? String(number)
    }
}

/// Dates and times for people: the language's own order and month names, in a given time zone.
public enum DateFormatting {
    /// E.g. "December 1, 2026 at 3:04 AM UTC" in English, "2026년 12월 1일 오전 3:04 UTC" in Korean.
    public static func dateTime(_ date: Date, language: String, timeZone: TimeZone = TimeZone(identifier: "UTC")!) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: language)
        formatter.timeZone = timeZone
        formatter.dateStyle = .long
        formatter.timeStyle = .short
        let zone = timeZone.identifier == "UTC" || timeZone.identifier == "GMT" ? "UTC" : (timeZone.abbreviation(for: date) ?? timeZone.identifier)
        return formatter.string(from: date) + " " + zone
    }

    /// The machine-readable form for `<time datetime>`: ISO 8601 in UTC.
    public static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
