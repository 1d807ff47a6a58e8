import Foundation

/// An in-app message as the device-facing fetch answers it, in the device's language (else `en`).
public struct InAppMessage: Equatable {
    public var id: String
    public var language: String?
    public var title: String
    public var body: String
    public var imageURL: String?
    public var actionURL: String?
    public var priority: Int
    /// As the API sent it (ISO 8601), and parsed.
    public var endsAtText: String?
    public var endsAt: Date?

    /// The action URL when a click may open it: http or https only.
    public var openableActionURL: URL? { openableURL(actionURL) }
    public var imageURLValue: URL? { openableURL(imageURL) }
}

public enum InAppEventType: String {
    case impression, click, dismiss
}

/// What became of an event report (an in-app message event or a notification event).
public enum EventResult: Equatable {
    /// Counted (204).
    case done
    /// An impression beyond the message's maximum (409): do not show the message.
    case doNotShow
    /// The message no longer applies (404): forget it.
    case drop
    /// It failed after the retries, or it was refused; `HeraldError` says why.
    case failed(HeraldError)
}

public enum InAppParser {
    /// The messages to offer the app, in order; nil when the answer is unusable (the fetch
    /// failed). Messages that are not objects, lack a string id/title/body, or whose
    /// `ends_at` has passed are skipped.
    public static func parse(_ data: Data, now: Date) -> [InAppMessage]? {
        guard let obj = jsonObject(data), let list = obj["data"] as? [Any] else { return nil }
        var out: [InAppMessage] = []
        for case let m as [String: Any] in list {
            guard let id = m["id"] as? String, let title = m["title"] as? String, let body = m["body"] as? String else { continue }
            let endsText = m["ends_at"] as? String
            let ends = endsText.flatMap(parseISODate)
            if let ends = ends, ends <= now { continue }
            let priority = (m["priority"] as? NSNumber)?.intValue ?? 0
            out.append(InAppMessage(id: id, language: m["language"] as? String, title: title, body: body,
                                    imageURL: m["image_url"] as? String, actionURL: m["action_url"] as? String,
                                    priority: priority, endsAtText: endsText, endsAt: ends))
        }
        return out
    }
}

/// A URL that may be opened from a push or a message: absolute http or https only.
public func openableURL(_ text: String?) -> URL? {
    guard let text = text, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
          scheme == "http" || scheme == "https", url.host != nil else { return nil }
    return url
}

/// A notification of the device received (shown) or clicked (opened) (§7).
public enum NotificationEventType: String {
    case received, clicked
}
