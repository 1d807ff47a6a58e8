import Foundation
import XCTest
@testable import HeraldCore

final class SyncTests: XCTestCase {
    private func paths(_ h: Harness, from: Int = 0) -> [String] {
        h.server.transport.requests.dropFirst(from).map { "\($0.method) \($0.url.path)" }
    }

    func testRegistersWithTheFullDesiredStateThenSendsOnlyDifferences() throws {
        let h = Harness()
        let client = h.client()
        client.start()
        client.setExternalId("user-1")
        client.setTags(["a", "b", "a"])
        client.setPushToken(tokenA)
        XCTAssertEqual(client.idle(), .synced)
        let device = try XCTUnwrap(h.server.device(token: tokenA))
        XCTAssertEqual(device.fields["external_id"] as? String, "user-1")
        XCTAssertEqual(device.fields["language"] as? String, "de")
        XCTAssertEqual(device.fields["timezone"] as? String, "Europe/Berlin")
        XCTAssertEqual(device.fields["app_version"] as? String, "2.4.1")
        XCTAssertEqual(device.fields["tags"] as? [String], ["a", "b"])
        XCTAssertEqual(paths(h), ["POST /v1/devices/register"])
        XCTAssertEqual(client.deviceId, device.id)

        let before = h.server.transport.requests.count
        client.addTags(["c"])
        client.idle()
        let put = try XCTUnwrap(h.server.transport.requests.last)
        XCTAssertEqual(h.server.transport.requests.count, before + 1)
        XCTAssertEqual(put.method, "PUT")
        XCTAssertEqual(put.url.path, "/v1/devices/\(device.id)")
        XCTAssertEqual(put.headers["X-Herald-Push-Token"], tokenA)
        XCTAssertTrue(sameJSON(bodyObject(put), ["tags": ["a", "b", "c"]]))

        let mark = h.server.transport.requests.count
        client.setExternalId(nil)
        client.removeTags(["a"])
        client.setLanguage("pt-BR")
        client.idle()
        // The first change goes out at once; the ones made while it is in flight follow together.
        var merged: [String: Any] = [:]
        for r in h.server.transport.requests.dropFirst(mark) {
            XCTAssertEqual(r.method, "PUT")
            bodyObject(r)?.forEach { merged[$0.key] = $0.value }
        }
        XCTAssertLessThanOrEqual(h.server.transport.requests.count - mark, 3)
        XCTAssertTrue(sameJSON(merged, ["external_id": NSNull(), "tags": ["b", "c"], "language": "pt"]), "\(merged)")
        XCTAssertNil(h.server.devices[device.id]?.fields["external_id"])
        XCTAssertFalse(client.setLanguage("fil"))
        XCTAssertEqual(client.confirmedFields, client.desiredFields)

        // Setting the same values again sends nothing.
        let count = h.server.transport.requests.count
        client.setTags(["b", "c"])
        client.idle()
        XCTAssertEqual(h.server.transport.requests.count, count)
    }

    func testPendingChangesSurviveARestart() throws {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("herald-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = FakeHerald()
        let h1 = Harness(server: server, storage: FileStorage(directory: dir))
        let first = h1.client()
        first.start()
        first.setPushToken(tokenA)
        first.idle()
        let id = try XCTUnwrap(first.deviceId)
        server.offline = true
        first.setTags(["offline"])
        first.setExternalId("later")
        XCTAssertEqual(first.idle(), .waitingToRetry)

        // The app is killed; a new instance over the same files resumes.
        server.offline = false
        let before = server.transport.requests.count
        let h2 = Harness(server: server, storage: FileStorage(directory: dir))
        let second = h2.client()
        XCTAssertEqual(second.deviceId, id)
        XCTAssertEqual(second.registeredPushToken, tokenA)
        XCTAssertEqual(second.desiredFields.tags, ["offline"])
        second.start()
        XCTAssertEqual(second.idle(), .synced)
        let sent = server.transport.requests.dropFirst(before)
        XCTAssertEqual(sent.map { $0.method }, ["PUT"])
        XCTAssertTrue(sameJSON(bodyObject(sent.first!), ["tags": ["offline"], "external_id": "later"]))
        XCTAssertEqual(server.devices[id]?.fields["tags"] as? [String], ["offline"])

        // And a third start has nothing to send.
        let third = Harness(server: server, storage: FileStorage(directory: dir)).client()
        let count = server.transport.requests.count
        third.start()
        XCTAssertEqual(third.idle(), .synced)
        XCTAssertEqual(server.transport.requests.count, count)
    }

    func testSeveralSetTagsWhileOfflineBecomeOnePut() throws {
        let h = Harness()
        let client = h.client()
        client.setPushToken(tokenA)
        client.idle()
        h.server.offline = true
        client.setTags(["one"])
        XCTAssertEqual(client.idle(), .waitingToRetry)
        client.setTags(["two"])
        client.addTags(["three"])
        client.removeTags(["two"])
        client.addTags(["four"])
        XCTAssertEqual(client.idle(), .waitingToRetry)
        XCTAssertEqual(h.server.transport.requests.filter { $0.method == "PUT" }.count, 1, "only the first attempt went out")
        h.server.offline = false
        let before = h.server.transport.requests.count
        h.scheduler.fireAll()
        XCTAssertEqual(client.idle(), .synced)
        let sent = h.server.transport.requests.dropFirst(before)
        XCTAssertEqual(sent.count, 1)
        XCTAssertTrue(sameJSON(bodyObject(sent.first!), ["tags": ["three", "four"]]))
        XCTAssertEqual(h.server.maxInFlight, 1)
    }

    func testNeverTwoRequestsInFlight() throws {
        // A transport that answers later, on another thread.
        let server = FakeHerald()
        final class Counter { let lock = NSLock(); var inFlight = 0, maxInFlight = 0 }
        let counter = Counter()
        final class Async: HTTPTransport {
            let body: (HTTPRequest, @escaping (Result<HTTPResponse, Error>) -> Void) -> Void
            init(_ body: @escaping (HTTPRequest, @escaping (Result<HTTPResponse, Error>) -> Void) -> Void) { self.body = body }
            func perform(_ r: HTTPRequest, completion: @escaping (Result<HTTPResponse, Error>) -> Void) { body(r, completion) }
        }
        let transport = Async { req, done in
            counter.lock.lock(); counter.inFlight += 1; counter.maxInFlight = max(counter.maxInFlight, counter.inFlight); counter.lock.unlock()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) {
                let answer = server.handle(req)
                counter.lock.lock(); counter.inFlight -= 1; counter.lock.unlock()
                done(answer)
            }
        }
        let h = Harness(server: server)
        let client = h.client(transport: transport)
        client.setPushToken(tokenA)
        for i in 0..<20 {
            client.addTags(["t\(i)"])
            client.setExternalId("u\(i)")
            usleep(3000)
        }
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(counter.maxInFlight, 1)
        let device = try XCTUnwrap(server.device(token: tokenA))
        XCTAssertEqual(device.fields["external_id"] as? String, "u19")
        XCTAssertEqual((device.fields["tags"] as? [String])?.count, 20)
    }

    func testBackOffWithFullJitterThenPauseAfterEightAttempts() throws {
        let h = Harness(random: TestRandom(0.5))
        h.server.offline = true
        let client = h.client()
        client.setPushToken(tokenA)
        for _ in 0..<7 {
            XCTAssertEqual(client.idle(), .waitingToRetry)
            h.scheduler.fireAll()
        }
        XCTAssertEqual(client.idle(), .paused)
        XCTAssertEqual(h.server.transport.requests.count, 8)
        XCTAssertEqual(h.scheduler.delays, [0.5, 1, 2, 4, 8, 16, 32])
        // Changes while paused wait for the next start or network change.
        client.setTags(["x"])
        XCTAssertEqual(client.idle(), .paused)
        XCTAssertEqual(h.server.transport.requests.count, 8)
        h.server.offline = false
        client.networkChanged()
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(h.server.device(token: tokenA)?.fields["tags"] as? [String], ["x"])

        // The cap: attempt 9 and later wait at most 5 minutes × random.
        XCTAssertEqual(RetryPolicy.delay(attempt: 20, retryAfter: nil, random: { 0.99 }), 297, accuracy: 0.0001)
    }

    func testRetryAfterIsAFloorPlusJitter() throws {
        let h = Harness(random: TestRandom(0.5))
        let client = h.client()
        h.server.scripted = [FakeHerald.answer(429, ["error": "RateLimited"], headers: ["Retry-After": "7"]),
                             FakeHerald.answer(503, nil, headers: ["retry-after": "Sat, 28 Nov 2026 10:00:30 GMT"]),
                             FakeHerald.answer(502, nil, headers: ["retry-after": "soon"])]
        h.clock.date = try XCTUnwrap(parseISODate("2026-11-28T10:00:00.000Z"))
        client.setPushToken(tokenA)
        XCTAssertEqual(client.idle(), .waitingToRetry)
        h.scheduler.fireAll()
        XCTAssertEqual(client.idle(), .waitingToRetry)
        h.scheduler.fireAll()
        XCTAssertEqual(client.idle(), .waitingToRetry)
        h.scheduler.fireAll()
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(h.scheduler.delays.count, 3)
        XCTAssertEqual(h.scheduler.delays[0], 7 * 1.05, accuracy: 0.0001)
        XCTAssertEqual(h.scheduler.delays[1], 30 * 1.05, accuracy: 0.0001)
        XCTAssertEqual(h.scheduler.delays[2], 2, accuracy: 0.0001)
    }

    func testTokenChange() throws {
        let h = Harness()
        let client = h.client()
        client.start()
        client.setExternalId("user-9")
        client.setTags(["vip"])
        client.setPushToken(tokenA)
        client.idle()
        let oldId = try XCTUnwrap(client.deviceId)
        client.optOut()
        client.idle()
        XCTAssertEqual(h.server.devices[oldId]?.optedIn, false)

        let before = h.server.transport.requests.count
        client.setPushToken(tokenB)
        XCTAssertEqual(client.idle(), .synced)
        let sent = Array(h.server.transport.requests.dropFirst(before))
        let newId = try XCTUnwrap(client.deviceId)
        XCTAssertNotEqual(newId, oldId)
        XCTAssertEqual(sent.map { "\($0.method) \($0.url.path)" },
                       ["POST /v1/devices/register", "POST /v1/devices/\(newId)/opt-out", "DELETE /v1/devices/\(oldId)"])
        XCTAssertTrue(sameJSON(bodyObject(sent[0]), ["app_id": h.server.appId, "push_token": tokenB, "platform": "ios",
                                                      "external_id": "user-9", "language": "de", "timezone": "Europe/Berlin",
                                                      "app_version": "2.4.1", "tags": ["vip"]]))
        XCTAssertEqual(sent[1].headers["X-Herald-Push-Token"], tokenB)
        XCTAssertEqual(sent[2].headers["X-Herald-Push-Token"], tokenA, "the old device is deleted with its own token")
        XCTAssertNil(h.server.devices[oldId])
        XCTAssertEqual(h.server.devices[newId]?.optedIn, false)
        XCTAssertEqual(client.registeredPushToken, tokenB)
    }

    func testTokenChangeDeleteAnswered404IsDone() throws {
        let h = Harness()
        let client = h.client()
        client.start()
        client.setPushToken(tokenA)
        client.idle()
        let oldId = try XCTUnwrap(client.deviceId)
        h.server.devices[oldId] = nil  // deleted by an admin meanwhile
        client.setPushToken(tokenB)
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(h.server.transport.requests.last?.method, "DELETE")
        let count = h.server.transport.requests.count
        client.start()
        client.idle()
        XCTAssertEqual(h.server.transport.requests.count, count, "the delete is not repeated")
    }

    func testNotFoundRegistersAgainWithTheFullState() throws {
        let h = Harness()
        let client = h.client()
        client.setPushToken(tokenA)
        client.idle()
        let oldId = try XCTUnwrap(client.deviceId)
        h.server.devices = [:]  // the device is gone on the server
        let before = h.server.transport.requests.count
        client.setTags(["after-404"])
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(paths(h, from: before), ["PUT /v1/devices/\(oldId)", "POST /v1/devices/register"])
        let device = try XCTUnwrap(h.server.device(token: tokenA))
        XCTAssertEqual(device.fields["tags"] as? [String], ["after-404"])
        XCTAssertEqual(client.deviceId, device.id)
    }

    func testForbiddenRegistersTheCurrentTokenAgainThenContinues() throws {
        let h = Harness()
        let client = h.client()
        client.setPushToken(tokenA)
        client.idle()
        let id = try XCTUnwrap(client.deviceId)
        let before = h.server.transport.requests.count
        h.server.scripted = [FakeHerald.answer(403, ["error": "Forbidden"])]
        client.optOut()
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(paths(h, from: before),
                       ["POST /v1/devices/\(id)/opt-out", "POST /v1/devices/register", "POST /v1/devices/\(id)/opt-out"])
        XCTAssertEqual(h.server.devices[id]?.optedIn, false)
    }

    func testASecond403IsAConfigurationError() throws {
        let h = Harness()
        let client = h.client()
        client.setPushToken(tokenA)
        client.idle()
        let before = h.server.transport.requests.count
        let registered = h.server.handle(HTTPRequest(method: "POST", url: URL(string: "https://x/v1/devices/register")!,
                                                     headers: ["Authorization": "Bearer hk_pub_test"],
                                                     body: json(["app_id": h.server.appId, "push_token": tokenA])))
        h.server.scripted = [FakeHerald.answer(403, ["error": "Forbidden"]), registered,
                             FakeHerald.answer(403, ["error": "Forbidden"])]
        client.optOut()  // (a tag change would be carried by the registration itself)
        XCTAssertEqual(client.idle(), .stopped)
        XCTAssertEqual(h.server.transport.requests.count - before, 3)
        client.setTags(["y"])
        XCTAssertEqual(client.idle(), .stopped)
        XCTAssertEqual(h.server.transport.requests.count - before, 3, "nothing is sent after a stop")
        client.start()
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(h.server.device(token: tokenA)?.fields["tags"] as? [String], ["y"])
        XCTAssertEqual(h.server.device(token: tokenA)?.optedIn, false)
    }

    func testStopsOn401UntilTheNextStart() throws {
        let h = Harness()
        let client = h.client()
        h.server.scripted = [FakeHerald.answer(401, ["error": "Unauthorized"])]
        client.setPushToken(tokenA)
        XCTAssertEqual(client.idle(), .stopped)
        client.setTags(["a"])
        client.networkChanged()
        XCTAssertEqual(client.idle(), .stopped)
        XCTAssertEqual(h.server.transport.requests.count, 1)
        XCTAssertTrue(h.logger.lines.contains { $0.contains("stopped") })
        client.start()
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(h.server.device(token: tokenA)?.fields["tags"] as? [String], ["a"])
    }

    func testARefusedLanguageIsDroppedAndLeftOutNextTime() throws {
        let h = Harness()
        let client = h.client(environment: DeviceEnvironment(languageTag: "de", timezone: "Europe/Berlin", appVersion: "1"))
        client.start()
        client.setPushToken(tokenA)
        client.idle()
        let before = h.server.transport.requests.count
        h.server.scripted = [FakeHerald.answer(400, ["error": "ValidationError", "message": "bad",
                                                     "details": [["field": "/language", "message": "not ISO 639-1"]]])]
        client.setLanguage("xx")
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(h.server.transport.requests.count - before, 1, "a 400 is not retried")
        XCTAssertEqual(client.desiredFields.language, "de", "the change is dropped")

        // A registration refused for its language is sent again without it.
        let h2 = Harness()
        let c2 = h2.client(environment: DeviceEnvironment(languageTag: "qq", timezone: "Europe/Berlin", appVersion: "1"))
        h2.server.scripted = [FakeHerald.answer(400, ["error": "ValidationError", "details": [["field": "/language", "message": "x"]]])]
        c2.start()
        c2.setPushToken(tokenA)
        XCTAssertEqual(c2.idle(), .synced)
        let bodies = h2.server.transport.requests.compactMap(bodyObject)
        XCTAssertEqual(bodies.count, 2)
        XCTAssertEqual(bodies[0]["language"] as? String, "qq")
        XCTAssertNil(bodies[1]["language"])
        // And at the next start the same locale is still left out (no new registration).
        let count = h2.server.transport.requests.count
        c2.start()
        XCTAssertEqual(c2.idle(), .synced)
        XCTAssertEqual(h2.server.transport.requests.count, count)
    }

    func testOtherClientErrorsDropTheChange() throws {
        for status in [409, 413, 415, 422, 418] {
            let h = Harness()
            let client = h.client()
            client.setTags(["ok"])
            client.setPushToken(tokenA)
            client.idle()
            let before = h.server.transport.requests.count
            h.server.scripted = [FakeHerald.answer(status, ["error": "Nope"])]
            client.setTags(Array(repeating: "t", count: 1) + ["big"])
            XCTAssertEqual(client.idle(), .synced, "\(status)")
            XCTAssertEqual(h.server.transport.requests.count - before, 1, "\(status) is not retried")
            XCTAssertEqual(client.desiredFields.tags, ["ok"], "\(status) drops the change")
        }
    }

    func testARefusedRegistrationWithoutAFieldIsDropped() throws {
        let h = Harness()
        let client = h.client()
        client.start()
        client.setPushToken(tokenA)
        client.idle()
        let id = try XCTUnwrap(client.deviceId)
        let before = h.server.transport.requests.count
        h.server.scripted = [FakeHerald.answer(413, ["error": "PayloadTooLarge"])]
        client.setPushToken(tokenB)
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(h.server.transport.requests.count - before, 1, "not retried")
        XCTAssertEqual(client.deviceId, id, "the registered device stays")
        XCTAssertEqual(client.registeredPushToken, tokenA)
        // The next token the OS hands over is registered as usual.
        client.setPushToken(tokenB)
        XCTAssertEqual(client.idle(), .synced)
        XCTAssertEqual(client.registeredPushToken, tokenB)
    }

    func testPayloadWithWrongTypes() {
        let p = HeraldPushPayload(userInfo: ["herald_campaign_id": 42, "action_url": ["x"], "image_url": "ftp://x/y.png"])
        XCTAssertNil(p.campaignId)
        XCTAssertNil(p.openableActionURL)
        XCTAssertNil(p.attachmentURL)
        XCTAssertNil(HeraldPushPayload(json: Data("[1]".utf8)))
    }

    func testWeeklyRegistrationWithJitter() throws {
        let h = Harness(random: TestRandom(0.5))
        let client = h.client()
        client.start()
        client.setPushToken(tokenA)
        client.idle()
        let count = h.server.transport.requests.count
        h.clock.date = h.clock.date.addingTimeInterval(7 * 86400 + 0.4 * 86400)  // within the jitter
        client.start()
        client.idle()
        XCTAssertEqual(h.server.transport.requests.count, count)
        h.clock.date = h.clock.date.addingTimeInterval(0.2 * 86400)  // 7.6 days: past 7 + 0.5
        client.start()
        client.idle()
        XCTAssertEqual(paths(h, from: count), ["POST /v1/devices/register"])
    }

    func testAChangedLocaleRegistersAgainAtStart() throws {
        let storage = InMemoryStorage()
        let h = Harness(storage: storage)
        let client = h.client()
        client.start()
        client.setPushToken(tokenA)
        client.idle()
        let count = h.server.transport.requests.count
        let again = Harness(server: h.server, storage: storage)
            .client(environment: DeviceEnvironment(languageTag: "fr-FR", timezone: "GMT+05:30", appVersion: "2.5"))
        again.start()
        XCTAssertEqual(again.idle(), .synced)
        let sent = Array(h.server.transport.requests.dropFirst(count))
        XCTAssertEqual(sent.map { $0.url.path }, ["/v1/devices/register"])
        let body = try XCTUnwrap(bodyObject(sent[0]))
        XCTAssertEqual(body["language"] as? String, "fr")
        XCTAssertNil(body["timezone"], "an offset zone is left out")
        XCTAssertEqual(body["app_version"] as? String, "2.5")
    }

    func testUnreadableAnswersAreRetriedNeverFatal() throws {
        let huge = Data(repeating: UInt8(ascii: " "), count: 5 << 20) + json(["id": "x"])
        let answers: [Data] = [
            huge,
            json([["id": "x"]]),                                          // an array
            Data("{\"id\":\"5f1e2d3c\",\"tags\":[\"a\"".utf8),              // truncated
            json(["id": 42, "tags": "a"]),                                // wrong types
            json(["id": "x", "tags": [1, 2], "opted_in": "yes"]),         // wrong types inside
            Data("<html>oops</html>".utf8),
            Data(),
            Data("null".utf8),
        ]
        for (i, body) in answers.enumerated() {
            let h = Harness()
            let client = h.client()
            h.server.scripted = [.success(HTTPResponse(status: 200, body: body))]
            client.setPushToken(tokenA)
            XCTAssertEqual(client.idle(), .waitingToRetry, "answer \(i)")
            XCTAssertNil(client.deviceId, "answer \(i)")
            h.scheduler.fireAll()
            XCTAssertEqual(client.idle(), .synced, "answer \(i)")
            XCTAssertNotNil(client.deviceId, "answer \(i)")
        }
        // Error answers with unreadable bodies, and 500s, are retried too.
        let h = Harness()
        let client = h.client()
        h.server.scripted = [.success(HTTPResponse(status: 500, body: Data("{\"error\":".utf8))),
                             .success(HTTPResponse(status: 503, body: huge)),
                             .failure(URLError(.timedOut))]
        client.setPushToken(tokenA)
        for _ in 0..<3 {
            XCTAssertEqual(client.idle(), .waitingToRetry)
            h.scheduler.fireAll()
        }
        XCTAssertEqual(client.idle(), .synced)
        // A 400 with a huge or broken body is still just dropped.
        h.server.scripted = [.success(HTTPResponse(status: 400, body: huge))]
        client.setTags(["z"])
        XCTAssertEqual(client.idle(), .synced)
    }

    func testPermissionRevokedOptsOutAndGrantedOptsBackIn() throws {
        let h = Harness()
        let client = h.client()
        client.setPushToken(tokenA)
        client.idle()
        let id = try XCTUnwrap(client.deviceId)
        client.permissionChanged(granted: false)
        client.idle()
        XCTAssertEqual(h.server.devices[id]?.optedIn, false)
        client.permissionChanged(granted: true)
        client.idle()
        XCTAssertEqual(h.server.devices[id]?.optedIn, true)
        client.optOut()
        client.permissionChanged(granted: true)
        client.idle()
        XCTAssertEqual(h.server.devices[id]?.optedIn, false, "the app's own choice stays")
    }

    func testDeleteDevice() throws {
        let h = Harness()
        let client = h.client()
        client.setPushToken(tokenA)
        client.idle()
        let id = try XCTUnwrap(client.deviceId)
        client.deleteDevice()
        XCTAssertEqual(client.idle(), .notRegistered)
        XCTAssertNil(h.server.devices[id])
        XCTAssertNil(client.deviceId)
    }

    func testInAppAndEventsNeedARegistration() throws {
        let h = Harness()
        let client = h.client()
        let done = expectation(description: "fetch")
        client.fetchInAppMessages { result in
            if case .failure(let e) = result { XCTAssertEqual(e.kind, .notRegistered) } else { XCTFail() }
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
        XCTAssertTrue(h.server.transport.requests.isEmpty)
    }

    func testHexToken() {
        XCTAssertEqual(heraldHexToken(Data([0x00, 0x0f, 0xab, 0xff])), "000fabff")
        XCTAssertEqual(heraldHexToken(Data()), "")
    }

    func testFileStorage() throws {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("herald-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let s = FileStorage(directory: dir)
        XCTAssertNil(s.data(forKey: "k/1"))
        s.set(Data("v".utf8), forKey: "k/1")
        XCTAssertEqual(FileStorage(directory: dir).data(forKey: "k/1"), Data("v".utf8))
        s.set(nil, forKey: "k/1")
        XCTAssertNil(s.data(forKey: "k/1"))
    }

    func testACorruptStoredRecordStartsFresh() {
        let storage = InMemoryStorage()
        storage.set(Data("{not json".utf8), forKey: HeraldClient.storageKey)
        let h = Harness(storage: storage)
        let client = h.client()
        client.setPushToken(tokenA)
        XCTAssertEqual(client.idle(), .synced)
    }
}
