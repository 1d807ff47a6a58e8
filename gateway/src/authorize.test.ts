import { describe, expect, it } from "vitest";
import { appAccessDenial, assertAppAccess, assertKeyScopeAllowed, assertOrgScope, listAppId } from "./authorize.js";
import { HttpError } from "./http-errors.js";
import type { Principal } from "./principal.js";

const ORG_A = "aaaaaaaa-0000-4000-8000-000000000001";
const ORG_B = "bbbbbbbb-0000-4000-8000-000000000002";
const APP_1 = "11111111-0000-4000-8000-000000000001";
const APP_2 = "22222222-0000-4000-8000-000000000002";

const orgKey: Principal = { orgId: ORG_A, scope: "org", identity: "key:o", rateLimitPerMinute: 1000 };
const appKey: Principal = { orgId: ORG_A, scope: "app", appId: APP_1, identity: "key:a", rateLimitPerMinute: 1000 };

const status = (fn: () => unknown): number | "ok" => {
  try {
    fn();
    return "ok";
  } catch (err) {
    if (err instanceof HttpError) return err.status;
    throw err;
  }
};

describe("app access", () => {
  it.each([
    ["org key, own org's app", orgKey, { id: APP_1, orgId: ORG_A }, "ok"],
    ["org key, other org's app", orgKey, { id: APP_2, orgId: ORG_B }, 403],
    ["app key, its own app", appKey, { id: APP_1, orgId: ORG_A }, "ok"],
    ["app key, sibling app of its org", appKey, { id: APP_2, orgId: ORG_A }, 403],
    ["app key, app of another org", appKey, { id: APP_1, orgId: ORG_B }, 403],
  ] as const)("%s → %s", (_name, principal, app, expected) => {
    expect(status(() => assertAppAccess(principal, app))).toBe(expected);
    expect(appAccessDenial(principal, app) === null).toBe(expected === "ok");
  });
});

describe("org-wide actions", () => {
  it.each([
    ["org key creates an app", () => assertOrgScope(orgKey, "creating an app"), "ok"],
    ["app key creates an app", () => assertOrgScope(appKey, "creating an app"), 403],
    ["org key mints an org key", () => assertKeyScopeAllowed(orgKey, "org", "x"), "ok"],
    ["app key mints an org key", () => assertKeyScopeAllowed(appKey, "org", "x"), 403],
    ["app key mints an app key", () => assertKeyScopeAllowed(appKey, "app", "x"), "ok"],
  ] as const)("%s → %s", (_name, fn, expected) => {
    expect(status(fn)).toBe(expected);
  });
});

describe("list app", () => {
  it("uses the requested app when given", () => {
    expect(listAppId(orgKey, APP_2)).toBe(APP_2);
    expect(listAppId(appKey, APP_2)).toBe(APP_2); // access is checked afterwards
  });

  it("defaults to the key's app for app-scoped keys", () => {
    expect(listAppId(appKey, undefined)).toBe(APP_1);
  });

  it("requires app_id from org-scoped callers", () => {
    expect(status(() => listAppId(orgKey, undefined))).toBe(400);
  });
});
