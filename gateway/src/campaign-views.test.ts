import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { CampaignSchema, CampaignStatus, CampaignTargetSchema, Priority } from "@herald/proto/campaign";
import { Platform } from "@herald/proto/common";
import { SegmentSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { noCounts } from "../test/campaign-stats.js";
import { campaignStatsView, campaignView, segmentRuleView, segmentView, targetView } from "./campaign-views.js";

const T1 = timestampFromDate(new Date("2026-11-21T10:00:00.000Z"));
const T2 = timestampFromDate(new Date("2026-11-21T10:05:30.250Z"));
const APP_ID = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
const CAMPAIGN_ID = "0b5e3c1a-9f2d-4e8b-a7c6-5d4e3f2a1b0c";
const SEGMENT_ID = "4a3b2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d";

const minimal = (fields: Omit<MessageInitShape<typeof CampaignSchema>, "$typeName"> = {}) =>
  create(CampaignSchema, {
    id: CAMPAIGN_ID,
    appId: APP_ID,
    name: "Spring sale",
    status: CampaignStatus.QUEUED,
    contents: { en: { title: "Hi", body: "" } },
    target: { target: { case: "all", value: {} } },
    createdAt: T1,
    updatedAt: T1,
    ...fields,
  });

describe("campaignView", () => {
  it("renders an immediate send with nulls for everything not yet known", () => {
    expect(campaignView(minimal())).toEqual({
      id: CAMPAIGN_ID,
      app_id: APP_ID,
      name: "Spring sale",
      status: "queued",
      audience_size: 0,
      sent_at: null,
      scheduled_at: null,
      completed_at: null,
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-21T10:00:00.000Z",
      contents: { en: { title: "Hi", body: null } },
      data: null,
      target: { type: "all" },
      ttl: 0,
      priority: "normal",
      collapse_id: null,
      image_url: null,
      failure_reason: null,
      stats: noCounts(CAMPAIGN_ID),
    });
  });

  it("renders timestamps, options, data and uint64 counters as numbers", () => {
    const view = campaignView(
      minimal({
        status: CampaignStatus.COMPLETED,
        audienceSize: 1_234_567n,
        scheduledAt: T1,
        sentAt: T1,
        completedAt: T2,
        updatedAt: T2,
        dataJson: '{"action_url":"https://acme.example/sale","n":1}',
        options: {
          ttlSeconds: 3600,
          priority: Priority.HIGH,
          collapseId: "sale",
          imageUrl: "https://acme.example/a.png",
        },
        stats: { sent: 1_234_567n, delivered: 1_234_000n, failed: 500n, bounced: 60n, throttled: 7n },
      }),
    );
    expect(view).toMatchObject({
      status: "completed",
      audience_size: 1_234_567,
      scheduled_at: "2026-11-21T10:00:00.000Z",
      sent_at: "2026-11-21T10:00:00.000Z",
      completed_at: "2026-11-21T10:05:30.250Z",
      data: { action_url: "https://acme.example/sale", n: 1 },
      ttl: 3600,
      priority: "high",
      collapse_id: "sale",
      image_url: "https://acme.example/a.png",
      stats: {
        campaign_id: CAMPAIGN_ID,
        sent: 1_234_567,
        delivered: 1_234_000,
        failed: 500,
        bounced: 60,
        throttled: 7,
      },
    });
    expect(typeof view.audience_size).toBe("number");
  });

  it.each([
    [CampaignStatus.SCHEDULED, "scheduled"],
    [CampaignStatus.QUEUED, "queued"],
    [CampaignStatus.SENDING, "sending"],
    [CampaignStatus.COMPLETED, "completed"],
    [CampaignStatus.CANCELLED, "cancelled"],
    [CampaignStatus.FAILED, "failed"],
  ])("maps status %s to %s", (status, name) => {
    expect(campaignView(minimal({ status })).status).toBe(name);
  });

  it("shows why a campaign failed", () => {
    expect(campaignView(minimal({ status: CampaignStatus.FAILED, failureReason: "segment not found" }))).toMatchObject({
      status: "failed",
      failure_reason: "segment not found",
    });
  });

  it("treats an unspecified status, a missing target or timestamp as a backend bug", () => {
    expect(() => campaignView(minimal({ status: CampaignStatus.UNSPECIFIED }))).toThrow(/status/);
    expect(() => campaignView(minimal({ target: {} }))).toThrow(/target/);
    expect(() =>
      campaignView(
        create(CampaignSchema, { status: CampaignStatus.QUEUED, target: { target: { case: "all", value: {} } } }),
      ),
    ).toThrow(/timestamp/);
  });
});

describe("targetView", () => {
  it("names the target and counts external ids instead of listing them", () => {
    const target = (t: MessageInitShape<typeof CampaignTargetSchema>) => targetView(create(CampaignTargetSchema, t));
    expect(target({ target: { case: "externalIds", value: { externalIds: ["a", "b", "c"] } } })).toEqual({
      type: "users",
      external_ids_count: 3,
    });
    expect(target({ target: { case: "segment", value: { segmentId: SEGMENT_ID } } })).toEqual({
      type: "segment",
      segment_id: SEGMENT_ID,
    });
    expect(target({ target: { case: "all", value: {} } })).toEqual({ type: "all" });
    expect(target({ target: { case: "deviceIds", value: { deviceIds: [SEGMENT_ID] } } })).toEqual({
      type: "devices",
      device_ids: [SEGMENT_ID],
    });
  });
});

describe("campaignStatsView", () => {
  it("renders zeros when the backend sent no counters", () => {
    expect(campaignStatsView(CAMPAIGN_ID, undefined)).toEqual(noCounts(CAMPAIGN_ID));
  });
});

describe("segmentView", () => {
  const segment = (fields: Omit<MessageInitShape<typeof SegmentSchema>, "$typeName"> = {}) =>
    create(SegmentSchema, { id: SEGMENT_ID, appId: APP_ID, name: "Beta", createdAt: T1, updatedAt: T2, ...fields });

  it("renders the set parts of the rule only, platforms as names, preview_count as a number", () => {
    const view = segmentView(
      segment({
        rule: { tagsAny: ["beta"], platforms: [Platform.IOS, Platform.WEB], languages: ["de"], hasExternalId: false },
        previewCount: 42n,
      }),
    );
    expect(view).toEqual({
      id: SEGMENT_ID,
      app_id: APP_ID,
      name: "Beta",
      rule: { tags_any: ["beta"], platforms: ["ios", "web"], languages: ["de"], has_external_id: false },
      preview_count: 42,
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-21T10:05:30.250Z",
    });
  });

  it("renders a missing preview as null", () => {
    expect(segmentView(segment({ rule: { tagsNone: ["churned"] } })).preview_count).toBeNull();
  });

  it("renders every kind of rule part", () => {
    const rule = segmentRuleView(
      segment({
        rule: {
          tagsAny: ["a"],
          tagsAll: ["b", "c"],
          tagsNone: ["d"],
          platforms: [Platform.ANDROID],
          languages: ["pt"],
          appVersions: ["2.0.0"],
          timezones: ["Europe/Berlin"],
          hasExternalId: true,
        },
      }).rule,
    );
    expect(rule).toEqual({
      tags_any: ["a"],
      tags_all: ["b", "c"],
      tags_none: ["d"],
      platforms: ["android"],
      languages: ["pt"],
      app_versions: ["2.0.0"],
      timezones: ["Europe/Berlin"],
      has_external_id: true,
    });
  });
});
