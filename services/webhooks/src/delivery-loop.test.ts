import { randomUUID } from "node:crypto";
import { ATTR } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { spanAttributes } from "./delivery-loop.js";
import { describeDuration } from "./webhook-store.js";

describe("the attempt span's attributes", () => {
  const base = { event_id: "evt_1", endpoint_id: randomUUID(), app_id: randomUUID() };

  it("carry the campaign of campaign.* and deliveries.* events", () => {
    const campaignId = randomUUID();
    for (const type of ["campaign.completed", "deliveries.failed"]) {
      const data = JSON.stringify({ campaign_id: campaignId, app_id: base.app_id, deliveries: [] });
      expect(spanAttributes({ ...base, type, data })).toEqual({
        "herald.webhook.event_id": "evt_1",
        "herald.webhook.endpoint_id": base.endpoint_id,
        "herald.webhook.event_type": type,
        [ATTR.appId]: base.app_id,
        [ATTR.campaignId]: campaignId,
      });
    }
  });

  it("carry no campaign for other events, nor a campaign_id that is not an id", () => {
    const data = JSON.stringify({ campaign_id: randomUUID(), device_id: randomUUID() });
    expect(spanAttributes({ ...base, type: "device.invalidated", data })).not.toHaveProperty(ATTR.campaignId);
    for (const odd of ['{"campaign_id":"c1"}', '{"campaign_id":42}', "[]", "null", "{"]) {
      expect(spanAttributes({ ...base, type: "campaign.started", data: odd })).not.toHaveProperty(ATTR.campaignId);
    }
  });
});

describe("describeDuration", () => {
  it("names a window in the largest unit that divides it", () => {
    expect(describeDuration(5 * 24 * 3600 * 1000)).toBe("5 days");
    expect(describeDuration(24 * 3600 * 1000)).toBe("1 day");
    expect(describeDuration(36 * 3600 * 1000)).toBe("36 hours");
    expect(describeDuration(90 * 60 * 1000)).toBe("90 minutes");
    expect(describeDuration(2_000)).toBe("2 seconds");
    expect(describeDuration(1_500)).toBe("1500 ms");
  });
});
