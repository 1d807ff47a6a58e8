import Foundation

/// The device fields the library owns (docs/sdk-protocol.md §3).
public struct DeviceFields: Codable, Equatable {
    public var externalId: String?
    public var language: String?
    public var timezone: String?
    public var appVersion: String?
    public var tags: [String]
    public var optedIn: Bool

    public init(externalId: String? = nil, language: String? = nil, timezone: String? = nil,
                appVersion: String? = nil, tags: [String] = [], optedIn: Bool = true) {
        self.externalId = externalId
        self.language = language
        self.timezone = timezone
        self.appVersion = appVersion
        self.tags = tags
        self.optedIn = optedIn
    }
}

/// What the app has asked for, with where each automatic value came from.
struct DesiredState: Codable, Equatable {
    var externalId: String?
    var language: String?
    /// True once the app called setLanguage: the locale no longer overrides it at start.
    var languageSetByApp = false
    var timezone: String?
    var timezoneSetByApp = false
    var appVersion: String?
    var tags: [String] = []
    /// The app's own choice (optOut/optIn).
    var optedIn = true
    /// The OS permission was seen revoked: the device is opted out whatever the app chose.
    var permissionDenied = false
    /// A push token handed over by the OS, registered or not.
    var pushToken: String?
}

/// A device to delete after a token change (§6 step 3), with its own token as proof.
struct PendingDelete: Codable, Equatable {
    var deviceId: String
    var pushToken: String
}

/// The one record per install (§3): the registration the server confirmed and the desired values.
struct StoredState: Codable, Equatable {
    var appId: String
    var baseURL: String
    var deviceId: String?
    /// The token last registered: the client key's proof of possession.
    var pushToken: String?
    var platform = "ios"
    var confirmed: DeviceFields?
    var desired = DesiredState()
    var registeredAt: Date?
    /// Register again (404, 403, the weekly refresh, a changed locale) before anything else.
    var needsRegister = false
    var pendingDeletes: [PendingDelete] = []
    /// Values the API refused (400): left out next time (§5).
    var rejectedLanguage: String?
    var rejectedTimezone: String?
}

/// The device as the API answers it (the fields the library reads).
struct DeviceAnswer {
    var id: String
    var pushToken: String?
    var fields: DeviceFields

    /// Nil when the body is not a device (empty, truncated, huge, an array, wrong types).
    init?(_ data: Data) {
        guard let obj = jsonObject(data), let id = obj["id"] as? String, !id.isEmpty else { return nil }
        func optional(_ key: String) -> String?? {
            switch obj[key] {
            case nil, is NSNull: return .some(nil)
            case let s as String: return .some(s)
            default: return nil
            }
        }
        guard let ext = optional("external_id"), let lang = optional("language"),
              let tz = optional("timezone"), let version = optional("app_version") else { return nil }
        var tags: [String] = []
        switch obj["tags"] {
        case nil, is NSNull: break
        case let list as [Any]:
            tags = list.compactMap { $0 as? String }
            guard tags.count == list.count else { return nil }
        default: return nil
        }
        let optedIn: Bool
        switch obj["opted_in"] {
        case nil: optedIn = true
        case let b as Bool: optedIn = b
        default: return nil
        }
        self.id = id
        self.pushToken = obj["push_token"] as? String
        self.fields = DeviceFields(externalId: ext, language: lang, timezone: tz, appVersion: version, tags: tags, optedIn: optedIn)
    }
}

/// The API's error answer: `{"error", "message", "details": [{"field", "message"}]}`.
struct ErrorAnswer {
    var name: String?
    var message: String?
    var fields: [String] = []

    init(_ data: Data) {
        guard let obj = jsonObject(data) else { return }
        name = obj["error"] as? String
        message = obj["message"] as? String
        if let details = obj["details"] as? [Any] {
            for case let d as [String: Any] in details {
                if let f = d["field"] as? String { fields.append(f) }
            }
        }
    }

    /// Whether a detail names `field` ("/language", "/body/language", "language").
    func names(_ field: String) -> Bool {
        fields.contains { $0 == field || $0.hasSuffix("/" + field) }
    }
}
