import { describe, expect, it } from "vitest";
import { noneMatch, strongEtag } from "./etag.js";

describe("strongEtag", () => {
  it("is a quoted hash that changes with the body", () => {
    const a = strongEtag({ data: [1] });
    expect(a).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    expect(strongEtag({ data: [1] })).toBe(a);
    expect(strongEtag({ data: [2] })).not.toBe(a);
  });
});

describe("noneMatch", () => {
  const tag = '"abc"';
  it("matches the tag, a weak form of it, one of a list, and *", () => {
    expect(noneMatch('"abc"', tag)).toBe(true);
    expect(noneMatch('W/"abc"', tag)).toBe(true);
    expect(noneMatch('"x", "abc"', tag)).toBe(true);
    expect(noneMatch("*", tag)).toBe(true);
  });
  it("does not match another tag or no header", () => {
    expect(noneMatch('"abd"', tag)).toBe(false);
    expect(noneMatch(undefined, tag)).toBe(false);
  });
});
