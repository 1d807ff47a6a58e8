import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { InAppMessageSettingsSchema } from "@herald/proto/in_app_message";
import { toTimestamp } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { IN_APP_LIMITS, inAppFields, requireFallback, requireWindow } from "./in-app-message-checks.js";

const settings = (init: MessageInitShape<typeof InAppMessageSettingsSchema>) =>
  create(InAppMessageSettingsSchema, init);
const en = { en: { title: "Hello", body: "World" } };
const SEGMENT = "7C9E6679-7425-40DE-944B-E07FC1F90AE7";

function failure(fn: () => unknown, code: Code): string {
  try {
    fn();
  } catch (err) {
    const e = ConnectError.from(err);
    expect(e.code).toBe(code);
    return e.rawMessage;
  }
  throw new Error(`expected ${Code[code]}`);
}
const invalid = (init: MessageInitShape<typeof InAppMessageSettingsSchema>) =>
  failure(() => inAppFields(settings(init)), Code.InvalidArgument);

describe("inAppFields", () => {
  it("takes every setting, clearing with the empty values", () => {
    const starts = new Date("2030-01-01T00:00:00.000Z");
    expect(
      inAppFields(
        settings({
          name: "Welcome",
          contents: { entries: { ...en, de: { title: "Hallo", body: "Welt" } } },
          imageUrl: "https://cdn.example/a.png",
          actionUrl: "http://example.com/go",
          audience: { target: { case: "segmentId", value: SEGMENT } },
          startsAt: { at: toTimestamp(starts) },
          endsAt: {},
          priority: 100,
          maxImpressions: 3,
        }),
      ),
    ).toEqual({
      name: "Welcome",
      contents: { en: { title: "Hello", body: "World" }, de: { title: "Hallo", body: "Welt" } },
      imageUrl: "https://cdn.example/a.png",
      actionUrl: "http://example.com/go",
      audience: { kind: "segment", segmentId: SEGMENT.toLowerCase() },
      startsAt: starts,
      endsAt: null,
      priority: 100,
      maxImpressions: 3,
    });
    expect(inAppFields(settings({ imageUrl: "", actionUrl: "", maxImpressions: 0 }))).toEqual({
      imageUrl: null,
      actionUrl: null,
      maxImpressions: null,
    });
    expect(inAppFields(settings({}))).toEqual({});
    expect(inAppFields(undefined)).toEqual({});
  });

  it("keeps distinct external ids in order", () => {
    const fields = inAppFields(
      settings({ audience: { target: { case: "externalIds", value: { externalIds: ["u2", "u1", "u2"] } } } }),
    );
    expect(fields.audience).toEqual({ kind: "external_ids", externalIds: ["u2", "u1"] });
    expect(inAppFields(settings({ audience: { target: { case: "all", value: {} } } })).audience).toEqual({
      kind: "all",
    });
  });

  it("refuses language keys that are not ISO 639-1 codes, as sends do", () => {
    for (const key of ["EN", "eng", "xx", "en-US"]) {
      expect(invalid({ contents: { entries: { ...en, [key]: { title: "a", body: "b" } } } })).toMatch(
        /contents keys must be ISO 639-1 codes/,
      );
    }
    expect(invalid({ contents: { entries: {} } })).toMatch(/1 to 100 languages/);
  });

  it("needs a title and a body within their lengths", () => {
    expect(invalid({ contents: { entries: { en: { title: "", body: "b" } } } })).toBe(
      "contents.en.title must be 1 to 200 characters",
    );
    expect(invalid({ contents: { entries: { en: { title: "t", body: "" } } } })).toBe(
      "contents.en.body must be 1 to 2000 characters",
    );
    // Characters, not UTF-16 units: 200 emoji fit.
    const title = "😀".repeat(IN_APP_LIMITS.titleLength);
    expect(inAppFields(settings({ contents: { entries: { en: { title, body: "b" } } } })).contents?.en?.title).toBe(
      title,
    );
    expect(invalid({ contents: { entries: { en: { title: `${title}x`, body: "b" } } } })).toMatch(/title/);
  });

  it("checks names, URLs, audiences, priority and the impression limit", () => {
    expect(invalid({ name: "" })).toMatch(/^name must be 1 to 200/);
    expect(invalid({ name: "a\nb" })).toMatch(/^name/);
    expect(invalid({ imageUrl: "http://example.com/a.png" })).toBe(
      "image_url must be an https URL of at most 2048 characters",
    );
    expect(invalid({ imageUrl: "https://" })).toMatch(/^image_url/);
    expect(invalid({ actionUrl: "javascript:alert(1)" })).toBe(
      "action_url must be an http or https URL of at most 2048 characters",
    );
    expect(invalid({ actionUrl: `https://example.com/${"a".repeat(2048)}` })).toMatch(/^action_url/);
    expect(invalid({ audience: { target: { case: "segmentId", value: "beta" } } })).toBe(
      "audience.segment_id must be a UUID",
    );
    expect(invalid({ audience: { target: { case: "externalIds", value: { externalIds: [] } } } })).toMatch(
      /1 to 10000 distinct ids/,
    );
    expect(invalid({ audience: { target: { case: "externalIds", value: { externalIds: [""] } } } })).toMatch(
      /non-empty strings/,
    );
    expect(invalid({ audience: {} })).toMatch(/audience must be one of/);
    expect(invalid({ priority: 101 })).toBe("priority must be 0 to 100");
    expect(invalid({ maxImpressions: IN_APP_LIMITS.maxImpressions + 1 })).toMatch(/^max_impressions/);
  });
});

describe("the 422 rules", () => {
  it("need the en fallback", () => {
    expect(failure(() => requireFallback({ de: { title: "a", body: "b" } }), Code.FailedPrecondition)).toBe(
      'contents must include an "en" entry, the fallback language',
    );
    expect(() => requireFallback(en)).not.toThrow();
  });

  it("need an end after the start, when both are set", () => {
    const t = new Date("2030-01-01T00:00:00.000Z");
    expect(failure(() => requireWindow(t, t), Code.FailedPrecondition)).toBe("ends_at must be after starts_at");
    expect(() => requireWindow(t, new Date(t.getTime() + 1))).not.toThrow();
    expect(() => requireWindow(null, t)).not.toThrow();
    expect(() => requireWindow(t, null)).not.toThrow();
  });
});
