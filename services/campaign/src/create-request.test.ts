import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { CreateCampaignRequestSchema, Priority } from "@herald/proto/campaign";
import { describe, expect, it } from "vitest";
import { checkCreateSemantics, initialStatus, parseCreateRequest } from "./create-request.js";
import { LIMITS } from "./campaign-checks.js";

const APP = "6f1c1f57-3f0e-4b8e-9a55-0d1f6bde2a11";
const NOW = new Date("2026-11-21T10:00:00.000Z");

type Init = MessageInitShape<typeof CreateCampaignRequestSchema>;

function request(overrides: Partial<Init> = {}) {
  const init: Init = {
    appId: APP,
    name: "Black Friday",
    contents: { en: { title: "Hi", body: "Deals inside" }, de: { title: "Hallo", body: "Angebote" } },
    target: { target: { case: "all", value: {} } },
  };
  return create(CreateCampaignRequestSchema, Object.assign(init, overrides));
}

/** Parses and runs the semantic checks, as CreateCampaign does. */
function validate(overrides: Partial<Init> = {}) {
  const input = parseCreateRequest(request(overrides));
  checkCreateSemantics(input.campaign, NOW);
  return input;
}

function errorOf(fn: () => unknown): { code: Code; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConnectError) return { code: err.code, message: err.rawMessage };
    throw err;
  }
  throw new Error("expected an error");
}

const shape = (overrides: Partial<Init>) => errorOf(() => validate(overrides));

describe("CreateCampaign validation", () => {
  it("accepts a well-formed request and normalises it", () => {
    const { campaign, idempotency } = validate({ dataJson: ' { "action_url": "https://x.test/a" } ' });
    expect(campaign).toEqual({
      appId: APP,
      name: "Black Friday",
      contents: { en: { title: "Hi", body: "Deals inside" }, de: { title: "Hallo", body: "Angebote" } },
      dataJson: '{"action_url":"https://x.test/a"}',
      target: { kind: "all" },
      options: { ttlSeconds: 0, priority: "normal" },
    });
    expect(idempotency).toBeUndefined();
  });

  it("checks app_id and name (400)", () => {
    expect(shape({ appId: "nope" })).toEqual({ code: Code.InvalidArgument, message: "app_id must be a UUID" });
    expect(shape({ name: "" }).code).toBe(Code.InvalidArgument);
    expect(shape({ name: "x".repeat(201) }).code).toBe(Code.InvalidArgument);
    expect(() => validate({ name: "😀".repeat(200) })).not.toThrow();
  });

  describe("contents", () => {
    it("needs 1 to 100 languages keyed by lowercase ISO 639-1 codes (400)", () => {
      expect(shape({ contents: {} }).code).toBe(Code.InvalidArgument);
      for (const key of ["EN", "eng", "xx", "en-US", ""]) {
        expect(shape({ contents: { en: { title: "a" }, [key]: { title: "b" } } }).code).toBe(Code.InvalidArgument);
      }
    });

    it("limits title and body and needs one of them (400)", () => {
      expect(shape({ contents: { en: { title: "t".repeat(257) } } }).message).toMatch(/contents\.en\.title/);
      expect(shape({ contents: { en: { body: "b".repeat(2049) } } }).message).toMatch(/contents\.en\.body/);
      expect(shape({ contents: { en: { title: "", body: "" } } })).toEqual({
        code: Code.InvalidArgument,
        message: "contents.en needs a title or a body",
      });
      expect(() => validate({ contents: { en: { body: "only a body" } } })).not.toThrow();
    });

    it('needs the "en" fallback (422)', () => {
      expect(shape({ contents: { de: { title: "Hallo" } } })).toEqual({
        code: Code.FailedPrecondition,
        message: 'contents must include an "en" entry, the fallback language',
      });
    });

    it("reports shape problems before the missing fallback", () => {
      expect(shape({ contents: { de: { title: "t".repeat(300) } } }).code).toBe(Code.InvalidArgument);
    });
  });

  describe("data", () => {
    it("must be a JSON object (400)", () => {
      for (const dataJson of ["{", "[1]", "null", '"text"', "42"]) {
        expect(shape({ dataJson }).code).toBe(Code.InvalidArgument);
      }
    });

    it('must not hold "aps" (400)', () => {
      expect(shape({ dataJson: '{"aps":{}}' })).toEqual({
        code: Code.InvalidArgument,
        message: 'data must not contain the key "aps"',
      });
      expect(() => validate({ dataJson: '{"nested":{"aps":1}}' })).not.toThrow();
    });

    it("must fit 3 KB (400)", () => {
      expect(shape({ dataJson: JSON.stringify({ k: "v".repeat(LIMITS.dataBytes) }) }).code).toBe(Code.InvalidArgument);
      expect(shape({ dataJson: `{${" ".repeat(LIMITS.dataBytes * 16)}}` }).code).toBe(Code.InvalidArgument);
      expect(validate({ dataJson: `{ "k": "v" ${" ".repeat(LIMITS.dataBytes)}}` }).campaign.dataJson).toBe('{"k":"v"}');
    });

    it("keeps any JSON values and treats {} as no data", () => {
      expect(validate({ dataJson: '{"a":[1,{"b":null}],"c":true}' }).campaign.dataJson).toBe(
        '{"a":[1,{"b":null}],"c":true}',
      );
      expect(validate({ dataJson: "{}" }).campaign.dataJson).toBe("");
    });
  });

  describe("target", () => {
    it("is required (400)", () => {
      expect(shape({ target: {} }).code).toBe(Code.InvalidArgument);
    });

    it("deduplicates external ids and bounds them (400)", () => {
      const ids = (externalIds: string[]) => ({
        target: { target: { case: "externalIds" as const, value: { externalIds } } },
      });
      expect(validate(ids(["u1", "u2", "u1"])).campaign.target).toEqual({
        kind: "external_ids",
        externalIds: ["u1", "u2"],
      });
      expect(shape(ids([])).code).toBe(Code.InvalidArgument);
      expect(shape(ids(["u1", ""])).code).toBe(Code.InvalidArgument);
      expect(shape(ids(["x".repeat(256)])).code).toBe(Code.InvalidArgument);
      const many = Array.from({ length: LIMITS.externalIds + 1 }, (_, i) => `u${i}`);
      expect(shape(ids(many)).code).toBe(Code.InvalidArgument);
      expect(() => validate(ids(many.slice(1)))).not.toThrow();
    });

    it("needs a UUID segment_id (400)", () => {
      const seg = (segmentId: string) => ({ target: { target: { case: "segment" as const, value: { segmentId } } } });
      expect(shape(seg("vip")).code).toBe(Code.InvalidArgument);
      expect(validate(seg(APP.toUpperCase())).campaign.target).toEqual({ kind: "segment", segmentId: APP });
    });

    it("deduplicates device ids, lowercases them and needs 1 to 100 UUIDs (400)", () => {
      const ids = (deviceIds: string[]) => ({
        target: { target: { case: "deviceIds" as const, value: { deviceIds } } },
      });
      const uuid = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
      expect(validate(ids([APP.toUpperCase(), APP, uuid(1)])).campaign.target).toEqual({
        kind: "device_ids",
        deviceIds: [APP, uuid(1)],
      });
      expect(shape(ids([])).message).toBe("device_ids must hold 1 to 100 distinct ids");
      expect(shape(ids([APP, "device-1"])).message).toBe("device_ids must be UUIDs");
      const many = Array.from({ length: LIMITS.deviceIds + 1 }, (_, i) => uuid(i));
      expect(shape(ids(many)).code).toBe(Code.InvalidArgument);
      expect(() => validate(ids(many.slice(1)))).not.toThrow();
    });
  });

  describe("options", () => {
    it("bounds ttl, collapse_id and priority (400)", () => {
      expect(shape({ options: { ttlSeconds: LIMITS.ttlSeconds + 1 } }).code).toBe(Code.InvalidArgument);
      expect(shape({ options: { collapseId: "é".repeat(33) } }).code).toBe(Code.InvalidArgument);
      expect(shape({ options: { priority: 7 as Priority } }).code).toBe(Code.InvalidArgument);
      const ok = validate({ options: { ttlSeconds: 3600, priority: Priority.HIGH, collapseId: "c".repeat(64) } });
      expect(ok.campaign.options).toEqual({ ttlSeconds: 3600, priority: "high", collapseId: "c".repeat(64) });
    });

    it("needs an https image_url of at most 2048 characters (400)", () => {
      for (const imageUrl of [
        "http://img.test/a.png",
        "not a url",
        `https://img.test/${"a".repeat(2040)}`,
        "javascript:alert(1)",
      ]) {
        expect(shape({ options: { imageUrl } }).code).toBe(Code.InvalidArgument);
      }
      expect(validate({ options: { imageUrl: "https://img.test/a.png" } }).campaign.options.imageUrl).toBe(
        "https://img.test/a.png",
      );
    });
  });

  describe("scheduled_at", () => {
    const at = (ms: number) => ({ scheduledAt: timestampFromDate(new Date(NOW.getTime() + ms)) });

    it("may be a few seconds past (queued at once) or up to a year ahead (scheduled)", () => {
      expect(initialStatus(validate(at(-4_000)).campaign, NOW)).toBe("queued");
      expect(initialStatus(validate(at(2_000)).campaign, NOW)).toBe("scheduled");
      expect(initialStatus(validate().campaign, NOW)).toBe("queued");
      expect(() => validate(at(LIMITS.scheduleHorizonMs))).not.toThrow();
    });

    it("must be a representable time (400)", () => {
      expect(shape({ scheduledAt: { seconds: 10n ** 15n } })).toEqual({
        code: Code.InvalidArgument,
        message: "scheduled_at must be a valid timestamp",
      });
    });

    it("is refused in the past or beyond a year (422)", () => {
      expect(shape(at(-6_000))).toEqual({ code: Code.FailedPrecondition, message: "scheduled_at is in the past" });
      expect(shape(at(LIMITS.scheduleHorizonMs + 1_000)).code).toBe(Code.FailedPrecondition);
    });
  });

  describe("payload size, as each platform's sender builds it", () => {
    it("refuses a language whose web notification does not fit one record (422)", () => {
      const big = { title: "t".repeat(256), body: "b".repeat(2048) };
      const data = JSON.stringify({ k: "😀".repeat(700) });
      expect(shape({ contents: { en: { title: "ok" }, fr: big }, dataJson: data })).toEqual({
        code: Code.FailedPrecondition,
        message: "payload too large for fr: the web notification exceeds 3993 bytes with data",
      });
      expect(() => validate({ contents: { en: big } })).not.toThrow();
    });

    it("refuses one that fits the web but not APNs' 4096 bytes (sound and thread-id go to iOS only)", () => {
      const contents = { en: { title: "t".repeat(256), body: "b".repeat(500) } };
      const dataJson = JSON.stringify({ k: "v".repeat(3050) });
      const ios = { sound: "s".repeat(64), threadId: "x".repeat(64), badge: 99_999, mutableContent: true };
      expect(() => validate({ contents, dataJson })).not.toThrow();
      expect(shape({ contents, dataJson, options: { notification: ios } })).toEqual({
        code: Code.FailedPrecondition,
        message: "payload too large for en: the ios notification exceeds 4096 bytes with data",
      });
    });

    it("refuses one that fits the web but not FCM's 4096 bytes (FCM data values are strings)", () => {
      const contents = { en: { title: "t".repeat(256), body: "b".repeat(300) } };
      // 300 numbers: each becomes a quoted string in FCM's data, two bytes more apiece.
      const dataJson = JSON.stringify(Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${100 + i}`, 1])));
      const android = {
        ttlSeconds: 3600,
        collapseId: "c".repeat(64),
        notification: { androidChannelId: "n".repeat(64) },
      };
      expect(() => validate({ contents, dataJson })).not.toThrow();
      expect(shape({ contents, dataJson, options: android })).toEqual({
        code: Code.FailedPrecondition,
        message: "payload too large for en: the android notification exceeds 4096 bytes with data",
      });
    });
  });

  it("checks the idempotency key and carries its scope", () => {
    expect(validate({ idempotencyKey: "k-1", idempotencyScope: "key-9" }).idempotency).toEqual({
      scope: "key-9",
      key: "k-1",
    });
    expect(shape({ idempotencyKey: "" }).code).toBe(Code.InvalidArgument);
    expect(shape({ idempotencyKey: "k".repeat(256) }).code).toBe(Code.InvalidArgument);
  });
});
