import Foundation
import XCTest
@testable import HeraldCore

/// Every case of sdks/fixtures/*.json that applies to iOS.
final class FixtureTests: XCTestCase {
    func testRetryClassification() throws {
        let f = try fixture("retry.json")
        let policy = try XCTUnwrap(f["policy"] as? [String: Any])
        XCTAssertEqual(policy["base_ms"] as? Double, RetryPolicy.base * 1000)
        XCTAssertEqual(policy["cap_ms"] as? Double, RetryPolicy.cap * 1000)
        XCTAssertEqual(policy["max_attempts"] as? Int, RetryPolicy.maxAttempts)
        XCTAssertEqual(policy["retry_after_jitter"] as? Double, RetryPolicy.retryAfterJitter)
        let cases = try XCTUnwrap(f["classify"] as? [[String: Any]])
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            let call = try XCTUnwrap(CallKind(rawValue: c["call"] as? String ?? ""), "\(c)")
            let now = (c["now"] as? String).flatMap(parseISODate) ?? Date(timeIntervalSince1970: 1_795_000_000)
            let got = RetryPolicy.classify(call: call, status: c["status"] as? Int, retryAfter: c["retry_after"] as? String, now: now)
            let expected: Disposition
            switch c["expect"] as? String {
            case "retry": expected = .retry(floor: (c["floor_ms"] as? Double).map { $0 / 1000 })
            case "reregister": expected = .reregister
            case "drop": expected = .drop
            case "stop": expected = .stop
            case "done": expected = .done
            default: XCTFail("unknown expectation in \(c)"); continue
            }
            XCTAssertEqual(got, expected, "\(c)")
        }
    }

    func testRetryDelays() throws {
        let cases = try XCTUnwrap(try fixture("retry.json")["delays"] as? [[String: Any]])
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            let r = try XCTUnwrap(c["random"] as? Double)
            let delay = RetryPolicy.delay(attempt: try XCTUnwrap(c["attempt"] as? Int),
                                          retryAfter: (c["retry_after_ms"] as? Double).map { $0 / 1000 }, random: { r })
            XCTAssertEqual(delay * 1000, try XCTUnwrap(c["expect_ms"] as? Double), accuracy: 0.001, "\(c)")
        }
    }

    func testLocale() throws {
        let f = try fixture("locale.json")
        let languages = try XCTUnwrap(f["languages"] as? [[String: Any]])
        XCTAssertFalse(languages.isEmpty)
        for c in languages {
            XCTAssertEqual(HeraldLocale.language(of: c["tag"] as? String), c["language"] as? String, "\(c)")
        }
        let zones = try XCTUnwrap(f["timezones"] as? [[String: Any]])
        XCTAssertFalse(zones.isEmpty)
        for c in zones {
            XCTAssertEqual(HeraldLocale.timezone(of: c["zone"] as? String), c["timezone"] as? String, "\(c)")
        }
    }

    /// The register body, both from the pure builder and as the client sends it.
    func testRegisterBodies() throws {
        let f = try fixture("register.json")
        let appId = try XCTUnwrap(f["app_id"] as? String)
        let cases = try XCTUnwrap(f["cases"] as? [[String: Any]]).filter { $0["platform"] as? String == "ios" }
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            let desired = try XCTUnwrap(c["desired"] as? [String: Any])
            let tokenData = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(c["token_base64"] as? String)))
            let token = heraldHexToken(tokenData)
            let fields = DeviceFields(externalId: desired["external_id"] as? String,
                                      language: HeraldLocale.language(of: desired["language_tag"] as? String),
                                      timezone: HeraldLocale.timezone(of: desired["zone"] as? String),
                                      appVersion: desired["app_version"] as? String,
                                      tags: desired["tags"] as? [String] ?? [])
            let built = HeraldClient.registerBody(appId: appId, pushToken: token, fields: fields)
            XCTAssertTrue(sameJSON(built, c["body"]), "\(c["name"] ?? "")")

            // Through the client: the first request after the token is the registration.
            let h = Harness()
            let env = DeviceEnvironment(languageTag: desired["language_tag"] as? String, timezone: desired["zone"] as? String,
                                        appVersion: desired["app_version"] as? String)
            let deps = HeraldDependencies(storage: InMemoryStorage(), transport: h.server.transport, clock: h.clock,
                                          random: h.random, scheduler: h.scheduler, logger: h.logger)
            let client = HeraldClient(configuration: HeraldConfiguration(appId: appId, clientKey: h.server.clientKey,
                                                                         baseURL: URL(string: "https://h.example")!),
                                      dependencies: deps, environment: env, callbackQueue: nil)
            h.server.transport.handler = { _ in FakeHerald.answer(500) }
            client.start()
            if let ext = desired["external_id"] as? String { client.setExternalId(ext) }
            client.setTags(desired["tags"] as? [String] ?? [])
            client.setPushToken(token)
            client.idle()
            let register = try XCTUnwrap(h.server.transport.requests.first)
            XCTAssertEqual(register.method, "POST")
            XCTAssertEqual(register.url.absoluteString, "https://h.example/v1/devices/register")
            XCTAssertEqual(register.headers["Content-Type"], "application/json")
            XCTAssertEqual(register.headers["Authorization"], "Bearer hk_pub_test")
            XCTAssertNil(register.headers["X-Herald-Push-Token"])
            XCTAssertTrue(sameJSON(bodyObject(register), c["body"]), "\(c["name"] ?? ""): \(bodyObject(register) ?? [:])")
        }
    }

    func testInAppAnswers() throws {
        let f = try fixture("in-app.json")
        let now = try XCTUnwrap(parseISODate(try XCTUnwrap(f["now"] as? String)))
        let cases = try XCTUnwrap(f["cases"] as? [[String: Any]])
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            let name = c["name"] as? String ?? ""
            let data = c["body_text"].map { Data(($0 as? String ?? "").utf8) } ?? json(c["body"]!)
            let parsed = InAppParser.parse(data, now: now)
            guard let expected = c["messages"] as? [[String: Any]] else {
                XCTAssertNil(parsed, name)
                continue
            }
            let messages = try XCTUnwrap(parsed, name)
            XCTAssertEqual(messages.count, expected.count, name)
            for (m, e) in zip(messages, expected) {
                XCTAssertEqual(m.id, e["id"] as? String, name)
                XCTAssertEqual(m.language, e["language"] as? String, name)
                XCTAssertEqual(m.title, e["title"] as? String, name)
                XCTAssertEqual(m.body, e["body"] as? String, name)
                XCTAssertEqual(m.imageURL, e["image_url"] as? String, name)
                XCTAssertEqual(m.actionURL, e["action_url"] as? String, name)
                XCTAssertEqual(m.priority, e["priority"] as? Int, name)
                XCTAssertEqual(m.endsAtText, e["ends_at"] as? String, name)
                XCTAssertEqual(m.endsAt, (e["ends_at"] as? String).flatMap(parseISODate), name)
            }
            for (id, opens) in c["opens"] as? [String: Bool] ?? [:] {
                let m = try XCTUnwrap(messages.first { $0.id == id }, name)
                XCTAssertEqual(m.openableActionURL != nil, opens, "\(name): \(id)")
            }
        }
    }

    /// The in-app answers through the client: a usable one gives messages, an unusable one a failure.
    func testInAppAnswersThroughTheClient() throws {
        let f = try fixture("in-app.json")
        let now = try XCTUnwrap(parseISODate(try XCTUnwrap(f["now"] as? String)))
        for c in try XCTUnwrap(f["cases"] as? [[String: Any]]) {
            let h = Harness(clock: TestClock(now))
            let client = h.client()
            client.setPushToken(tokenA)
            client.idle()
            let data = c["body_text"].map { Data(($0 as? String ?? "").utf8) } ?? json(c["body"]!)
            let server = h.server
            h.server.transport.handler = { req in
                if req.url.path.hasSuffix("/in-app-messages") {
                    XCTAssertEqual(req.method, "GET")
                    XCTAssertEqual(req.headers["X-Herald-Push-Token"], tokenA)
                    return .success(HTTPResponse(status: 200, body: data))
                }
                return server.handle(req)
            }
            let done = expectation(description: "fetched")
            client.fetchInAppMessages { result in
                switch result {
                case .success(let list): XCTAssertEqual(list.count, (c["messages"] as? [Any])?.count, "\(c["name"]!)")
                case .failure(let e):
                    XCTAssertTrue(c["messages"] is NSNull || c["messages"] == nil, "\(c["name"]!)")
                    XCTAssertEqual(e.kind, .malformedAnswer)
                }
                done.fulfill()
            }
            wait(for: [done], timeout: 10)
        }
    }

    func testPushPayloads() throws {
        let cases = try XCTUnwrap(try fixture("push-payloads.json")["ios"] as? [[String: Any]])
        XCTAssertFalse(cases.isEmpty)
        for c in cases {
            let name = c["name"] as? String ?? ""
            let payload = try XCTUnwrap(c["payload"] as? [String: Any])
            var userInfo: [AnyHashable: Any] = [:]
            payload.forEach { userInfo[$0.key] = $0.value }
            for p in [HeraldPushPayload(userInfo: userInfo), try XCTUnwrap(HeraldPushPayload(json: json(payload)))] {
                XCTAssertEqual(p.campaignId, c["campaign_id"] as? String, name)
                XCTAssertEqual(p.actionURL, c["action_url"] as? String, name)
                XCTAssertEqual(p.imageURL, c["image_url"] as? String, name)
                XCTAssertEqual(p.openableActionURL != nil, c["opens"] as? Bool, name)
                XCTAssertEqual(p.attachmentURL?.absoluteString, c["image_url"] as? String, name)
            }
        }
    }

    /// The event calls: method, path, headers and body, then what each answer means.
    func testEvents() throws {
        let f = try fixture("events.json")
        let deviceId = try XCTUnwrap(f["device_id"] as? String)
        let notificationEvents = try XCTUnwrap(f["notification_events"] as? [[String: Any]])
        let inAppEvents = try XCTUnwrap(f["in_app_events"] as? [[String: Any]])
        XCTAssertFalse(notificationEvents.isEmpty)
        XCTAssertFalse(inAppEvents.isEmpty)

        func registered(_ answer: @escaping (HTTPRequest) -> Result<HTTPResponse, Error>) -> (HeraldClient, FakeTransport, Harness) {
            let h = Harness()
            h.server.devices[deviceId] = FakeHerald.Device(id: deviceId, token: tokenA, fields: [:])
            let client = h.client()
            client.setPushToken(tokenA)
            client.idle()
            XCTAssertEqual(client.deviceId, deviceId)
            let server = h.server
            server.transport.handler = { req in
                req.url.path.hasSuffix("events") ? answer(req) : server.handle(req)
            }
            return (client, server.transport, h)
        }

        func check(_ request: HTTPRequest, _ c: [String: Any]) {
            XCTAssertEqual(request.method, c["method"] as? String)
            XCTAssertEqual(request.url.path, c["path"] as? String)
            XCTAssertEqual(request.headers["Authorization"], "Bearer hk_pub_test")
            XCTAssertEqual(request.headers["X-Herald-Push-Token"], tokenA)
            XCTAssertEqual(request.headers["Content-Type"], "application/json")
            XCTAssertTrue(sameJSON(bodyObject(request), c["body"]), "\(c)")
        }

        func expectOutcome(_ expected: String, status: Int, _ run: (HeraldClient, @escaping (EventResult) -> Void) -> Void) {
            let (client, transport, h) = registered { _ in FakeHerald.answer(status, status == 204 ? nil : ["error": "X"]) }
            let before = transport.requests.count
            var got: EventResult?
            let done = expectation(description: "reported \(status)")
            run(client) { got = $0; done.fulfill() }
            if expected == "retry" {
                // Retried with back-off: a second attempt after the scheduler's delay.
                let deadline = Date().addingTimeInterval(5)
                while h.scheduler.pendingCount == 0 && Date() < deadline { usleep(1000) }
                XCTAssertEqual(h.scheduler.pendingCount, 1, "status \(status) not retried")
                h.scheduler.fireAll()
                while h.scheduler.pendingCount == 0 && Date() < deadline { usleep(1000) }
                h.scheduler.fireAll()
            }
            wait(for: [done], timeout: 10)
            client.idle()
            let sent = transport.requests.dropFirst(before)
            switch expected {
            case "done": XCTAssertEqual(got, .done)
            case "drop": XCTAssertEqual(got, .drop)
            case "do_not_show": XCTAssertEqual(got, .doNotShow)
            case "retry":
                XCTAssertEqual(sent.filter { $0.url.path.hasSuffix("events") }.count, 3, "status \(status)")
                if case .failed = got {} else { XCTFail("status \(status): \(String(describing: got))") }
            case "reregister":
                XCTAssertTrue(sent.contains { $0.url.path == "/v1/devices/register" }, "status \(status) did not register again")
            default: XCTFail("unknown outcome \(expected)")
            }
        }

        /// Reports the fixture's event `c` through `report`: done, with the request the fixture names.
        func expectSent(_ c: [String: Any], _ report: (HeraldClient, @escaping (EventResult) -> Void) throws -> Void) throws {
            let (client, transport, _) = registered { _ in FakeHerald.answer(204) }
            let done = expectation(description: "event")
            try report(client) {
                XCTAssertEqual($0, .done)
                done.fulfill()
            }
            wait(for: [done], timeout: 10)
            check(try XCTUnwrap(transport.requests.last), c)
        }

        for c in notificationEvents {
            try expectSent(c) { client, done in
                client.reportNotification(campaignId: try XCTUnwrap(c["campaign_id"] as? String),
                                          type: try XCTUnwrap(NotificationEventType(rawValue: c["type"] as? String ?? "")),
                                          completion: done)
            }
        }
        for (status, expected) in try XCTUnwrap(f["notification_outcomes"] as? [String: String]) {
            let code = try XCTUnwrap(Int(status))
            expectOutcome(expected, status: code) { client, done in
                client.reportNotification(campaignId: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d", type: .received, completion: done)
            }
        }
        for c in inAppEvents {
            try expectSent(c) { client, done in
                client.reportInAppEvent(messageId: try XCTUnwrap(c["message_id"] as? String),
                                        type: try XCTUnwrap(InAppEventType(rawValue: c["type"] as? String ?? "")),
                                        completion: done)
            }
        }
        for (type, outcomes) in try XCTUnwrap(f["in_app_outcomes"] as? [String: [String: String]]) {
            for (status, expected) in outcomes {
                expectOutcome(expected, status: try XCTUnwrap(Int(status))) { client, done in
                    client.reportInAppEvent(messageId: "0b7f8a52-5d4e-4c1a-9a3e-1f2d3c4b5a60",
                                            type: InAppEventType(rawValue: type)!, completion: done)
                }
            }
        }
    }
}
