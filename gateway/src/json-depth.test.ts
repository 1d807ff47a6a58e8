import { describe, expect, it } from "vitest";
import { nestedDeeperThan } from "./json-depth.js";

describe("nestedDeeperThan", () => {
  it("counts arrays and objects, not brackets inside strings", () => {
    expect(nestedDeeperThan('{"a":[1,{"b":2}]}', 3)).toBe(false);
    expect(nestedDeeperThan('{"a":[1,{"b":2}]}', 2)).toBe(true);
    expect(nestedDeeperThan('{"a":"[[[[{{{{"}', 1)).toBe(false);
    expect(nestedDeeperThan('{"a":"\\"[[[["}', 1)).toBe(false);
    expect(nestedDeeperThan("[[],[],[]]", 2)).toBe(false);
  });

  it("finds nesting 10,000 deep, and copes with text that is not JSON", () => {
    expect(nestedDeeperThan("[".repeat(10_000) + "]".repeat(10_000), 64)).toBe(true);
    expect(nestedDeeperThan("{".repeat(65), 64)).toBe(true);
    expect(nestedDeeperThan("]]]]{", 1)).toBe(false);
    expect(nestedDeeperThan('"unterminated [[[[', 1)).toBe(false);
  });
});
