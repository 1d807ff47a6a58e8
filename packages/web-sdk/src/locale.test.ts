import { describe, expect, it } from "vitest";
import { languageOf, timezoneOf } from "./locale.js";

describe("the device's language and time zone", () => {
  it("reduces BCP 47 tags to ISO 639-1 and leaves out what is not one", () => {
    expect(languageOf("pt-BR")).toBe("pt");
    expect(languageOf("DE")).toBe("de");
    expect(languageOf("zh_Hant_TW")).toBe("zh");
    expect(languageOf("fil-PH")).toBeUndefined();
    expect(languageOf("")).toBeUndefined();
    expect(languageOf(undefined)).toBeUndefined();
  });

  it("keeps IANA zone names and drops offsets", () => {
    expect(timezoneOf("Europe/Berlin")).toBe("Europe/Berlin");
    expect(timezoneOf("America/Argentina/Buenos_Aires")).toBe("America/Argentina/Buenos_Aires");
    expect(timezoneOf("UTC")).toBe("UTC");
    expect(timezoneOf("GMT+05:30")).toBeUndefined();
    expect(timezoneOf(undefined)).toBeUndefined();
  });
});
