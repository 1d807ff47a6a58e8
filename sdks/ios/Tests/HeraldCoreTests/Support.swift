import Foundation
import XCTest
@testable import HeraldCore

/// The shared fixtures of every client library (sdks/fixtures).
func fixture(_ name: String) throws -> [String: Any] {
    let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures").appendingPathComponent(name)
    let data = try Data(contentsOf: url)
    return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any], name)
}

func json(_ value: Any) -> Data { try! JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]) }

func bodyObject(_ request: HTTPRequest) -> [String: Any]? {
    request.body.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
}

/// JSON equality of two values from JSONSerialization.
func sameJSON(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (is NSNull, is NSNull): return true
    case let (x as [String: Any], y as [String: Any]):
        return x.count == y.count && x.allSatisfy { sameJSON($0.value, y[$0.key]) }
    case let (x as [Any], y as [Any]):
        return x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
    case let (x as String, y as String): return x == y
    case let (x as NSNumber, y as NSNumber): return x == y
    default: return false
    }
}

final class TestClock: HeraldClock {
    var date: Date
    init(_ date: Date = Date(timeIntervalSince1970: 1_795_000_000)) { self.date = date }
    func now() -> Date { date }
}

final class TestRandom: HeraldRandom {
    var value: Double
    init(_ value: Double) { self.value = value }
    func next() -> Double { value }
}

/// Records the delays asked for; runs them when told.
final class ManualScheduler: HeraldScheduler {
    private let lock = NSLock()
    private var pending: [() -> Void] = []
    private(set) var delays: [TimeInterval] = []
    func schedule(after seconds: TimeInterval, _ work: @escaping () -> Void) {
        lock.lock(); defer { lock.unlock() }
        delays.append(seconds)
        pending.append(work)
    }
    var pendingCount: Int { lock.lock(); defer { lock.unlock() }; return pending.count }
    func fireAll() {
        lock.lock(); let work = pending; pending = []; lock.unlock()
        work.forEach { $0() }
    }
}

final class SilentLogger: HeraldLogger {
    var lines: [String] = []
    private let lock = NSLock()
    func log(_ level: HeraldLogLevel, _ message: String) {
        lock.lock(); lines.append("\(level): \(message)"); lock.unlock()
    }
}

/// A transport answered by a closure, recording every request.
final class FakeTransport: HTTPTransport {
    private let lock = NSLock()
    private var _requests: [HTTPRequest] = []
    var handler: (HTTPRequest) -> Result<HTTPResponse, Error>
    init(_ handler: @escaping (HTTPRequest) -> Result<HTTPResponse, Error>) { self.handler = handler }
    var requests: [HTTPRequest] { lock.lock(); defer { lock.unlock() }; return _requests }
    func perform(_ request: HTTPRequest, completion: @escaping (Result<HTTPResponse, Error>) -> Void) {
        lock.lock(); _requests.append(request); let h = handler; lock.unlock()
        completion(h(request))
    }
}

/// A small in-memory Herald: register upsert by token, device calls with the token proof,
/// events; can be taken offline or made to answer a scripted status first.
final class FakeHerald {
    struct Device {
        var id: String
        var token: String
        var fields: [String: Any]
        var optedIn = true
    }
    let clientKey = "hk_pub_test"
    let appId = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11"
    private let lock = NSLock()
    var devices: [String: Device] = [:]
    var offline = false
    /// Answers given (in order) before the server's own, whatever the request.
    var scripted: [Result<HTTPResponse, Error>] = []
    /// Paths of the requests served, as "METHOD /path".
    var log: [String] = []
    var inFlight = 0
    var maxInFlight = 0

    lazy var transport = FakeTransport { [unowned self] in self.handle($0) }

    func device(token: String) -> Device? { lock.lock(); defer { lock.unlock() }; return devices.values.first { $0.token == token } }

    func deviceJSON(_ d: Device) -> [String: Any] {
        var out: [String: Any] = ["id": d.id, "app_id": appId, "push_token": d.token, "platform": "ios",
                                  "opted_in": d.optedIn, "invalid": false, "created_at": "2026-11-28T10:00:00.000Z",
                                  "updated_at": "2026-11-28T10:00:00.000Z"]
        for key in ["external_id", "language", "timezone", "app_version"] { out[key] = d.fields[key] ?? NSNull() }
        out["tags"] = d.fields["tags"] ?? []
        return out
    }

    static func answer(_ status: Int, _ body: Any? = nil, headers: [String: String] = [:]) -> Result<HTTPResponse, Error> {
        .success(HTTPResponse(status: status, headers: headers.merging(["X-Request-Id": "req-1"]) { a, _ in a },
                              body: body.map { json($0) } ?? Data()))
    }

    func handle(_ req: HTTPRequest) -> Result<HTTPResponse, Error> {
        lock.lock(); defer { lock.unlock() }
        inFlight += 1
        maxInFlight = max(maxInFlight, inFlight)
        defer { inFlight -= 1 }
        let path = req.url.path
        log.append("\(req.method) \(path)")
        if !scripted.isEmpty { return scripted.removeFirst() }
        if offline { return .failure(URLError(.notConnectedToInternet)) }
        guard req.headers["Authorization"] == "Bearer \(clientKey)" else { return Self.answer(401, ["error": "Unauthorized"]) }
        let body = bodyObject(req) ?? [:]
        if req.method == "POST" && path == "/v1/devices/register" {
            guard let token = body["push_token"] as? String, body["app_id"] as? String == appId else {
                return Self.answer(400, ["error": "ValidationError"])
            }
            var d = devices.values.first { $0.token == token } ?? Device(id: UUID().uuidString.lowercased(), token: token, fields: [:])
            for key in ["external_id", "language", "timezone", "app_version", "tags"] where body[key] != nil { d.fields[key] = body[key] }
            devices[d.id] = d
            return Self.answer(200, deviceJSON(d))
        }
        let parts = path.split(separator: "/").map(String.init) // v1 devices id rest…
        guard parts.count >= 3, parts[0] == "v1", parts[1] == "devices" else { return Self.answer(404, ["error": "NotFound"]) }
        guard var d = devices[parts[2]] else { return Self.answer(404, ["error": "NotFound"]) }
        guard req.headers["X-Herald-Push-Token"] == d.token else { return Self.answer(403, ["error": "Forbidden"]) }
        switch (req.method, parts.count > 3 ? parts[3] : "") {
        case ("PUT", ""):
            for (k, v) in body { d.fields[k] = v is NSNull ? nil : v }
        case ("POST", "opt-out"): d.optedIn = false
        case ("POST", "opt-in"): d.optedIn = true
        case ("DELETE", ""):
            devices[d.id] = nil
            return Self.answer(204)
        case ("POST", "notification-events"), ("POST", "in-app-messages"):
            return Self.answer(204)
        case ("GET", "in-app-messages"):
            return Self.answer(200, ["data": []])
        default: return Self.answer(404, ["error": "NotFound"])
        }
        devices[d.id] = d
        return Self.answer(200, deviceJSON(d))
    }
}

struct Harness {
    let server: FakeHerald
    let storage: HeraldStorage
    let clock: TestClock
    let random: TestRandom
    let scheduler: ManualScheduler
    let logger = SilentLogger()

    init(server: FakeHerald = FakeHerald(), storage: HeraldStorage = InMemoryStorage(), clock: TestClock = TestClock(),
         random: TestRandom = TestRandom(0.5), scheduler: ManualScheduler = ManualScheduler()) {
        self.server = server
        self.storage = storage
        self.clock = clock
        self.random = random
        self.scheduler = scheduler
    }

    static let environment = DeviceEnvironment(languageTag: "de-DE", timezone: "Europe/Berlin", appVersion: "2.4.1")

    func client(environment: DeviceEnvironment = Harness.environment, transport: HTTPTransport? = nil) -> HeraldClient {
        let deps = HeraldDependencies(storage: storage, transport: transport ?? server.transport, clock: clock, random: random,
                                      scheduler: scheduler, logger: logger)
        let config = HeraldConfiguration(appId: server.appId, clientKey: server.clientKey,
                                         baseURL: URL(string: "https://herald.example.com")!)
        return HeraldClient(configuration: config, dependencies: deps, environment: environment, callbackQueue: nil)
    }
}

extension HeraldClient {
    @discardableResult
    func idle(file: StaticString = #filePath, line: UInt = #line) -> SyncStatus? {
        let s = waitUntilIdle(timeout: 10)
        XCTAssertNotNil(s, "never became idle", file: file, line: line)
        return s
    }
}

let tokenA = String(repeating: "ab", count: 32)
let tokenB = String(repeating: "cd", count: 32)
