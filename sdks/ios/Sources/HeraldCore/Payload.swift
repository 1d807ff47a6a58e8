import Foundation

/// What the library reads from an APNs payload (docs/sdk-protocol.md §7, §8): the campaign's
/// id (`herald_campaign_id` beside `aps`), the send's `action_url` and the `image_url` for a
/// Notification Service Extension.
public struct HeraldPushPayload: Equatable {
    public var campaignId: String?
    public var actionURL: String?
    public var imageURL: String?

    /// From `userInfo` (the APNs JSON as a dictionary).
    public init(userInfo: [AnyHashable: Any]) {
        campaignId = Self.nonEmpty(userInfo["herald_campaign_id"])
        actionURL = Self.nonEmpty(userInfo["action_url"])
        imageURL = Self.nonEmpty(userInfo["image_url"])
    }

    /// From the payload's JSON text; nil when it is not a JSON object.
    public init?(json: Data) {
        guard let obj = jsonObject(json) else { return nil }
        var info: [AnyHashable: Any] = [:]
        for (k, v) in obj { info[k] = v }
        self.init(userInfo: info)
    }

    /// The URL a tap opens: `action_url` when it is http or https.
    public var openableActionURL: URL? { openableURL(actionURL) }
    /// The image to attach: `image_url` when it is http or https.
    public var attachmentURL: URL? { openableURL(imageURL) }

    private static func nonEmpty(_ value: Any?) -> String? {
        guard let s = value as? String, !s.isEmpty else { return nil }
        return s
    }
}
