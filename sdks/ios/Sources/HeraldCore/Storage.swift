import Foundation

/// Keeps values in memory only (tests, or a process that must not write).
public final class InMemoryStorage: HeraldStorage {
    private var values: [String: Data] = [:]
    private let lock = NSLock()
    public init() {}
    public func data(forKey key: String) -> Data? {
        lock.lock(); defer { lock.unlock() }
        return values[key]
    }
    public func set(_ data: Data?, forKey key: String) {
        lock.lock(); defer { lock.unlock() }
        values[key] = data
    }
}

/// One file per key in a directory, written atomically. Used by tests and where there is
/// no Keychain; on iOS the glue prefers the Keychain (docs/sdk-protocol.md §3).
public final class FileStorage: HeraldStorage {
    public let directory: URL
    private let lock = NSLock()
    private let logger: HeraldLogger

    public init(directory: URL, logger: HeraldLogger = PrintLogger()) {
        self.directory = directory
        self.logger = logger
    }

    private func url(for key: String) -> URL {
        let safe = key.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-" ? String($0) : "_" }
        return directory.appendingPathComponent(safe.joined())
    }

    public func data(forKey key: String) -> Data? {
        lock.lock(); defer { lock.unlock() }
        return try? Data(contentsOf: url(for: key))
    }

    public func set(_ data: Data?, forKey key: String) {
        lock.lock(); defer { lock.unlock() }
        let file = url(for: key)
        do {
            if let data = data {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try data.write(to: file, options: .atomic)
            } else if FileManager.default.fileExists(atPath: file.path) {
                try FileManager.default.removeItem(at: file)
            }
        } catch {
            logger.log(.error, "could not write \(file.path): \(error)")
        }
    }
}
