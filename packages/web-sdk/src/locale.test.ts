import { describe, expect, it } from "vitest";
import { clientFixture } from "../../../test/support/client-fixtures.js";
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

describe("the shared locale fixture (sdks/fixtures/locale.json)", () => {
  const { languages, timezones } = clientFixture("locale.json");

  it("reduces each tag as the fixture says", () => {
    for (const l of languages) expect(languageOf(l.tag), l.tag).toBe(l.language ?? undefined);
  });

  it("keeps or drops each zone as the fixture says", () => {
    for (const z of timezones) expect(timezoneOf(z.zone), z.zone).toBe(z.timezone ?? undefined);
  });
});
