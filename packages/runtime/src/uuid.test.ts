import { describe, expect, it } from "vitest";
import { isUuid, UUID_PATTERN } from "./uuid.js";

describe("isUuid", () => {
  it("accepts canonical UUIDs in either case and nothing else", () => {
    expect(isUuid("7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11")).toBe(true);
    expect(isUuid("7D0C7B0E-3F2A-4C1E-9A41-6B0F5A2D9C11")).toBe(true);
    for (const bad of [
      "",
      "7d0c7b0e3f2a4c1e9a416b0f5a2d9c11",
      "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c1",
      "{7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11}",
      "7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11\n",
      "g d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11",
    ]) {
      expect(isUuid(bad)).toBe(false);
    }
  });

  it("agrees with the JSON Schema pattern", () => {
    const pattern = new RegExp(UUID_PATTERN, "u");
    for (const id of ["7d0c7b0e-3f2a-4c1e-9a41-6b0f5a2d9c11", "7D0C7B0E-3F2A-4C1E-9A41-6B0F5A2D9C11", "nope"]) {
      expect(pattern.test(id)).toBe(isUuid(id));
    }
  });
});
