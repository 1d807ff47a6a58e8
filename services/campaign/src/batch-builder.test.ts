import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Platform } from "@herald/proto/common";
import { AudienceDeviceSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { batchMsgId, buildDeliveryBatch, contentLanguage, type DeliveryContext } from "./batch-builder.js";

const ctx: DeliveryContext = {
  campaignId: "c0000000-0000-4000-8000-000000000001",
  appId: "a0000000-0000-4000-8000-000000000001",
  contents: {
    en: { title: "Hello", body: "World" },
    de: { title: "Hallo", body: "Welt" },
    fr: { title: "Bonjour", body: "Monde" },
  },
  dataJson: '{"action_url":"https://x.test"}',
  ttlSeconds: 600,
  highPriority: true,
  collapseId: "sale",
  createdAt: new Date("2026-11-21T10:00:00.000Z"),
};

const device = (n: number, language?: string) =>
  create(AudienceDeviceSchema, { id: `d-${n}`, platform: Platform.WEB, pushToken: `tok-${n}`, language });

describe("contentLanguage", () => {
  it("uses the device's language when the campaign has it, else en", () => {
    expect(contentLanguage(ctx.contents, "de")).toBe("de");
    expect(contentLanguage(ctx.contents, "pt")).toBe("en");
    expect(contentLanguage(ctx.contents, undefined)).toBe("en");
    expect(contentLanguage(ctx.contents, "constructor")).toBe("en");
  });
});

describe("buildDeliveryBatch", () => {
  it("renders each target's language, falling back to en", () => {
    const batch = buildDeliveryBatch(ctx, "web", 7, [
      device(1, "de"),
      device(2, "pt"),
      device(3),
      device(4, "de"),
      device(5, "en"),
    ]);
    const rendered = batch.targets.map((t) => {
      const p = batch.payloads.find((x) => x.index === t.payloadIndex)!;
      return [t.deviceId, t.pushToken, p.title, p.body];
    });
    expect(rendered).toEqual([
      ["d-1", "tok-1", "Hallo", "Welt"],
      ["d-2", "tok-2", "Hello", "World"],
      ["d-3", "tok-3", "Hello", "World"],
      ["d-4", "tok-4", "Hallo", "Welt"],
      ["d-5", "tok-5", "Hello", "World"],
    ]);
  });

  it("carries only the payloads its targets use, indexed from 0 in order of first use", () => {
    const batch = buildDeliveryBatch(ctx, "web", 0, [device(1, "fr"), device(2, "fr"), device(3, "es")]);
    expect(batch.payloads.map((p) => [p.index, p.title])).toEqual([
      [0, "Bonjour"],
      [1, "Hello"],
    ]);
    expect(batch.targets.map((t) => t.payloadIndex)).toEqual([0, 0, 1]);
  });

  it("carries the campaign's delivery fields", () => {
    const batch = buildDeliveryBatch(ctx, "android", 12, [device(1)]);
    expect(batch.campaignId).toBe(ctx.campaignId);
    expect(batch.appId).toBe(ctx.appId);
    expect(batch.platform).toBe(Platform.ANDROID);
    expect(batch.sequence).toBe(12n);
    expect(batch.dataJson).toBe(ctx.dataJson);
    expect(batch.ttlSeconds).toBe(600);
    expect(batch.highPriority).toBe(true);
    expect(batch.collapseId).toBe("sale");
    expect(batch.imageUrl).toBeUndefined();
    expect(timestampDate(batch.createdAt!)).toEqual(ctx.createdAt);
  });

  it("can be empty (a re-published batch whose devices are gone)", () => {
    const batch = buildDeliveryBatch(ctx, "ios", 3, []);
    expect(batch.targets).toEqual([]);
    expect(batch.payloads).toEqual([]);
  });

  it("is identified by campaign and sequence for de-duplication", () => {
    expect(batchMsgId(ctx.campaignId, 3)).toBe(`${ctx.campaignId}.3`);
  });
});

describe("buildDeliveryBatch delivery options", () => {
  it("carries the campaign's presentation options to every batch, and none when it has none", () => {
    const notification = {
      sound: "chime",
      badgeIncrement: 2,
      threadId: "t",
      mutableContent: true,
      webIconUrl: "https://x.test/i.png",
      webActions: [{ action: "open", title: "Open" }],
      androidChannelId: "news",
    };
    const batch = buildDeliveryBatch({ ...ctx, notification }, "ios", 1, [device(1)]);
    expect(batch.notification).toMatchObject({ ...notification, contentAvailable: false });
    expect(batch.notification?.badge).toBeUndefined();
    expect(buildDeliveryBatch(ctx, "ios", 1, [device(1)]).notification).toBeUndefined();
  });
});
