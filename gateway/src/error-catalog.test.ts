import { readFileSync } from "node:fs";
import { API_ERRORS, type ApiErrorName } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { errorReply } from "./http-errors.js";
import { errors, errorSchema } from "./schemas/common.js";

const NAMES = Object.keys(API_ERRORS) as ApiErrorName[];

/** The table docs/design.md §3 Errors must hold, row for row. */
const catalogTable = (): string =>
  [
    "| Name | Status | Meaning |",
    "|---|---|---|",
    ...NAMES.map((n) => `| \`${n}\` | ${API_ERRORS[n].status} | ${API_ERRORS[n].meaning} |`),
  ].join("\n");

describe("the error catalog", () => {
  it("is the table in docs/design.md §3 Errors", () => {
    const doc = readFileSync(new URL("../../docs/design.md", import.meta.url), "utf8");
    const table = /<!-- error-catalog:start -->\n([\s\S]*?)\n<!-- error-catalog:end -->/.exec(doc)?.[1];
    expect(table, "docs/design.md has no error-catalog block").toBeDefined();
    expect(table).toBe(catalogTable());
  });

  it("is the OpenAPI Error component's list of names", () => {
    expect(errorSchema.properties.error.enum).toEqual(NAMES);
    for (const n of NAMES) expect(errorSchema.properties.error.description).toContain(`${n} (${API_ERRORS[n].status})`);
  });

  it("describes every documented error status, and only names of that status", () => {
    for (const [status, response] of Object.entries(errors)) {
      const named = NAMES.filter((n) => API_ERRORS[n].status === Number(status));
      expect(named.length, `status ${status}`).toBeGreaterThan(0);
      for (const n of named) expect(response.description).toContain(`${n}: ${API_ERRORS[n].meaning}`);
    }
  });

  it("gives each name one status, used by every reply", () => {
    for (const n of NAMES) {
      const out = errorReply(n, "m");
      expect(out.status).toBe(API_ERRORS[n].status);
      expect(out.body.error).toBe(n);
      expect(out.internal).toBe(out.status >= 500);
    }
  });
});
