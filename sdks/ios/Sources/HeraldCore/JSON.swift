import Foundation

/// Answers larger than this are not parsed (a device or a page of in-app messages is a few KB).
let maxAnswerBytes = 1 << 20

/// A JSON object from an answer body, or nil when it is empty, too large, not JSON or not an object.
func jsonObject(_ data: Data) -> [String: Any]? {
    guard !data.isEmpty, data.count <= maxAnswerBytes else { return nil }
    return (try? JSONSerialization.jsonObject(with: data, options: [])) as? [String: Any]
}

func jsonBody(_ value: [String: Any]) -> Data {
    (try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])) ?? Data("{}".utf8)
}

/// A string field; nil when absent, null or not a string.
func string(_ obj: [String: Any], _ key: String) -> String? { obj[key] as? String }

/// ISO 8601 UTC with or without fractional seconds.
func parseISODate(_ text: String) -> Date? {
    let f = ISO8601DateFormatter()
    f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let d = f.date(from: text) { return d }
    f.formatOptions = [.withInternetDateTime]
    return f.date(from: text)
}
