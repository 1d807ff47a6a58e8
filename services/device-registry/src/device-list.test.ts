import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import { ListDevicesRequestSchema } from "@herald/proto/device";
import { describe, expect, it } from "vitest";
import { deviceListFilter, deviceListWhere } from "./device-list.js";

const APP = "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11";
const request = (init: Parameters<typeof create<typeof ListDevicesRequestSchema>>[1]) =>
  create(ListDevicesRequestSchema, { appId: APP, ...init });

describe("deviceListFilter", () => {
  it("keeps unset filters unset and normalises the set ones like the fields they match", () => {
    expect(deviceListFilter(request({}))).toEqual({});
    expect(
      deviceListFilter(
        request({ platform: Platform.ANDROID, language: "PT-br", optedIn: false, invalid: true, externalId: "u 1" }),
      ),
    ).toEqual({ platform: "android", language: "pt", optedIn: false, invalid: true, externalId: "u 1" });
  });

  it.each([
    [{ platform: Platform.UNSPECIFIED }, /platform/],
    [{ language: "english" }, /language/],
    [{ externalId: "" }, /external_id/],
  ])("refuses %o with INVALID_ARGUMENT", (init, message) => {
    let err: ConnectError | undefined;
    try {
      deviceListFilter(request(init));
    } catch (e) {
      err = ConnectError.from(e);
    }
    expect(err?.code).toBe(Code.InvalidArgument);
    expect(err?.rawMessage).toMatch(message);
  });
});

describe("deviceListWhere", () => {
  it("is the app alone without filters", () => {
    expect(deviceListWhere(APP, {})).toEqual({ where: "app_id = $1::uuid", values: [APP] });
  });

  it("adds each set filter as an equality on a parameter, never inlining a value", () => {
    expect(
      deviceListWhere(APP, {
        platform: "ios",
        language: "de",
        optedIn: true,
        invalid: false,
        externalId: "x'; DROP TABLE devices",
      }),
    ).toEqual({
      where:
        "app_id = $1::uuid AND platform = $2 AND language = $3 AND opted_in = $4 AND invalid = $5 AND external_id = $6",
      values: [APP, "ios", "de", true, false, "x'; DROP TABLE devices"],
    });
  });
});
