import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { DeviceInAppMessageSchema, InAppMessageSchema } from "@herald/proto/in_app_message";
import { describe, expect, it } from "vitest";
import { deviceInAppMessageView, inAppMessageView, toInAppSettings } from "./in-app-message-views.js";

const T1 = timestampFromDate(new Date("2026-11-21T10:00:00.000Z"));
const T2 = timestampFromDate(new Date("2026-11-22T10:00:00.000Z"));
const ID = "0b5e3c1a-9f2d-4e8b-a7c6-5d4e3f2a1b0c";
const APP_ID = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";

describe("toInAppSettings", () => {
  it("passes what the body sets and leaves the rest unset", () => {
    expect(toInAppSettings({ name: "x" })).toEqual({ name: "x", priority: undefined });
    expect(
      toInAppSettings({
        name: "x",
        contents: { en: { title: "t", body: "b" } },
        image_url: "https://cdn.example/a.png",
        action_url: "https://example.com",
        audience: { kind: "external_ids", external_ids: ["u1"] },
        starts_at: "2026-11-21T11:00:00+01:00",
        ends_at: "2026-11-22T10:00:00Z",
        priority: 3,
        max_impressions: 2,
      }),
    ).toEqual({
      name: "x",
      contents: { entries: { en: { title: "t", body: "b" } } },
      imageUrl: "https://cdn.example/a.png",
      actionUrl: "https://example.com",
      audience: { target: { case: "externalIds", value: { externalIds: ["u1"] } } },
      startsAt: { at: T1 },
      endsAt: { at: T2 },
      priority: 3,
      maxImpressions: 2,
    });
  });

  it("turns null into the registry's clear values", () => {
    expect(
      toInAppSettings({ image_url: null, action_url: null, starts_at: null, ends_at: null, max_impressions: null }),
    ).toMatchObject({ imageUrl: "", actionUrl: "", startsAt: {}, endsAt: {}, maxImpressions: 0 });
    expect(toInAppSettings({ audience: { kind: "all" } }).audience).toEqual({ target: { case: "all", value: {} } });
    expect(toInAppSettings({ audience: { kind: "segment", segment_id: ID } }).audience).toEqual({
      target: { case: "segmentId", value: ID },
    });
  });

  it("refuses a leap second, which the format admits but no clock represents", () => {
    expect(() => toInAppSettings({ starts_at: "2026-12-31T23:59:60Z" })).toThrow(
      /starts_at is not a representable time/,
    );
  });
});

describe("views", () => {
  it("render a message with nulls where unset and counters as numbers", () => {
    const message = create(InAppMessageSchema, {
      id: ID,
      appId: APP_ID,
      name: "x",
      contents: { en: { title: "t", body: "b" } },
      audience: { target: { case: "segmentId", value: ID } },
      priority: 1,
      stats: { impressions: 5n, clicks: 2n, dismissals: 1n, devices: 4n },
      createdAt: T1,
      updatedAt: T2,
    });
    expect(inAppMessageView(message)).toEqual({
      id: ID,
      app_id: APP_ID,
      name: "x",
      contents: { en: { title: "t", body: "b" } },
      image_url: null,
      action_url: null,
      audience: { kind: "segment", segment_id: ID },
      starts_at: null,
      ends_at: null,
      priority: 1,
      max_impressions: null,
      stats: { impressions: 5, clicks: 2, dismissals: 1, devices: 4 },
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-22T10:00:00.000Z",
    });
  });

  it("render a device's message", () => {
    const m = create(DeviceInAppMessageSchema, {
      id: ID,
      language: "de",
      title: "Hallo",
      body: "Welt",
      actionUrl: "https://example.com",
      priority: 2,
      endsAt: T2,
    });
    expect(deviceInAppMessageView(m)).toEqual({
      id: ID,
      language: "de",
      title: "Hallo",
      body: "Welt",
      image_url: null,
      action_url: "https://example.com",
      priority: 2,
      ends_at: "2026-11-22T10:00:00.000Z",
    });
  });
});
