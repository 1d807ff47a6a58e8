#if canImport(UserNotifications) && !os(macOS)
import Foundation
import UserNotifications
#if canImport(HeraldCore)
import HeraldCore
#endif

/// The base of an app's Notification Service Extension: downloads the rich push's
/// `image_url` (http/https) as an attachment and reports the push `received`. Subclass it,
/// call `Herald.configure(…, keychainAccessGroup:, sync: false)` in `init` with the app's values and
/// the Keychain group the app shares with the extension, and name the subclass as the
/// extension's NSExtensionPrincipalClass.
open class HeraldNotificationService: UNNotificationServiceExtension {
    private var contentHandler: ((UNNotificationContent) -> Void)?
    private var best: UNMutableNotificationContent?
    private let lock = NSLock()

    open override func didReceive(_ request: UNNotificationRequest,
                                  withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void) {
        let content = (request.content.mutableCopy() as? UNMutableNotificationContent) ?? UNMutableNotificationContent()
        lock.lock()
        self.contentHandler = contentHandler
        best = content
        lock.unlock()
        let payload = HeraldPushPayload(userInfo: request.content.userInfo)
        let group = DispatchGroup()
        if let campaign = payload.campaignId, let client = Herald.client {
            group.enter()
            client.reportNotification(campaignId: campaign, type: .received) { _ in group.leave() }
        }
        if let url = payload.attachmentURL {
            group.enter()
            HeraldNotificationService.downloadAttachment(url) { attachment in
                if let attachment = attachment { content.attachments = [attachment] }
                group.leave()
            }
        }
        group.notify(queue: .main) { self.finish() }
    }

    open override func serviceExtensionTimeWillExpire() {
        finish()
    }

    private func finish() {
        lock.lock()
        let handler = contentHandler, content = best
        contentHandler = nil
        lock.unlock()
        if let handler = handler, let content = content { handler(content) }
    }

    /// Downloads `url` to a temporary file with an image extension and wraps it as an attachment.
    public static func downloadAttachment(_ url: URL, completion: @escaping (UNNotificationAttachment?) -> Void) {
        let task = URLSession.shared.downloadTask(with: url) { location, response, _ in
            guard let location = location, (response as? HTTPURLResponse).map({ (200..<300).contains($0.statusCode) }) ?? true else {
                return completion(nil)
            }
            var ext = url.pathExtension.lowercased()
            if !["png", "jpg", "jpeg", "gif", "heic", "webp"].contains(ext) {
                switch response?.mimeType {
                case "image/png": ext = "png"
                case "image/gif": ext = "gif"
                default: ext = "jpg"
                }
            }
            let file = URL(fileURLWithPath: NSTemporaryDirectory())
                .appendingPathComponent("herald-\(UUID().uuidString).\(ext)")
            do {
                try FileManager.default.moveItem(at: location, to: file)
                completion(try UNNotificationAttachment(identifier: "herald-image", url: file, options: nil))
            } catch {
                completion(nil)
            }
        }
        task.resume()
    }
}
#endif
