#if canImport(UserNotifications)
import Foundation
import UserNotifications
#if canImport(HeraldCore)
import HeraldCore
#endif
#if canImport(UIKit)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

extension Herald {
    /// Asks for notification permission (by default alert, badge and sound; add
    /// `.provisional` for quiet delivery without a prompt), opts the device out when refused
    /// and in (the app's own choice permitting) when granted (§4), and registers for
    /// remote notifications when granted.
    @available(iOSApplicationExtension, unavailable)
    public static func requestAuthorization(options: UNAuthorizationOptions = [.alert, .badge, .sound],
                                            completion: ((Bool) -> Void)? = nil) {
        UNUserNotificationCenter.current().requestAuthorization(options: options) { granted, _ in
            client?.permissionChanged(granted: granted)
            DispatchQueue.main.async {
                #if canImport(UIKit) && !os(watchOS)
                if granted { registerForRemoteNotifications() }
                #endif
                completion?(granted)
            }
        }
    }

    /// Reads the current permission (e.g. revoked in Settings) and opts out or in accordingly.
    public static func refreshPermission() {
        UNUserNotificationCenter.current().getNotificationSettings { settings in
            var granted = settings.authorizationStatus == .authorized
            if #available(iOS 12.0, macOS 10.14, *), settings.authorizationStatus == .provisional { granted = true }
            #if os(iOS)
            if #available(iOS 14.0, *), settings.authorizationStatus == .ephemeral { granted = true }
            #endif
            if settings.authorizationStatus != .notDetermined { client?.permissionChanged(granted: granted) }
        }
    }

    #if canImport(UIKit) && !os(watchOS)
    @available(iOSApplicationExtension, unavailable)
    static func registerForRemoteNotifications() {
        UIApplication.shared.registerForRemoteNotifications()
    }
    #endif

    /// For an app's own `userNotificationCenter(_:willPresent:…)`: reports the push received.
    public static func handleWillPresent(_ notification: UNNotification) {
        reportNotification(userInfo: notification.request.content.userInfo, type: .received)
    }

    /// For an app's own `userNotificationCenter(_:didReceive:…)`: reports the push clicked
    /// and answers its `action_url` when it is http or https (the app opens it, or use
    /// `HeraldNotificationDelegate`, which does).
    @discardableResult
    public static func handleResponse(_ response: UNNotificationResponse) -> URL? {
        let userInfo = response.notification.request.content.userInfo
        if response.actionIdentifier != UNNotificationDismissActionIdentifier {
            reportNotification(userInfo: userInfo, type: .clicked)
        }
        return HeraldPushPayload(userInfo: userInfo).openableActionURL
    }
}

/// A ready-made `UNUserNotificationCenterDelegate`: reports `received` when a push is
/// presented in the foreground and `clicked` when the user opens one, then opens its
/// `action_url` (http/https only). Set it at launch:
/// `UNUserNotificationCenter.current().delegate = HeraldNotificationDelegate.shared`.
@available(iOSApplicationExtension, unavailable)
open class HeraldNotificationDelegate: NSObject, UNUserNotificationCenterDelegate {
    public static let shared = HeraldNotificationDelegate()

    open func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                                     withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void) {
        Herald.handleWillPresent(notification)
        if #available(iOS 14.0, macOS 11.0, *) {
            completionHandler([.banner, .list, .sound, .badge])
        } else {
            completionHandler([.alert, .sound, .badge])
        }
    }

    open func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                                     withCompletionHandler completionHandler: @escaping () -> Void) {
        if let url = Herald.handleResponse(response) {
            DispatchQueue.main.async { self.open(url) }
        }
        completionHandler()
    }

    /// Opens the push's http(s) action URL; override to route it inside the app.
    open func open(_ url: URL) {
        #if canImport(UIKit) && !os(watchOS)
        UIApplication.shared.open(url, options: [:], completionHandler: nil)
        #elseif canImport(AppKit)
        NSWorkspace.shared.open(url)
        #endif
    }
}
#endif
