import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newSecret, webhookHeaders } from "./signature.js";

describe("webhook signatures", () => {
  it("verify with the Standard Webhooks reference library, one secret or two", () => {
    const a = newSecret();
    const b = newSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const body = JSON.stringify({ type: "webhook.test", timestamp: new Date().toISOString(), data: { x: 1 } });
    const ts = Math.floor(Date.now() / 1000);
    const one = webhookHeaders([a], "evt_1", ts, body);
    expect(new Webhook(a).verify(body, one)).toMatchObject({ data: { x: 1 } });
    expect(() => new Webhook(b).verify(body, one)).toThrow();
    const both = webhookHeaders([b, a], "evt_1", ts, body);
    expect(String(both["webhook-signature"]).split(" ")).toHaveLength(2);
    new Webhook(a).verify(body, both);
    new Webhook(b).verify(body, both);
    expect(() => new Webhook(a).verify(`${body} `, both)).toThrow();
  });
});
