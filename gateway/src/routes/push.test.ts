import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { CreateCampaignRequestSchema, Priority } from "@herald/proto/campaign";
import { describe, expect, it } from "vitest";
import { HttpError } from "../http-errors.js";
import { toCreateCampaignRequest, type SendBody } from "./push.js";

const APP_ID = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
const SEGMENT_ID = "4a3b2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d";
const minimal: SendBody = { app_id: APP_ID, name: "Sale", contents: { en: { title: "Hi" } } };

/** The request as the client sends it: init shape → message, as Connect does. */
const request = (...args: Parameters<typeof toCreateCampaignRequest>) =>
  create(CreateCampaignRequestSchema, toCreateCampaignRequest(...args));

describe("toCreateCampaignRequest", () => {
  it("maps a minimal send to all devices, leaving defaults to the service", () => {
    const req = request(minimal, { type: "all" });
    expect(req.appId).toBe(APP_ID);
    expect(req.name).toBe("Sale");
    expect(req.contents.en).toMatchObject({ title: "Hi", body: "" });
    expect(req.dataJson).toBe("");
    expect(req.target?.target).toEqual({ case: "all", value: expect.anything() });
    expect(req.options).toMatchObject({ ttlSeconds: 0, priority: Priority.UNSPECIFIED });
    expect(req.options?.collapseId).toBeUndefined();
    expect(req.options?.imageUrl).toBeUndefined();
    expect(req.scheduledAt).toBeUndefined();
    expect(req.idempotencyKey).toBeUndefined();
    expect(req.idempotencyScope).toBe("");
  });

  it("serialises data to data_json and maps every option", () => {
    const req = request(
      {
        ...minimal,
        contents: { en: { title: "Hi", body: "Sale" }, de: { body: "Angebot" } },
        data: { action_url: "https://acme.example/sale", nested: { n: 1 } },
        scheduled_at: "2026-11-21T11:00:00+01:00",
        ttl: 3600,
        priority: "high",
        collapse_id: "sale",
        image_url: "https://acme.example/a.png",
      },
      { type: "all" },
    );
    expect(JSON.parse(req.dataJson)).toEqual({ action_url: "https://acme.example/sale", nested: { n: 1 } });
    expect(req.contents.de).toMatchObject({ title: "", body: "Angebot" });
    expect(req.options).toMatchObject({
      ttlSeconds: 3600,
      priority: Priority.HIGH,
      collapseId: "sale",
      imageUrl: "https://acme.example/a.png",
    });
    expect(timestampDate(req.scheduledAt!).toISOString()).toBe("2026-11-21T10:00:00.000Z");
    expect(request({ ...minimal, priority: "normal" }, { type: "all" }).options?.priority).toBe(Priority.NORMAL);
  });

  it("maps the users and segment targets", () => {
    const users = request(minimal, { type: "users", external_ids: ["u-1", "u-2"] });
    expect(users.target?.target.case).toBe("externalIds");
    expect(users.target?.target.value).toMatchObject({ externalIds: ["u-1", "u-2"] });
    const segment = request(minimal, { type: "segment", segment_id: SEGMENT_ID });
    expect(segment.target?.target.case).toBe("segment");
    expect(segment.target?.target.value).toMatchObject({ segmentId: SEGMENT_ID });
  });

  it("passes the idempotency key with the caller's scope", () => {
    const req = request(minimal, { type: "all" }, { key: "retry-1", scope: "key:k-1" });
    expect(req.idempotencyKey).toBe("retry-1");
    expect(req.idempotencyScope).toBe("key:k-1");
  });

  it("refuses a date-time no clock can represent (a leap second) as a validation error", () => {
    try {
      toCreateCampaignRequest({ ...minimal, scheduled_at: "2026-12-31T23:59:60Z" }, { type: "all" });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(HttpError);
      expect(err).toMatchObject({ status: 400, errorName: "ValidationError" });
    }
  });
});
