import Foundation
import XCTest
@testable import HeraldCore

/// The library against a real Herald and its provider simulator (HERALD_LIVE_*).
final class LiveTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() {
        directories.forEach { try? FileManager.default.removeItem(at: $0) }
        super.tearDown()
    }

    private func tempDirectory() -> URL {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("herald-live-\(UUID().uuidString)")
        directories.append(dir)
        return dir
    }

    private func unique(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.lowercased().prefix(12))" }

    private let german = DeviceEnvironment(languageTag: "de-DE", timezone: "Europe/Berlin", appVersion: "1.2.3")

    func testRegisterSyncOptOutInDeliveryAndNotificationEvents() throws {
        let env = try LiveEnv.load()
        let token = try env.simulatorToken()
        let externalId = unique("ios-live")
        let dir = tempDirectory()
        let client = env.client(directory: dir, environment: german)
        client.start()
        client.setExternalId(externalId)
        client.setTags(["live", "ios"])
        client.setPushToken(heraldHexToken(dataFromHex(token)))
        XCTAssertEqual(client.waitUntilIdle(timeout: 60), .synced)
        let deviceId = try XCTUnwrap(client.deviceId)
        XCTAssertEqual(client.registeredPushToken, token)

        var device = try env.api("GET", "v1/devices/\(deviceId)")
        XCTAssertEqual(device.status, 200, device.text)
        XCTAssertEqual(device.json["push_token"] as? String, token)
        XCTAssertEqual(device.json["platform"] as? String, "ios")
        XCTAssertEqual(device.json["external_id"] as? String, externalId)
        XCTAssertEqual(device.json["tags"] as? [String], ["live", "ios"])
        XCTAssertEqual(device.json["language"] as? String, "de")
        XCTAssertEqual(device.json["timezone"] as? String, "Europe/Berlin")
        XCTAssertEqual(device.json["app_version"] as? String, "1.2.3")
        XCTAssertEqual(device.json["opted_in"] as? Bool, true)

        // Changes go out as PUTs; several in a row end in the last state.
        client.addTags(["beta"])
        client.removeTags(["ios"])
        XCTAssertTrue(client.setLanguage("fr-CA"))
        XCTAssertEqual(client.waitUntilIdle(timeout: 60), .synced)
        device = try env.api("GET", "v1/devices/\(deviceId)")
        XCTAssertEqual(device.json["tags"] as? [String], ["live", "beta"])
        XCTAssertEqual(device.json["language"] as? String, "fr")
        XCTAssertTrue(client.setLanguage("de"))

        // Opted out: a send to the user reaches no device.
        client.optOut()
        XCTAssertEqual(client.waitUntilIdle(timeout: 60), .synced)
        device = try env.api("GET", "v1/devices/\(deviceId)")
        XCTAssertEqual(device.json["opted_in"] as? Bool, false)
        XCTAssertEqual(device.json["language"] as? String, "de")
        let muted = try env.sendAndComplete(externalId: externalId, name: "ios live opted out", data: [:])
        let mutedId = try XCTUnwrap(muted["id"] as? String)
        let mutedDeliveries = try env.deliveries(token: token).filter { $0["herald_campaign_id"] as? String == mutedId }
        XCTAssertTrue((muted["audience_size"] as? Int) == 0 || mutedDeliveries.isEmpty, "opted-out device got \(muted)")
        XCTAssertTrue(mutedDeliveries.isEmpty)

        // Back in: delivered, and the payload carries the campaign id.
        client.optIn()
        XCTAssertEqual(client.waitUntilIdle(timeout: 60), .synced)
        XCTAssertEqual(try env.api("GET", "v1/devices/\(deviceId)").json["opted_in"] as? Bool, true)
        let campaign = try env.sendAndComplete(externalId: externalId, name: "ios live opted in",
                                               data: ["action_url": "https://example.com/live?x=1"])
        let campaignId = try XCTUnwrap(campaign["id"] as? String)
        XCTAssertEqual(campaign["audience_size"] as? Int, 1)
        let payload = try eventually("the simulator records the delivery") {
            try env.deliveries(token: token).first { $0["herald_campaign_id"] as? String == campaignId }
        }
        let push = try XCTUnwrap(HeraldPushPayload(json: try JSONSerialization.data(withJSONObject: payload)))
        XCTAssertEqual(push.campaignId, campaignId)
        XCTAssertEqual(push.openableActionURL?.absoluteString, "https://example.com/live?x=1")
        XCTAssertNotNil(payload["aps"])

        // Received and clicked, reported from that payload, move the campaign's stats.
        let received: EventResult? = waitFor("received") {
            client.reportNotification(campaignId: try! XCTUnwrap(push.campaignId), type: .received, completion: $0)
        }
        XCTAssertEqual(received, .done)
        let clicked: EventResult? = waitFor("clicked") {
            client.reportNotification(campaignId: campaignId, type: .clicked, completion: $0)
        }
        XCTAssertEqual(clicked, .done)
        _ = try eventually("stats received/clicked = 1") { () -> Bool? in
            let stats = try env.api("GET", "v1/campaigns/\(campaignId)").json["stats"] as? [String: Any]
            return stats?["received"] as? Int == 1 && stats?["clicked"] as? Int == 1 ? true : nil
        }
        // An unknown campaign is dropped.
        let unknown: EventResult? = waitFor("unknown campaign") {
            client.reportNotification(campaignId: UUID().uuidString.lowercased(), type: .received, completion: $0)
        }
        XCTAssertEqual(unknown, .drop)

        // A restart over the same storage resumes the same device and sends nothing new.
        let again = env.client(directory: dir, environment: german)
        XCTAssertEqual(again.deviceId, deviceId)
        again.start()
        XCTAssertEqual(again.waitUntilIdle(timeout: 60), .synced)

        // A new token: a new device with the same fields; the old one is deleted.
        let newToken = try env.simulatorToken()
        again.setPushToken(newToken)
        XCTAssertEqual(again.waitUntilIdle(timeout: 60), .synced)
        let newId = try XCTUnwrap(again.deviceId)
        XCTAssertNotEqual(newId, deviceId)
        XCTAssertEqual(try env.api("GET", "v1/devices/\(deviceId)").status, 404)
        let moved = try env.api("GET", "v1/devices/\(newId)")
        XCTAssertEqual(moved.json["external_id"] as? String, externalId)
        XCTAssertEqual(moved.json["tags"] as? [String], ["live", "beta"])
        XCTAssertEqual(moved.json["push_token"] as? String, newToken)

        // Deleted by an admin: the next change registers again with the full state.
        XCTAssertEqual(try env.api("DELETE", "v1/devices/\(newId)").status, 204)
        again.addTags(["after-delete"])
        XCTAssertEqual(again.waitUntilIdle(timeout: 60), .synced)
        let revived = try env.api("GET", "v1/devices/\(try XCTUnwrap(again.deviceId))")
        XCTAssertEqual(revived.status, 200, revived.text)
        XCTAssertEqual(revived.json["tags"] as? [String], ["live", "beta", "after-delete"])
        XCTAssertEqual(revived.json["external_id"] as? String, externalId)

        // Logout clears the external id.
        again.setExternalId(nil)
        XCTAssertEqual(again.waitUntilIdle(timeout: 60), .synced)
        XCTAssertTrue(try env.api("GET", "v1/devices/\(try XCTUnwrap(again.deviceId))").json["external_id"] is NSNull)
        again.deleteDevice()
        XCTAssertEqual(again.waitUntilIdle(timeout: 60), .notRegistered)
    }

    func testInAppMessagesInTheDevicesLanguageAndTheirEvents() throws {
        let env = try LiveEnv.load()
        let token = try env.simulatorToken()
        let externalId = unique("ios-inapp")
        let client = env.client(directory: tempDirectory(), environment: german)
        client.start()
        client.setExternalId(externalId)
        client.setPushToken(token)
        XCTAssertEqual(client.waitUntilIdle(timeout: 60), .synced)

        func create(_ name: String, _ contents: [String: Any], priority: Int) throws -> String {
            let a = try env.api("POST", "v1/apps/\(env.appId)/in-app-messages", body: [
                "name": name, "contents": contents, "priority": priority,
                "action_url": "https://example.com/\(name)",
                "audience": ["kind": "external_ids", "external_ids": [externalId]],
            ])
            XCTAssertEqual(a.status, 201, a.text)
            return try XCTUnwrap(a.json["id"] as? String, a.text)
        }
        let both = try create("both", ["de": ["title": "Hallo", "body": "Auf Deutsch"],
                                       "en": ["title": "Hello", "body": "In English"]], priority: 60)
        let english = try create("english", ["en": ["title": "Only English", "body": "No German here"]], priority: 40)

        let fetched: Result<[InAppMessage], HeraldError>? = waitFor("fetch") { client.fetchInAppMessages(completion: $0) }
        let messages = try XCTUnwrap(fetched).get()
        let de = try XCTUnwrap(messages.first { $0.id == both })
        XCTAssertEqual(de.language, "de")
        XCTAssertEqual(de.title, "Hallo")
        XCTAssertEqual(de.body, "Auf Deutsch")
        XCTAssertEqual(de.openableActionURL?.absoluteString, "https://example.com/both")
        let en = try XCTUnwrap(messages.first { $0.id == english })
        XCTAssertEqual(en.language, "en")
        XCTAssertEqual(en.title, "Only English")
        XCTAssertLessThan(messages.firstIndex(of: de)!, messages.firstIndex(of: en)!, "higher priority first")

        for type in [InAppEventType.impression, .click, .dismiss] {
            let r: EventResult? = waitFor("\(type)") { client.reportInAppEvent(messageId: both, type: type, completion: $0) }
            XCTAssertEqual(r, .done, "\(type)")
        }
        let r: EventResult? = waitFor("impression en") { client.reportInAppEvent(messageId: english, type: .impression, completion: $0) }
        XCTAssertEqual(r, .done)
        _ = try eventually("counters") { () -> Bool? in
            let stats = try env.api("GET", "v1/apps/\(env.appId)/in-app-messages/\(both)").json["stats"] as? [String: Any]
            return stats?["impressions"] as? Int == 1 && stats?["clicks"] as? Int == 1 && stats?["dismissals"] as? Int == 1
                && stats?["devices"] as? Int == 1 ? true : nil
        }
        // Dismissed: not listed again.
        let after: Result<[InAppMessage], HeraldError>? = waitFor("fetch again") { client.fetchInAppMessages(completion: $0) }
        let ids = try XCTUnwrap(after).get().map { $0.id }
        XCTAssertFalse(ids.contains(both))
        XCTAssertTrue(ids.contains(english))

        // A deleted message answers 404: drop it.
        XCTAssertEqual(try env.api("DELETE", "v1/apps/\(env.appId)/in-app-messages/\(english)").status / 100, 2)
        let gone: EventResult? = waitFor("gone") { client.reportInAppEvent(messageId: english, type: .impression, completion: $0) }
        XCTAssertEqual(gone, .drop)
        client.deleteDevice()
        XCTAssertEqual(client.waitUntilIdle(timeout: 60), .notRegistered)
    }
}
