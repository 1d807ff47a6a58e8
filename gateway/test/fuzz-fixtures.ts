import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { expect } from "vitest";
import { makeApnsKey, makeServiceAccount, makeVapidKeys } from "../../test/support/credential-fixtures.js";
import { apnsToken, fcmToken, webSubscription } from "../../test/support/device-tokens.js";
import type { FuzzTarget } from "./fuzz-parts.js";
import { createApp, type TestGateway } from "./harness.js";
import { createOrgFixtures } from "./org-fixtures.js";
import type { SessionTokens } from "./session-tokens.js";

/**
 * What the REST fuzz suite aims at: real resources of every kind in an app of the
 * organization, credentials of every kind for them, and real key material, so that
 * generated requests reach past validation into the services.
 */

/** The secret of an app key that was revoked at once. */
export async function revokedKey(gw: TestGateway, orgKey: string): Promise<string> {
  const app = await createApp(gw, orgKey);
  const key = await gw.call("POST", `/v1/apps/${app.id}/api-keys`, orgKey, { name: "revoked" });
  expect(key.status, key.text).toBe(201);
  const revoke = await gw.call("DELETE", `/v1/apps/${app.id}/api-keys/${key.body.id}`, orgKey);
  expect(revoke.status, revoke.text).toBe(204);
  return key.body.secret;
}

/** Real key material, for the body fields that take keys. */
export type Materials = {
  apns: ReturnType<typeof makeApnsKey>;
  account: ReturnType<typeof makeServiceAccount>;
  vapid: ReturnType<typeof makeVapidKeys>;
};

export const makeMaterials = (): Materials => ({
  apns: makeApnsKey(),
  account: makeServiceAccount(),
  vapid: makeVapidKeys(),
});

/**
 * An org-scoped key of a limit no fuzz run reaches (the bootstrap key's is the default
 * 1,000 a minute): a long run would otherwise meet mostly 429s.
 */
export async function unlimitedOrgKey(gw: TestGateway, bootstrapKey: string): Promise<string> {
  const app = await createApp(gw, bootstrapKey);
  const key = await gw.call("POST", `/v1/apps/${app.id}/api-keys`, bootstrapKey, {
    name: "fuzz",
    scope: "org",
    rate_limit_per_minute: 1_000_000,
  });
  expect(key.status, key.text).toBe(201);
  return key.body.secret;
}

/** An app with one of everything in it, keys of both kinds, and a member, invitation and OAuth client. */
export async function createTarget(
  gw: TestGateway,
  orgKey: string,
  owner: { token: string; orgId: string },
  tokens: SessionTokens,
  materials: Materials,
): Promise<FuzzTarget> {
  const created = async (what: string, path: string, body: unknown) => {
    const res = await gw.call("POST", path, orgKey, body);
    expect(res.status, `${what}: ${res.text}`).toBeLessThan(300);
    return res.body;
  };
  const pushToken = apnsToken();
  const fixtures = await createOrgFixtures(gw, orgKey, owner, tokens, { pushToken });
  const appId = fixtures.app_id!;
  const appKey = (
    await created("app key", `/v1/apps/${appId}/api-keys`, { name: "fuzz", rate_limit_per_minute: 1_000_000 })
  ).secret;
  const clientKey = (
    await created("client key", `/v1/apps/${appId}/api-keys`, {
      name: "fuzz client",
      kind: "client",
      rate_limit_per_minute: 1_000_000,
    })
  ).secret;
  return {
    credentials: { owner: owner.token, orgKey, appKey, clientKey },
    fixtures,
    pushToken,
    hint: (name) => hint(name, fixtures, pushToken, materials),
  };
}

/** Real ids and real key material for the body fields that name them, now and then something else. */
function hint(
  name: string,
  fixtures: Record<string, string>,
  pushToken: string,
  materials: Materials,
): fc.Arbitrary<unknown> | undefined {
  const mostly = <T>(real: T, other: fc.Arbitrary<T>) =>
    fc.oneof({ weight: 4, arbitrary: fc.constant(real) }, { weight: 1, arbitrary: other });
  switch (name) {
    case "app_id":
      return mostly(fixtures.app_id!, fc.uuid());
    case "segment_id":
      return mostly(fixtures.segments!, fc.uuid());
    case "device_ids":
      return fc.array(mostly(fixtures.devices!, fc.uuid()), { minLength: 1, maxLength: 3 });
    case "campaign_id":
      return mostly(fixtures.sent_campaign!, fc.constantFrom(fixtures.campaigns!, randomUUID()));
    case "push_token":
      return fc.constantFrom(pushToken, apnsToken(), fcmToken(), webSubscription().json, "ab");
    case "apns_p8_key":
      return mostly(
        materials.apns.p8,
        fc.constantFrom("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "x"),
      );
    case "apns_key_id":
      return mostly(materials.apns.keyId, fc.constant("short"));
    case "apns_team_id":
      return mostly(materials.apns.teamId, fc.constant("ABCDEFGHIJK"));
    case "fcm_service_account":
      return fc.constantFrom(materials.account.json, JSON.parse(materials.account.json), "{}", {
        type: "service_account",
      });
    case "vapid_public_key":
      return mostly(materials.vapid.publicKey, fc.constant("BAAA"));
    case "vapid_private_key":
      return mostly(materials.vapid.privateKey, fc.constant("AAAA"));
    default:
      return undefined;
  }
}
