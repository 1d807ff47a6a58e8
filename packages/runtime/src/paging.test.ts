import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { PAGING, pageOf } from "./paging.js";

const codeOf = (f: () => unknown): Code | undefined => {
  try {
    f();
  } catch (err) {
    return err instanceof ConnectError ? err.code : undefined;
  }
  return undefined;
};

describe("pageOf", () => {
  it("defaults unset fields to page 1 and per_page 50", () => {
    expect(pageOf(undefined)).toEqual({ page: 1, perPage: 50, offset: 0 });
    expect(pageOf({ page: 0, perPage: 0 })).toEqual({ page: 1, perPage: PAGING.defaultPerPage, offset: 0 });
    expect(pageOf({ page: 3, perPage: 200 })).toEqual({ page: 3, perPage: 200, offset: 400 });
  });

  it("refuses out-of-range values instead of clamping them", () => {
    expect(codeOf(() => pageOf({ perPage: 201 }))).toBe(Code.InvalidArgument);
    expect(codeOf(() => pageOf({ page: 1_000_001 }))).toBe(Code.InvalidArgument);
    expect(codeOf(() => pageOf({ page: -1 }))).toBe(Code.InvalidArgument);
    expect(codeOf(() => pageOf({ perPage: 2.5 }))).toBe(Code.InvalidArgument);
  });
});
