import { describe, expect, it } from "vitest";
import { ISO_639_1 } from "./iso-639-1.js";

describe("ISO 639-1 list", () => {
  it("holds the 184 two-letter lowercase codes", () => {
    expect(ISO_639_1.size).toBe(184);
    for (const code of ISO_639_1) expect(code).toMatch(/^[a-z]{2}$/);
  });

  it("knows common languages and nothing made up", () => {
    for (const code of ["en", "de", "fr", "es", "pt", "zh", "ja", "ar", "hi", "bh"])
      expect(ISO_639_1.has(code)).toBe(true);
    for (const code of ["xx", "qq", "EN", "eng", ""]) expect(ISO_639_1.has(code)).toBe(false);
  });
});
