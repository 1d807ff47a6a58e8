#if canImport(Security)
import Foundation
import Security
#if canImport(HeraldCore)
import HeraldCore
#endif

/// The record in the Keychain (docs/sdk-protocol.md §3): readable after first unlock (a
/// token refresh in the background must read it) and never leaving this device (no backups).
public final class KeychainStorage: HeraldStorage {
    private let service: String
    private let accessGroup: String?
    private let logger: HeraldLogger

    public init(service: String, accessGroup: String? = nil, logger: HeraldLogger = PrintLogger()) {
        self.service = service
        self.accessGroup = accessGroup
        self.logger = logger
    }

    private func query(_ key: String) -> [String: Any] {
        var q: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
        ]
        if let group = accessGroup { q[kSecAttrAccessGroup as String] = group }
        return q
    }

    public func data(forKey key: String) -> Data? {
        var q = query(key)
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var out: AnyObject?
        let status = SecItemCopyMatching(q as CFDictionary, &out)
        if status != errSecSuccess && status != errSecItemNotFound {
            logger.log(.warning, "Keychain read failed (\(status))")
        }
        return out as? Data
    }

    public func set(_ data: Data?, forKey key: String) {
        let q = query(key)
        guard let data = data else {
            SecItemDelete(q as CFDictionary)
            return
        }
        let attrs: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        var status = SecItemUpdate(q as CFDictionary, attrs as CFDictionary)
        if status == errSecItemNotFound {
            var add = q
            attrs.forEach { add[$0.key] = $0.value }
            status = SecItemAdd(add as CFDictionary, nil)
        }
        if status != errSecSuccess { logger.log(.error, "Keychain write failed (\(status))") }
    }
}
#endif
