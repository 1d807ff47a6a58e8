import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import HeraldCore

/// The Herald the lead's harness (or test/support/native-live.ts) describes in HERALD_LIVE_*.
struct LiveEnv {
    let baseURL: URL
    let appId: String
    let clientKey: String
    let serverKey: String
    let simAdmin: URL
    let apnsTopic: String

    static func load() throws -> LiveEnv {
        let env = ProcessInfo.processInfo.environment
        guard let base = env["HERALD_LIVE_BASE_URL"], !base.isEmpty else {
            throw XCTSkip("HERALD_LIVE_BASE_URL is not set: no Herald to test against")
        }
        func need(_ name: String) throws -> String {
            guard let v = env[name], !v.isEmpty else { throw NSError(domain: "live", code: 1, userInfo: [NSLocalizedDescriptionKey: "\(name) missing"]) }
            return v
        }
        return LiveEnv(baseURL: try XCTUnwrap(URL(string: base)), appId: try need("HERALD_LIVE_APP_ID"),
                       clientKey: try need("HERALD_LIVE_CLIENT_KEY"), serverKey: try need("HERALD_LIVE_SERVER_KEY"),
                       simAdmin: try XCTUnwrap(URL(string: try need("HERALD_LIVE_SIM_ADMIN_URL"))),
                       apnsTopic: try need("HERALD_LIVE_APNS_TOPIC"))
    }
}

struct Answer {
    let status: Int
    let json: [String: Any]
    let text: String
}

/// Synchronous HTTP for the suite's own setup and checks (never used by the library).
func call(_ method: String, _ url: URL, key: String? = nil, body: Any? = nil) throws -> Answer {
    var req = URLRequest(url: url, timeoutInterval: 30)
    req.httpMethod = method
    if let key = key { req.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
    if let body = body {
        req.httpBody = try JSONSerialization.data(withJSONObject: body)
        req.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    final class Box { var result: (Data?, URLResponse?, Error?) = (nil, nil, nil) }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: req) { d, r, e in box.result = (d, r, e); done.signal() }.resume()
    done.wait()
    let result = box.result
    if let e = result.2 { throw e }
    let status = (result.1 as? HTTPURLResponse)?.statusCode ?? 0
    let data = result.0 ?? Data()
    let obj = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
    return Answer(status: status, json: obj, text: String(decoding: data, as: UTF8.self))
}

/// Polls `check` until it answers a value or `timeout` passes.
func eventually<T>(_ what: String, timeout: TimeInterval = 60, _ check: () throws -> T?) throws -> T {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let v = try check() { return v }
        if Date() > deadline { throw NSError(domain: "live", code: 2, userInfo: [NSLocalizedDescriptionKey: "timed out: \(what)"]) }
        usleep(250_000)
    }
}

func dataFromHex(_ hex: String) -> Data {
    var out = Data()
    var i = hex.startIndex
    while i < hex.endIndex {
        let j = hex.index(i, offsetBy: 2)
        out.append(UInt8(hex[i..<j], radix: 16)!)
        i = j
    }
    return out
}

final class LiveLogger: HeraldLogger {
    func log(_ level: HeraldLogLevel, _ message: String) {
        if level >= .warning { print("[Herald \(level)] \(message)") }
    }
}

extension LiveEnv {
    func api(_ method: String, _ path: String, body: Any? = nil) throws -> Answer {
        try call(method, baseURL.appendingPathComponent(path), key: serverKey, body: body)
    }

    /// A fresh APNs device token the provider simulator knows.
    func simulatorToken() throws -> String {
        let a = try call("POST", simAdmin.appendingPathComponent("admin/apns/devices"), body: ["topic": apnsTopic, "count": 1])
        XCTAssertEqual(a.status / 100, 2, a.text)
        return try XCTUnwrap((a.json["tokens"] as? [String])?.first, a.text)
    }

    /// APNs payloads the simulator recorded for `token`.
    func deliveries(token: String) throws -> [[String: Any]] {
        var c = URLComponents(url: simAdmin.appendingPathComponent("admin/deliveries"), resolvingAgainstBaseURL: false)!
        c.queryItems = [URLQueryItem(name: "platform", value: "apns"), URLQueryItem(name: "target", value: token)]
        let a = try call("GET", c.url!)
        XCTAssertEqual(a.status, 200, a.text)
        return (a.json["deliveries"] as? [[String: Any]] ?? []).compactMap { d in
            (d["payload"] as? String).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    /// Sends to the users and waits until the campaign has completed; answers the campaign.
    func sendAndComplete(externalId: String, name: String, data: [String: Any]) throws -> [String: Any] {
        let sent = try api("POST", "v1/push/send-to-users", body: [
            "app_id": appId, "external_ids": [externalId], "name": name,
            "contents": ["en": ["title": "Hello", "body": "From the iOS live suite"]], "data": data,
        ])
        XCTAssertTrue([201, 202].contains(sent.status), sent.text)
        let id = try XCTUnwrap(sent.json["id"] as? String, sent.text)
        return try eventually("campaign \(id) completed") {
            let c = try api("GET", "v1/campaigns/\(id)")
            let status = c.json["status"] as? String
            XCTAssertNotEqual(status, "failed", c.text)
            return status == "completed" ? c.json : nil
        }
    }

    /// A library core over real HTTP, storing in `directory`.
    func client(directory: URL, environment: DeviceEnvironment) -> HeraldClient {
        let deps = HeraldDependencies(storage: FileStorage(directory: directory), logger: LiveLogger())
        return HeraldClient(configuration: HeraldConfiguration(appId: appId, clientKey: clientKey, baseURL: baseURL),
                            dependencies: deps, environment: environment, callbackQueue: DispatchQueue(label: "live.callbacks"))
    }
}

extension XCTestCase {
    func waitFor<T>(_ what: String, _ start: (@escaping (T) -> Void) -> Void) -> T? {
        let done = expectation(description: what)
        var value: T?
        start { value = $0; done.fulfill() }
        wait(for: [done], timeout: 60)
        return value
    }
}
