import { describe, expect, it } from "vitest";
import { actionUrl, nextBadge, notificationOf, parsePayload } from "./notification.js";

const campaign_id = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";

describe("what the service worker shows", () => {
  it("passes Herald's payload to showNotification under the Notifications API's names", () => {
    const payload = parsePayload(
      JSON.stringify({
        campaign_id,
        title: "Sale",
        body: "Now",
        data: { action_url: "https://example.com/sale", n: 1 },
        image: "https://example.com/i.png",
        icon: "https://example.com/icon.png",
        badge: "https://example.com/badge.png",
        actions: [{ action: "open", title: "Open" }],
      }),
    );
    expect(notificationOf(payload!)).toEqual({
      title: "Sale",
      options: {
        body: "Now",
        tag: `herald:${campaign_id}`,
        image: "https://example.com/i.png",
        icon: "https://example.com/icon.png",
        badge: "https://example.com/badge.png",
        actions: [{ action: "open", title: "Open" }],
        data: { campaign_id, data: { action_url: "https://example.com/sale", n: 1 } },
      },
    });
  });

  it("shows silent sends without noise and takes foreign payloads for none of Herald's", () => {
    const silent = notificationOf({ title: "t", body: "b", content_available: true });
    expect(silent.options).toMatchObject({ silent: true, data: { data: {} } });
    expect(silent.options.tag).toBeUndefined();
    expect(parsePayload("not json")).toBeUndefined();
    expect(parsePayload(JSON.stringify({ title: 1, body: "b" }))).toBeUndefined();
    expect(parsePayload("[]")).toBeUndefined();
  });

  it("opens only http and https action URLs", () => {
    const base = "https://site.example/";
    expect(actionUrl({ action_url: "https://example.com/x?y=1" }, base)).toBe("https://example.com/x?y=1");
    expect(actionUrl({ action_url: "/inbox" }, base)).toBe("https://site.example/inbox");
    expect(actionUrl({ action_url: "http://example.com" }, base)).toBe("http://example.com/");
    for (const bad of ["javascript:alert(1)", "data:text/html,hi", "file:///etc/passwd", 42, undefined]) {
      expect(actionUrl({ action_url: bad }, base), String(bad)).toBeUndefined();
    }
    expect(actionUrl(undefined, base)).toBeUndefined();
  });

  it("sets or raises the app badge", () => {
    expect(nextBadge({ title: "", body: "", badge_count: 3 }, 9)).toBe(3);
    expect(nextBadge({ title: "", body: "", badge_increment: 2 }, 9)).toBe(11);
    expect(nextBadge({ title: "", body: "", badge_increment: 2 }, undefined)).toBe(2);
    expect(nextBadge({ title: "", body: "" }, 9)).toBeUndefined();
  });
});
