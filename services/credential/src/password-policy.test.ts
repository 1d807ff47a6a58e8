import { describe, expect, it } from "vitest";
import { normaliseEmail, passwordProblem } from "./password-policy.js";

describe("password policy", () => {
  it("accepts 12 to 256 characters, counting code points, and a 20-character random alphanumeric one", () => {
    expect(passwordProblem("aB3dE6gH9jK2mN5pQ8sT")).toBeUndefined();
    expect(passwordProblem("x".repeat(12))).toBeUndefined();
    expect(passwordProblem("x".repeat(256))).toBeUndefined();
    expect(passwordProblem("🔑".repeat(12))).toBeUndefined();
    expect(passwordProblem("x".repeat(11))).toBe("must be 12 to 256 characters");
    expect(passwordProblem("x".repeat(257))).toBe("must be 12 to 256 characters");
    expect(passwordProblem(" ".repeat(12))).toBe("must not be only spaces");
  });
});

describe("emails", () => {
  it("trims and lower-cases, and rejects what is not an address", () => {
    expect(normaliseEmail("  Jane.Doe+x@Example.COM ")).toBe("jane.doe+x@example.com");
    expect(normaliseEmail("admin@herald.local")).toBe("admin@herald.local");
    for (const bad of ["", "jane", "jane@", "@example.com", "jane@localhost", "ja ne@example.com", "a@b@c.com"]) {
      expect(normaliseEmail(bad), bad).toBeUndefined();
    }
  });
});
