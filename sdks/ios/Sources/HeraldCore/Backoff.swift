import Foundation

/// Which kind of call an answer belongs to: the outcome of a 403 or 404 depends on it.
public enum CallKind: String {
    /// POST /v1/devices/register
    case register
    /// Any /v1/devices/{id} call made with the client key and the push token proof.
    case device
    /// GET /v1/apps/{app_id}/android-channels (Android only; kept for the shared table).
    case channels
}

/// What the library does with one answer (docs/sdk-protocol.md §5).
public enum Disposition: Equatable {
    /// Success.
    case done
    /// Try again after back-off; `floor` is the Retry-After wait in seconds, when readable.
    case retry(floor: TimeInterval?)
    /// Register the current token with the full desired state, then continue.
    case reregister
    /// A bug or bad input: log it and drop this change.
    case drop
    /// A configuration error: stop syncing until the next start.
    case stop
}

public enum RetryPolicy {
    public static let base: TimeInterval = 1
    public static let cap: TimeInterval = 300
    /// Failed attempts per session before giving up until the next start or network change.
    public static let maxAttempts = 8
    public static let retryAfterJitter = 0.1

    /// Network errors (status nil), 408, 429 and 5xx are worth another try.
    public static func isRetryable(_ status: Int?) -> Bool {
        guard let s = status else { return true }
        return s == 408 || s == 429 || s >= 500
    }

    /// The outcome of one answer; `status` nil is a network error or timeout.
    public static func classify(call: CallKind, status: Int?, retryAfter: String? = nil, now: Date = Date()) -> Disposition {
        guard let s = status else { return .retry(floor: nil) }
        if (200..<300).contains(s) { return .done }
        if isRetryable(s) { return .retry(floor: retryAfterSeconds(retryAfter, now: now)) }
        switch (s, call) {
        case (404, .device), (403, .device): return .reregister
        case (401, _), (403, _): return .stop
        default: return .drop
        }
    }

    /// Retry-After as seconds: integer seconds or an HTTP date; nil when absent or unreadable.
    public static func retryAfterSeconds(_ header: String?, now: Date) -> TimeInterval? {
        guard let text = header?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.allSatisfy({ $0.isASCII && $0.isNumber }) { return TimeInterval(text) }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "GMT")
            f.dateFormat = format
            if let date = f.date(from: text) { return max(0, date.timeIntervalSince(now)) }
        }
        return nil
    }

    /// The wait before retry `attempt` (0 for the first retry): full jitter
    /// `random × min(cap, base × 2^attempt)`; with a Retry-After, at least that plus 0–10 %.
    public static func delay(attempt: Int, retryAfter: TimeInterval?, random: () -> Double) -> TimeInterval {
        let exponent = min(max(attempt, 0), 30)
        let exponential = random() * min(cap, base * pow(2, Double(exponent)))
        guard let floor = retryAfter else { return exponential }
        return max(exponential, floor * (1 + random() * retryAfterJitter))
    }
}
