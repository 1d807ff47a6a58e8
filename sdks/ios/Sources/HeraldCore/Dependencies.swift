import Foundation

/// Durable key-value storage for the library's one record (docs/sdk-protocol.md §3).
/// The app glue uses the Keychain; the core ships an in-memory and a file-backed store.
public protocol HeraldStorage: AnyObject {
    func data(forKey key: String) -> Data?
    /// Stores `data` under `key`; nil removes it. Failures are the store's to log; never throws.
    func set(_ data: Data?, forKey key: String)
}

/// The current time (injectable for tests).
public protocol HeraldClock {
    func now() -> Date
}

/// Uniform random numbers in [0, 1) (injectable for tests).
public protocol HeraldRandom {
    func next() -> Double
}

/// Runs work after a delay (a retry's back-off). The work hops back onto the core's queue itself.
public protocol HeraldScheduler {
    func schedule(after seconds: TimeInterval, _ work: @escaping () -> Void)
}

public enum HeraldLogLevel: Int, Comparable {
    case debug, info, warning, error
    public static func < (a: HeraldLogLevel, b: HeraldLogLevel) -> Bool { a.rawValue < b.rawValue }
}

public protocol HeraldLogger {
    func log(_ level: HeraldLogLevel, _ message: String)
}

public struct SystemClock: HeraldClock {
    public init() {}
    public func now() -> Date { Date() }
}

public struct SystemRandom: HeraldRandom {
    public init() {}
    public func next() -> Double { Double.random(in: 0..<1) }
}

public struct DispatchScheduler: HeraldScheduler {
    let queue: DispatchQueue
    public init(queue: DispatchQueue = .global(qos: .utility)) { self.queue = queue }
    public func schedule(after seconds: TimeInterval, _ work: @escaping () -> Void) {
        queue.asyncAfter(deadline: .now() + max(0, seconds), execute: DispatchWorkItem(block: work))
    }
}

/// Logs to standard error from `minimum` up (the glue may route to os_log instead).
public struct PrintLogger: HeraldLogger {
    public var minimum: HeraldLogLevel
    public init(minimum: HeraldLogLevel = .warning) { self.minimum = minimum }
    public func log(_ level: HeraldLogLevel, _ message: String) {
        guard level >= minimum else { return }
        FileHandle.standardError.write(Data("[Herald] \(message)\n".utf8))
    }
}

/// Everything the core talks to, replaceable one by one.
public struct HeraldDependencies {
    public var storage: HeraldStorage
    public var transport: HTTPTransport
    public var clock: HeraldClock
    public var random: HeraldRandom
    public var scheduler: HeraldScheduler
    public var logger: HeraldLogger

    public init(
        storage: HeraldStorage,
        transport: HTTPTransport = URLSessionTransport(),
        clock: HeraldClock = SystemClock(),
        random: HeraldRandom = SystemRandom(),
        scheduler: HeraldScheduler = DispatchScheduler(),
        logger: HeraldLogger = PrintLogger()
    ) {
        self.storage = storage
        self.transport = transport
        self.clock = clock
        self.random = random
        self.scheduler = scheduler
        self.logger = logger
    }
}
