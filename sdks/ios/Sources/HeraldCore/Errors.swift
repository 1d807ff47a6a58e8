import Foundation

/// Why a call of the library failed.
public struct HeraldError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Equatable {
        /// No answer (DNS, connect, reset, timeout) after the retries.
        case network
        /// An answer with this status (and the API's error name, when readable).
        case http(status: Int, name: String?)
        /// A 2xx answer that could not be read (truncated, not JSON, wrong shape, too large).
        case malformedAnswer
        /// There is no registered device yet (no push token registered).
        case notRegistered
        /// Syncing stopped on a configuration error (401, 403: wrong or revoked key).
        case configuration
        case invalidArgument
    }
    public var kind: Kind
    public var message: String
    public var requestId: String?

    public init(_ kind: Kind, _ message: String, requestId: String? = nil) {
        self.kind = kind
        self.message = message
        self.requestId = requestId
    }

    public var description: String {
        "HeraldError(\(kind)): \(message)" + (requestId.map { " [request \($0)]" } ?? "")
    }
}

/// Where the sync stands, as `HeraldClient.whenIdle` reports it.
public enum SyncStatus: Equatable {
    /// Everything the app set is confirmed by the server.
    case synced
    /// No push token yet: nothing to sync.
    case notRegistered
    /// Waiting for a retry's back-off.
    case waitingToRetry
    /// Gave up after 8 failed attempts; resumes at the next start or network change.
    case paused
    /// A configuration error (401, 403); resumes at the next start.
    case stopped
}
