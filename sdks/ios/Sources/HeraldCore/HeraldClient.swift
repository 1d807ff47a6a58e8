import Foundation

/// What the library is configured with; the client key is publishable (hk_pub_…).
public struct HeraldConfiguration {
    public var appId: String
    public var clientKey: String
    /// The gateway's public origin; every path starts with /v1.
    public var baseURL: URL
    /// Attempts of a one-off call (in-app fetch, events) before it fails.
    public var maxEventAttempts: Int

    public init(appId: String, clientKey: String, baseURL: URL, maxEventAttempts: Int = 3) {
        self.appId = appId
        self.clientKey = clientKey
        self.baseURL = baseURL
        self.maxEventAttempts = maxEventAttempts
    }
}

/// What the platform reports about the device at start: the language tag, the time zone
/// and the app's version. Invalid values are left out of the registration.
public struct DeviceEnvironment: Equatable {
    public var languageTag: String?
    public var timezone: String?
    public var appVersion: String?

    public init(languageTag: String?, timezone: String?, appVersion: String?) {
        self.languageTag = languageTag
        self.timezone = timezone
        self.appVersion = appVersion
    }

    /// The preferred language, the current IANA zone and CFBundleShortVersionString of `bundle`.
    public static func current(bundle: Bundle = .main) -> DeviceEnvironment {
        DeviceEnvironment(languageTag: HeraldLocale.currentLanguageTag(),
                          timezone: TimeZone.current.identifier,
                          appVersion: bundle.infoDictionary?["CFBundleShortVersionString"] as? String)
    }
}

/// The heart of the library (docs/sdk-protocol.md): keeps the desired device state and the
/// last confirmed one durably, and syncs them one request at a time with the retry rules
/// of §5 and the token changes of §6. Thread-safe: every method may be called from any
/// thread; the work runs on a private serial queue and never blocks the caller (apart
/// from the small synchronous getters) nor throws into the app.
public final class HeraldClient {
    public static let storageKey = "herald.state.v1"
    static let weekly: TimeInterval = 7 * 24 * 3600
    static let day: TimeInterval = 24 * 3600
    /// Re-registrations (404/403) in a row without a device call succeeding before giving up.
    static let maxReregistrations = 3

    public let configuration: HeraldConfiguration
    let deps: HeraldDependencies
    let queue = DispatchQueue(label: "dev.herald.core")
    private let queueKey = DispatchSpecificKey<Bool>()
    /// Where completions of fetches and reports run (nil: on the core's queue).
    let callbackQueue: DispatchQueue?

    private var state: StoredState
    private var environment: DeviceEnvironment

    // The session: reset at each start.
    private var inFlight = false
    private var failures = 0
    private var waitingToRetry = false
    private var retryGeneration = 0
    private var paused = false
    private var stopped = false
    private var reregisteredFor403 = false
    private var reregistrations = 0
    private var idleWaiters: [(SyncStatus) -> Void] = []

    public init(configuration: HeraldConfiguration, dependencies: HeraldDependencies,
                environment: DeviceEnvironment = .current(), callbackQueue: DispatchQueue? = .global(qos: .utility)) {
        self.configuration = configuration
        self.deps = dependencies
        self.environment = environment
        self.callbackQueue = callbackQueue
        let base = configuration.baseURL.absoluteString
        if let data = dependencies.storage.data(forKey: Self.storageKey),
           let stored = try? JSONDecoder().decode(StoredState.self, from: data),
           stored.appId == configuration.appId, stored.baseURL == base {
            state = stored
        } else {
            state = StoredState(appId: configuration.appId, baseURL: base)
        }
        queue.setSpecific(key: queueKey, value: true)
    }

    // MARK: - What the app calls

    /// The app started (or configured the library): resets the session's retry budget and
    /// stop, takes the current language, zone and app version, registers again when they
    /// changed or the last registration is a week old (plus up to a day of jitter), then syncs.
    public func start(environment: DeviceEnvironment? = nil) {
        queue.async {
            if let env = environment { self.environment = env }
            self.resetSession()
            self.applyEnvironment()
            if let at = self.state.registeredAt,
               self.deps.clock.now().timeIntervalSince(at) > Self.weekly + self.deps.random.next() * Self.day {
                self.state.needsRegister = true
            }
            self.persist()
            self.kick()
        }
    }

    /// Connectivity came back: a paused or waiting sync tries again now, with a fresh budget.
    public func networkChanged() {
        queue.async {
            guard !self.stopped else { return }
            self.failures = 0
            self.paused = false
            self.cancelRetry()
            self.kick()
        }
    }

    /// The push token the OS handed over, as registered (iOS: lowercase hex of the Data).
    public func setPushToken(_ token: String) {
        change { $0.pushToken = token }
    }

    /// The user's id in the app; nil at logout.
    public func setExternalId(_ id: String?) {
        change { $0.externalId = id }
    }

    public func setTags(_ tags: [String]) {
        change { $0.tags = Self.unique(tags) }
    }

    public func addTags(_ tags: [String]) {
        change { $0.tags = Self.unique($0.tags + tags) }
    }

    public func removeTags(_ tags: [String]) {
        let gone = Set(tags)
        change { $0.tags = $0.tags.filter { !gone.contains($0) } }
    }

    /// An ISO 639-1 code or a BCP 47 tag ("pt-BR" is stored as "pt"); nil clears it.
    /// Answers false (and changes nothing) for a tag that is not ISO 639-1.
    @discardableResult
    public func setLanguage(_ tag: String?) -> Bool {
        let code = tag.flatMap(HeraldLocale.language(of:))
        if tag != nil && code == nil { return false }
        change {
            $0.language = code
            $0.languageSetByApp = true
        }
        return true
    }

    /// An IANA zone name; nil clears it. Answers false for anything else.
    @discardableResult
    public func setTimezone(_ zone: String?) -> Bool {
        let name = zone.flatMap(HeraldLocale.timezone(of:))
        if zone != nil && name == nil { return false }
        change {
            $0.timezone = name
            $0.timezoneSetByApp = true
        }
        return true
    }

    public func optOut() { change { $0.optedIn = false } }
    public func optIn() { change { $0.optedIn = true } }

    /// The OS notification permission as last seen: revoked opts the device out, granted
    /// lets the app's own choice apply again (§4).
    public func permissionChanged(granted: Bool) {
        change { $0.permissionDenied = !granted }
    }

    /// Deletes the device on the server and forgets the token (app reset, account deleted);
    /// the app's settings stay for a later registration.
    public func deleteDevice() {
        queue.async {
            if let id = self.state.deviceId, let token = self.state.pushToken {
                self.queueDelete(PendingDelete(deviceId: id, pushToken: token))
            }
            self.state.deviceId = nil
            self.state.pushToken = nil
            self.state.confirmed = nil
            self.state.registeredAt = nil
            self.state.desired.pushToken = nil
            self.persist()
            self.kick()
        }
    }

    // MARK: - What the app reads

    public var deviceId: String? { read { self.state.deviceId } }
    /// The token last registered (the proof of possession).
    public var registeredPushToken: String? { read { self.state.pushToken } }
    public var confirmedFields: DeviceFields? { read { self.state.confirmed } }
    public var desiredFields: DeviceFields { read { self.wanted() } }
    public var status: SyncStatus { read { self.currentStatus() } }

    /// Calls `completion` (on the core's queue) once nothing is in flight and nothing more
    /// can be sent now: all confirmed, or waiting for a retry, or paused or stopped.
    public func whenIdle(_ completion: @escaping (SyncStatus) -> Void) {
        queue.async {
            if self.inFlight { self.idleWaiters.append(completion) } else { completion(self.currentStatus()) }
        }
    }

    /// Blocks the calling thread (never the core's queue) until idle; nil on timeout.
    public func waitUntilIdle(timeout: TimeInterval) -> SyncStatus? {
        let done = DispatchSemaphore(value: 0)
        var result: SyncStatus?
        let lock = NSLock()
        whenIdle { status in
            lock.lock(); result = status; lock.unlock()
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        lock.lock(); defer { lock.unlock() }
        return result
    }

    // MARK: - Notification events and in-app messages (§7)

    /// Reports a notification of this device received or clicked; a retry is always safe.
    public func reportNotification(campaignId: String, type: NotificationEventType,
                                   completion: ((EventResult) -> Void)? = nil) {
        let body: [String: Any] = ["campaign_id": campaignId, "type": type.rawValue]
        oneOff("POST", "/notification-events", body: body) { result in
            completion?(self.eventResult(result, impression: false))
        }
    }

    /// The in-app messages that apply now, in the device's language (else `en`), highest
    /// priority first. A malformed answer is a failure (fetch again later), never a crash.
    public func fetchInAppMessages(completion: @escaping (Result<[InAppMessage], HeraldError>) -> Void) {
        oneOff("GET", "/in-app-messages", body: nil) { result in
            switch result {
            case .failure(let error): completion(.failure(error))
            case .success(let response):
                if let messages = InAppParser.parse(response.body, now: self.deps.clock.now()) {
                    completion(.success(messages))
                } else {
                    self.deps.logger.log(.warning, "unreadable in-app messages answer (request \(response.header("x-request-id") ?? "?"))")
                    completion(.failure(HeraldError(.malformedAnswer, "unreadable in-app messages answer",
                                                    requestId: response.header("x-request-id"))))
                }
            }
        }
    }

    /// Reports what the user did with an in-app message. An impression answered
    /// `.doNotShow` must not be shown; `.drop` means the message no longer applies.
    public func reportInAppEvent(messageId: String, type: InAppEventType, completion: ((EventResult) -> Void)? = nil) {
        let path = "/in-app-messages/\(Self.escape(messageId))/events"
        oneOff("POST", path, body: ["type": type.rawValue]) { result in
            completion?(self.eventResult(result, impression: type == .impression))
        }
    }

    // MARK: - The register body (§4)

    /// The body of POST /v1/devices/register: null fields are left out, tags always sent.
    public static func registerBody(appId: String, pushToken: String, platform: String = "ios",
                                    fields: DeviceFields) -> [String: Any] {
        var body: [String: Any] = ["app_id": appId, "push_token": pushToken, "platform": platform, "tags": fields.tags]
        if let v = fields.externalId { body["external_id"] = v }
        if let v = fields.language { body["language"] = v }
        if let v = fields.timezone { body["timezone"] = v }
        if let v = fields.appVersion { body["app_version"] = v }
        return body
    }

    // MARK: - The sync

    private enum Action {
        case register(token: String, body: [String: Any])
        case update(body: [String: Any])
        case opt(optIn: Bool)
        case delete(PendingDelete)

        var call: CallKind {
            if case .register = self { return .register }
            return .device
        }
    }

    private func read<T>(_ body: () -> T) -> T {
        DispatchQueue.getSpecific(key: queueKey) == true ? body() : queue.sync(execute: body)
    }

    private func change(_ mutate: @escaping (inout DesiredState) -> Void) {
        queue.async {
            mutate(&self.state.desired)
            self.persist()
            self.kick()
        }
    }

    private func resetSession() {
        failures = 0
        paused = false
        stopped = false
        reregisteredFor403 = false
        reregistrations = 0
        cancelRetry()
    }

    private func cancelRetry() {
        retryGeneration += 1
        waitingToRetry = false
    }

    /// Takes the platform's language, zone and version (unless the app set them); a change
    /// from the confirmed record is a reason to register again (§4).
    private func applyEnvironment() {
        var d = state.desired
        if !d.languageSetByApp { d.language = HeraldLocale.language(of: environment.languageTag) }
        if !d.timezoneSetByApp { d.timezone = HeraldLocale.timezone(of: environment.timezone) }
        d.appVersion = environment.appVersion.flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
        state.desired = d
        if let have = state.confirmed {
            let want = wanted()
            if languageDiffers(want, have) || timezoneDiffers(want, have) || want.appVersion != have.appVersion {
                state.needsRegister = true
            }
        }
    }

    /// The device fields the server should have, without values it refused.
    private func wanted() -> DeviceFields {
        let d = state.desired
        return DeviceFields(
            externalId: d.externalId,
            language: d.language == state.rejectedLanguage ? nil : d.language,
            timezone: d.timezone == state.rejectedTimezone ? nil : d.timezone,
            appVersion: d.appVersion,
            tags: d.tags,
            optedIn: d.optedIn && !d.permissionDenied)
    }

    /// A language the platform reports but the API refuses is left out, not cleared: only a
    /// language the app set (or cleared) itself, or a valid one, is sent.
    private func languageDiffers(_ want: DeviceFields, _ have: DeviceFields) -> Bool {
        want.language != have.language && (want.language != nil || state.desired.languageSetByApp)
    }

    private func timezoneDiffers(_ want: DeviceFields, _ have: DeviceFields) -> Bool {
        want.timezone != have.timezone && (want.timezone != nil || state.desired.timezoneSetByApp)
    }

    private func nextAction() -> Action? {
        guard let token = state.desired.pushToken else {
            return state.pendingDeletes.first.map(Action.delete)
        }
        let want = wanted()
        guard let have = state.confirmed, state.deviceId != nil, state.pushToken == token, !state.needsRegister else {
            return .register(token: token, body: Self.registerBody(appId: configuration.appId, pushToken: token, fields: want))
        }
        if want.optedIn != have.optedIn { return .opt(optIn: want.optedIn) }
        var body: [String: Any] = [:]
        if want.externalId != have.externalId { body["external_id"] = Self.orNull(want.externalId) }
        if languageDiffers(want, have) { body["language"] = Self.orNull(want.language) }
        if timezoneDiffers(want, have) { body["timezone"] = Self.orNull(want.timezone) }
        if want.appVersion != have.appVersion { body["app_version"] = Self.orNull(want.appVersion) }
        if !Self.sameTags(want.tags, have.tags) { body["tags"] = want.tags }
        if !body.isEmpty { return .update(body: body) }
        return state.pendingDeletes.first.map(Action.delete)
    }

    private func currentStatus() -> SyncStatus {
        if stopped { return .stopped }
        if paused { return .paused }
        if waitingToRetry { return .waitingToRetry }
        if state.desired.pushToken == nil || state.deviceId == nil { return .notRegistered }
        return .synced
    }

    /// Sends the next difference unless a request is in flight or the sync waits.
    private func kick() {
        guard !inFlight else { return }
        if !stopped, !paused, !waitingToRetry, let action = nextAction() {
            send(action)
            return
        }
        let waiters = idleWaiters
        idleWaiters = []
        let status = currentStatus()
        waiters.forEach { $0(status) }
    }

    private func send(_ action: Action) {
        inFlight = true
        let request: HTTPRequest
        switch action {
        case .register(_, let body):
            request = makeRequest("POST", "/devices/register", body: body, pushToken: nil)
        case .update(let body):
            request = makeRequest("PUT", devicePath(state.deviceId!), body: body, pushToken: state.pushToken)
        case .opt(let optIn):
            request = makeRequest("POST", devicePath(state.deviceId!) + (optIn ? "/opt-in" : "/opt-out"), body: nil, pushToken: state.pushToken)
        case .delete(let d):
            request = makeRequest("DELETE", devicePath(d.deviceId), body: nil, pushToken: d.pushToken)
        }
        perform(request) { result in
            self.inFlight = false
            self.handle(action, request, result)
            self.kick()
        }
    }

    private func handle(_ action: Action, _ request: HTTPRequest, _ result: Result<HTTPResponse, Error>) {
        let response = try? result.get()
        var disposition = RetryPolicy.classify(call: action.call, status: response?.status,
                                               retryAfter: response?.header("retry-after"), now: deps.clock.now())
        let requestId = response?.header("x-request-id") ?? request.headers["X-Request-Id"] ?? "?"
        var device: DeviceAnswer?
        if disposition == .done, let response = response {
            if case .delete = action {} else {
                device = DeviceAnswer(response.body)
                if device == nil {
                    // A 2xx we cannot read (truncated, huge, not a device): try again later.
                    deps.logger.log(.warning, "\(request.method) \(request.url.path): unreadable answer (\(response.body.count) bytes, request \(requestId))")
                    disposition = .retry(floor: nil)
                }
            }
        }
        switch disposition {
        case .done:
            failures = 0
            succeeded(action, device)
        case .retry(let floor):
            failures += 1
            if response == nil, case .failure(let error) = result {
                deps.logger.log(.info, "\(request.method) \(request.url.path): no answer (\(error.localizedDescription))")
            } else if let r = response, !(200..<300).contains(r.status) {
                deps.logger.log(.info, "\(request.method) \(request.url.path): \(r.status) (request \(requestId))")
            }
            if failures >= RetryPolicy.maxAttempts {
                paused = true
                deps.logger.log(.warning, "sync paused after \(failures) failed attempts; resumes at the next start or network change")
            } else {
                scheduleRetry(RetryPolicy.delay(attempt: failures - 1, retryAfter: floor, random: deps.random.next))
            }
        case .reregister:
            let status = response?.status ?? 0
            if case .delete(let d) = action {
                // 404: already gone (success); 403: that token is no longer this device's: nothing to delete.
                if status == 403 { deps.logger.log(.info, "old device \(d.deviceId) not deleted (403, request \(requestId))") }
                dropDelete(d)
            } else if status == 403 && reregisteredFor403 {
                stop("a second 403 after registering again (request \(requestId)): the client key does not fit this app")
            } else if reregistrations >= Self.maxReregistrations {
                stop("\(status) again after \(reregistrations) registrations (request \(requestId))")
            } else {
                if status == 403 { reregisteredFor403 = true }
                reregistrations += 1
                deps.logger.log(.info, "\(request.method) \(request.url.path): \(status), registering again (request \(requestId))")
                state.needsRegister = true
                persist()
            }
        case .stop:
            stop("\(request.method) \(request.url.path): \(response?.status ?? 0) \(ErrorAnswer(response?.body ?? Data()).name ?? "") (request \(requestId)): wrong or revoked client key?")
        case .drop:
            let error = ErrorAnswer(response?.body ?? Data())
            deps.logger.log(.error, "\(request.method) \(request.url.path): \(response?.status ?? 0) \(error.name ?? "") \(error.message ?? "") fields \(error.fields) (request \(requestId)); change dropped")
            dropped(action, error)
        }
    }

    private func stop(_ why: String) {
        stopped = true
        deps.logger.log(.error, "sync stopped until the next start: \(why)")
    }

    private func succeeded(_ action: Action, _ device: DeviceAnswer?) {
        switch action {
        case .register(let token, let body):
            guard let device = device else { return }
            let oldId = state.deviceId, oldToken = state.pushToken
            state.deviceId = device.id
            state.pushToken = token
            state.confirmed = Self.confirmed(device.fields, sent: body)
            state.registeredAt = deps.clock.now()
            state.needsRegister = false
            state.pendingDeletes.removeAll { $0.deviceId == device.id }
            if let oldId = oldId, let oldToken = oldToken, oldToken != token, oldId != device.id {
                queueDelete(PendingDelete(deviceId: oldId, pushToken: oldToken))
            }
        case .update(let body):
            guard let device = device else { return }
            deviceCallSucceeded()
            state.confirmed = Self.confirmed(device.fields, sent: body)
        case .opt(let optIn):
            guard let device = device else { return }
            deviceCallSucceeded()
            var fields = device.fields
            fields.optedIn = optIn
            state.confirmed = fields
        case .delete(let d):
            dropDelete(d)
        }
        persist()
    }

    private func deviceCallSucceeded() {
        reregisteredFor403 = false
        reregistrations = 0
    }

    /// The answer's fields, with what was sent taken as confirmed for the fields sent (the
    /// server accepted them; a normalisation must not make the sync send them forever).
    private static func confirmed(_ fields: DeviceFields, sent body: [String: Any]) -> DeviceFields {
        var f = fields
        if body.keys.contains("external_id") { f.externalId = body["external_id"] as? String }
        if body.keys.contains("language") { f.language = body["language"] as? String }
        if body.keys.contains("timezone") { f.timezone = body["timezone"] as? String }
        if body.keys.contains("app_version") { f.appVersion = body["app_version"] as? String }
        if let tags = body["tags"] as? [String] { f.tags = tags }
        return f
    }

    /// A refused change (400, 409, 413, 415, 422, other 4xx) is dropped: the desired values
    /// go back to the confirmed ones, and a refused language or zone is left out from now on.
    private func dropped(_ action: Action, _ error: ErrorAnswer) {
        let have = state.confirmed
        switch action {
        case .register(let token, let body):
            var fixed = false
            if error.names("language"), let v = body["language"] as? String { state.rejectedLanguage = v; fixed = true }
            if error.names("timezone"), let v = body["timezone"] as? String { state.rejectedTimezone = v; fixed = true }
            if error.names("external_id"), body["external_id"] != nil { state.desired.externalId = have?.externalId; fixed = true }
            if error.names("app_version"), body["app_version"] != nil { state.desired.appVersion = nil; fixed = true }
            if error.names("tags") || error.fields.contains(where: { $0.contains("/tags/") }) {
                state.desired.tags = have?.tags ?? []
                fixed = true
            }
            let next = Self.registerBody(appId: configuration.appId, pushToken: token, fields: wanted())
            if fixed && jsonBody(next) == jsonBody(body) { fixed = false }
            if !fixed {
                // Nothing we can leave out: drop this registration (a refused token is not registered).
                if state.pushToken != token { state.desired.pushToken = state.pushToken }
                state.needsRegister = false
            }
        case .update(let body):
            let only = body.count == 1
            if let v = body["language"] as? String, error.names("language") || only { state.rejectedLanguage = v }
            if let v = body["timezone"] as? String, error.names("timezone") || only { state.rejectedTimezone = v }
            if body["external_id"] != nil { state.desired.externalId = have?.externalId }
            if body["language"] != nil { state.desired.language = have?.language }
            if body["timezone"] != nil { state.desired.timezone = have?.timezone }
            if body["app_version"] != nil { state.desired.appVersion = have?.appVersion }
            if body["tags"] != nil { state.desired.tags = have?.tags ?? [] }
        case .opt:
            if let have = have {
                state.desired.optedIn = have.optedIn
                state.desired.permissionDenied = false
            }
        case .delete(let d):
            dropDelete(d)
        }
        persist()
    }

    private func queueDelete(_ d: PendingDelete) {
        if !state.pendingDeletes.contains(d) { state.pendingDeletes.append(d) }
    }

    private func dropDelete(_ d: PendingDelete) {
        state.pendingDeletes.removeAll { $0 == d }
        persist()
    }

    private func scheduleRetry(_ delay: TimeInterval) {
        waitingToRetry = true
        retryGeneration += 1
        let generation = retryGeneration
        deps.logger.log(.debug, "retrying in \(delay) s (attempt \(failures + 1))")
        deps.scheduler.schedule(after: delay) { [weak self] in
            guard let self = self else { return }
            self.queue.async {
                guard generation == self.retryGeneration, self.waitingToRetry else { return }
                self.waitingToRetry = false
                self.kick()
            }
        }
    }

    private func persist() {
        do {
            deps.storage.set(try JSONEncoder().encode(state), forKey: Self.storageKey)
        } catch {
            deps.logger.log(.error, "could not encode the stored state: \(error)")
        }
    }

    // MARK: - HTTP

    private func devicePath(_ id: String) -> String { "/devices/\(Self.escape(id))" }

    private func makeRequest(_ method: String, _ path: String, body: [String: Any]?, pushToken: String?) -> HTTPRequest {
        var base = configuration.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let url = URL(string: base + "/v1" + path) ?? configuration.baseURL
        var headers = [
            "Authorization": "Bearer \(configuration.clientKey)",
            "Accept": "application/json",
            "X-Request-Id": UUID().uuidString.lowercased(),
        ]
        if let token = pushToken { headers["X-Herald-Push-Token"] = token }
        var data: Data?
        if let body = body {
            headers["Content-Type"] = "application/json"
            data = jsonBody(body)
        }
        return HTTPRequest(method: method, url: url, headers: headers, body: data)
    }

    /// Sends through the transport; the completion runs once, on the core's queue.
    private func perform(_ request: HTTPRequest, _ completion: @escaping (Result<HTTPResponse, Error>) -> Void) {
        let once = NSLock()
        var called = false
        deps.transport.perform(request) { result in
            once.lock()
            let first = !called
            called = true
            once.unlock()
            guard first else { return }
            self.queue.async { completion(result) }
        }
    }

    /// A call outside the sync (events, in-app fetch) with the device's token proof,
    /// retried with the back-off of §5 up to `maxEventAttempts`. Answers a response
    /// (any status that is not retried) or an error.
    private func oneOff(_ method: String, _ pathInDevice: String, body: [String: Any]?,
                        completion: @escaping (Result<HTTPResponse, HeraldError>) -> Void) {
        queue.async {
            guard let id = self.state.deviceId, let token = self.state.pushToken else {
                self.deliver { completion(.failure(HeraldError(.notRegistered, "no device registered yet"))) }
                return
            }
            let request = self.makeRequest(method, self.devicePath(id) + pathInDevice, body: body, pushToken: token)
            self.attempt(request, number: 0, completion: completion)
        }
    }

    private func attempt(_ request: HTTPRequest, number: Int, completion: @escaping (Result<HTTPResponse, HeraldError>) -> Void) {
        perform(request) { result in
            let response = try? result.get()
            let disposition = RetryPolicy.classify(call: .device, status: response?.status,
                                                   retryAfter: response?.header("retry-after"), now: self.deps.clock.now())
            if case .retry(let floor) = disposition, number + 1 < self.configuration.maxEventAttempts {
                let delay = RetryPolicy.delay(attempt: number, retryAfter: floor, random: self.deps.random.next)
                self.deps.scheduler.schedule(after: delay) {
                    self.queue.async { self.attempt(request, number: number + 1, completion: completion) }
                }
                return
            }
            if let r = response, r.status == 403, self.state.pushToken == request.headers["X-Herald-Push-Token"] {
                // The stored token is not the device's: register it again (§5).
                self.state.needsRegister = true
                self.persist()
                self.kick()
            }
            if let r = response {
                self.deliver { completion(.success(r)) }
            } else {
                self.deliver { completion(.failure(HeraldError(.network, "Herald could not be reached"))) }
            }
        }
    }

    private func eventResult(_ result: Result<HTTPResponse, HeraldError>, impression: Bool) -> EventResult {
        switch result {
        case .failure(let error): return .failed(error)
        case .success(let r):
            if (200..<300).contains(r.status) { return .done }
            if r.status == 409 && impression { return .doNotShow }
            let error = ErrorAnswer(r.body)
            let failure = HeraldError(.http(status: r.status, name: error.name), error.message ?? "HTTP \(r.status)",
                                      requestId: r.header("x-request-id"))
            switch RetryPolicy.classify(call: .device, status: r.status) {
            // 404: the campaign or message no longer applies; other 4xx: refused for good.
            case .drop: return .drop
            case .reregister: return r.status == 404 ? .drop : .failed(failure)
            default: return .failed(failure)
            }
        }
    }

    private func deliver(_ work: @escaping () -> Void) {
        if let q = callbackQueue { q.async { work() } } else { work() }
    }

    // MARK: - Helpers

    /// The value, or JSON null (an Optional assigned into a dictionary would remove the key).
    static func orNull(_ value: String?) -> Any {
        if let v = value { return v }
        return NSNull()
    }

    static func unique(_ tags: [String]) -> [String] {
        var seen = Set<String>()
        return tags.filter { seen.insert($0).inserted }
    }

    static func sameTags(_ a: [String], _ b: [String]) -> Bool {
        a == b || (a.count == b.count && Set(a) == Set(b))
    }

    static func escape(_ segment: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return segment.addingPercentEncoding(withAllowedCharacters: allowed) ?? segment
    }
}
