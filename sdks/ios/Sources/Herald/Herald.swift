import Foundation
#if canImport(HeraldCore)
import HeraldCore
#endif
#if canImport(UIKit)
import UIKit
#endif
#if canImport(Network)
import Network
#endif

/// Herald in an iOS app (docs/sdk-protocol.md). Configure it once at launch with the app's
/// id and its client key, hand it the APNs token, and set the user's fields; the library
/// keeps them in sync with the server (in the Keychain, retried with back-off, carried to
/// a new token). Every method returns at once and never throws into the app.
public enum Herald {
    private static let lock = NSLock()
    private static var current: HeraldClient?
    private static var observers: [Any] = []

    /// The configured core (nil before `configure`).
    public static var client: HeraldClient? {
        lock.lock(); defer { lock.unlock() }
        return current
    }

    /// Configures the library and resumes what is pending. `keychainAccessGroup` shares the
    /// record with a Notification Service Extension (same group in both; the extension
    /// passes `sync: false`, it only reports events). A server key is refused: it would give
    /// every user of the app the power to send pushes.
    public static func configure(appId: String, clientKey: String, baseURL: URL,
                                 keychainAccessGroup: String? = nil, logLevel: HeraldLogLevel = .warning,
                                 sync: Bool = true) {
        let logger = PrintLogger(minimum: logLevel)
        guard clientKey.hasPrefix("hk_pub_") else {
            logger.log(.error, "Herald.configure needs a client key (hk_pub_…), never a server key; not configured")
            return
        }
        let deps = HeraldDependencies(storage: defaultStorage(accessGroup: keychainAccessGroup, logger: logger), logger: logger)
        let client = HeraldClient(configuration: HeraldConfiguration(appId: appId, clientKey: clientKey, baseURL: baseURL),
                                  dependencies: deps, environment: .current(), callbackQueue: .main)
        lock.lock()
        current = client
        lock.unlock()
        guard sync else { return }
        client.start()
        observeLifecycle()
    }

    /// The APNs device token from `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`.
    public static func setPushToken(_ token: Data) {
        withClient { $0.setPushToken(heraldHexToken(token)) }
    }

    /// The user's id in your system; nil at logout.
    public static func setExternalId(_ externalId: String?) { withClient { $0.setExternalId(externalId) } }
    public static func addTags(_ tags: [String]) { withClient { $0.addTags(tags) } }
    public static func removeTags(_ tags: [String]) { withClient { $0.removeTags(tags) } }
    public static func setTags(_ tags: [String]) { withClient { $0.setTags(tags) } }
    /// An ISO 639-1 code or BCP 47 tag; false (nothing changed) when it is not one.
    @discardableResult
    public static func setLanguage(_ language: String?) -> Bool { client?.setLanguage(language) ?? false }
    public static func optOut() { withClient { $0.optOut() } }
    public static func optIn() { withClient { $0.optIn() } }
    /// Deletes the device on the server (app reset, account deleted); at logout prefer setExternalId(nil).
    public static func deleteDevice() { withClient { $0.deleteDevice() } }

    /// The device id Herald gave this install; nil until registered.
    public static var deviceId: String? { client?.deviceId }

    /// The in-app messages due now (completion on the main queue).
    public static func fetchInAppMessages(_ completion: @escaping (Result<[InAppMessage], HeraldError>) -> Void) {
        guard let client = client else {
            return DispatchQueue.main.async { completion(.failure(HeraldError(.notRegistered, "Herald.configure first"))) }
        }
        client.fetchInAppMessages(completion: completion)
    }

    /// Report `impression` before showing (`.doNotShow`: don't), `click` on a tap, `dismiss` on close.
    public static func reportInAppEvent(_ type: InAppEventType, messageId: String, completion: ((EventResult) -> Void)? = nil) {
        guard let client = client else { return }
        client.reportInAppEvent(messageId: messageId, type: type, completion: completion)
    }

    /// Reports a push received or opened, from its `userInfo` (needs `herald_campaign_id`).
    public static func reportNotification(userInfo: [AnyHashable: Any], type: NotificationEventType,
                                          completion: ((EventResult) -> Void)? = nil) {
        guard let client = client, let campaign = HeraldPushPayload(userInfo: userInfo).campaignId else { return }
        client.reportNotification(campaignId: campaign, type: type, completion: completion)
    }

    private static func withClient(_ body: (HeraldClient) -> Void) {
        if let c = client { body(c) } else { PrintLogger().log(.warning, "call Herald.configure first") }
    }

    static func defaultStorage(accessGroup: String?, logger: HeraldLogger) -> HeraldStorage {
        #if canImport(Security)
        return KeychainStorage(service: "dev.herald.sdk", accessGroup: accessGroup, logger: logger)
        #else
        let dir = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSTemporaryDirectory())
        return FileStorage(directory: dir.appendingPathComponent("Herald", isDirectory: true), logger: logger)
        #endif
    }

    /// Foreground: a new session (language, zone, permission, weekly refresh); connectivity: retry now.
    private static func observeLifecycle() {
        lock.lock(); defer { lock.unlock() }
        guard observers.isEmpty else { return }
        #if canImport(UIKit) && !os(watchOS)
        observers.append(NotificationCenter.default.addObserver(
            forName: UIApplication.willEnterForegroundNotification, object: nil, queue: nil) { _ in
                Herald.client?.start(environment: .current())
                Herald.refreshPermission()
            })
        #endif
        #if canImport(Network)
        if #available(iOS 13.0, macOS 10.15, *) {
            let monitor = NWPathMonitor()
            monitor.pathUpdateHandler = { path in
                if path.status == .satisfied { Herald.client?.networkChanged() }
            }
            monitor.start(queue: DispatchQueue(label: "dev.herald.network"))
            observers.append(monitor)
        }
        #endif
        observers.append(0)
    }

    #if !canImport(UserNotifications)
    /// Without UserNotifications there is no permission to read.
    public static func refreshPermission() {}
    #endif
}
