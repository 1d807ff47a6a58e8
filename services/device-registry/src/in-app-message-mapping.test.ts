import { describe, expect, it } from "vitest";
import { toTimestamp } from "@herald/runtime";
import { toDeviceMessage, toInAppMessage } from "./in-app-message-mapping.js";
import type { DeviceCandidateRow, InAppMessageRow } from "./in-app-message-store.js";

const ID = "00000000-0000-4000-8000-000000000001";
const candidate = (over: Partial<DeviceCandidateRow> = {}): DeviceCandidateRow => ({
  id: ID,
  own: null,
  fallback: { title: "Hello", body: "World" },
  image_url: null,
  action_url: null,
  priority: 0,
  ends_at: null,
  segment_id: null,
  segment_rule: null,
  ...over,
});

describe("toDeviceMessage", () => {
  it("shows the device's language when the message has it", () => {
    const ends = new Date("2030-01-01T00:00:00.000Z");
    expect(
      toDeviceMessage(
        candidate({
          own: { title: "Hallo", body: "Welt" },
          image_url: "https://cdn.example/a.png",
          action_url: "https://example.com",
          priority: 5,
          ends_at: ends,
        }),
        "de",
      ),
    ).toEqual({
      id: ID,
      language: "de",
      title: "Hallo",
      body: "Welt",
      imageUrl: "https://cdn.example/a.png",
      actionUrl: "https://example.com",
      priority: 5,
      endsAt: toTimestamp(ends),
    });
  });

  it("falls back to en for a language the message lacks, and for a device without one", () => {
    expect(toDeviceMessage(candidate(), "ja")).toMatchObject({ language: "en", title: "Hello", body: "World" });
    expect(toDeviceMessage(candidate({ own: { title: "x", body: "y" } }), null)).toMatchObject({
      language: "en",
      title: "Hello",
    });
    expect(toDeviceMessage(candidate(), "en")).toMatchObject({ imageUrl: undefined, endsAt: undefined });
  });
});

describe("toInAppMessage", () => {
  const row: InAppMessageRow = {
    id: ID,
    app_id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
    name: "Welcome",
    contents: { en: { title: "Hello", body: "World" } },
    image_url: null,
    action_url: null,
    audience_kind: "all",
    segment_id: null,
    external_ids: null,
    starts_at: null,
    ends_at: null,
    priority: 0,
    max_impressions: null,
    impressions: "12",
    clicks: "3",
    dismissals: "1",
    devices: "5",
    created_at: new Date(0),
    updated_at: new Date(0),
  };

  it("maps each audience kind and the counters", () => {
    expect(toInAppMessage(row)).toMatchObject({
      audience: { target: { case: "all", value: {} } },
      stats: { impressions: 12n, clicks: 3n, dismissals: 1n, devices: 5n },
      maxImpressions: undefined,
      startsAt: undefined,
    });
    expect(toInAppMessage({ ...row, audience_kind: "segment", segment_id: ID }).audience).toEqual({
      target: { case: "segmentId", value: ID },
    });
    expect(toInAppMessage({ ...row, audience_kind: "external_ids", external_ids: ["u1"] }).audience).toEqual({
      target: { case: "externalIds", value: { externalIds: ["u1"] } },
    });
  });
});
