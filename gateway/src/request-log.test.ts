import { describe, expect, it } from "vitest";
import { loggableUrl } from "./request-log.js";

describe("loggableUrl", () => {
  it("replaces the values of secret query parameters", () => {
    expect(loggableUrl("/invitations/accept?token=s3cr3t")).toBe("/invitations/accept?token=%5Bredacted%5D");
    expect(loggableUrl("/console/callback?code=abc&state=xyz")).toBe("/console/callback?code=%5Bredacted%5D&state=xyz");
    expect(loggableUrl("/x?Token=a&token=b")).not.toMatch(/=a|=b/);
  });

  it("keeps every other URL as it is", () => {
    expect(loggableUrl("/v1/devices?app_id=1&external_id=u-1")).toBe("/v1/devices?app_id=1&external_id=u-1");
    expect(loggableUrl("/v1/apps")).toBe("/v1/apps");
  });
});
