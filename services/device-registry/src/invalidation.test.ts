import { timestampFromDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { toInvalidation } from "./invalidation.js";

const DEVICE = "7c9e6679-7425-40de-944b-e07fc1f90ae7";

describe("toInvalidation", () => {
  it("keeps the device, the time and at most 200 characters of the reason", () => {
    const observedAt = new Date("2026-11-21T10:00:00.000Z");
    expect(
      toInvalidation({ deviceId: DEVICE, observedAt: timestampFromDate(observedAt), reason: "r".repeat(300) }),
    ).toEqual({
      ok: true,
      invalidation: { deviceId: DEVICE, observedAt, reason: "r".repeat(200) },
    });
  });

  it.each([
    [
      "device_id",
      { deviceId: "device-1", observedAt: timestampFromMs(Date.now()), reason: "" },
      "device_id must be a device id",
    ],
    ["missing observed_at", { deviceId: DEVICE, reason: "" }, "observed_at is required"],
    [
      "observed_at before 1970",
      { deviceId: DEVICE, observedAt: timestampFromMs(-1), reason: "" },
      "observed_at must be a time between 1970 and 9999",
    ],
    [
      "observed_at out of range",
      { deviceId: DEVICE, observedAt: timestampFromMs(8e15), reason: "" },
      "observed_at must be a time between 1970 and 9999",
    ],
  ])("names a bad %s", (_name, inv, problem) => {
    expect(toInvalidation(inv)).toEqual({ ok: false, problem });
  });
});
