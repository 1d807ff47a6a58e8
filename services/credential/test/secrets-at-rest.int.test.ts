import { createHash, createPrivateKey, randomBytes } from "node:crypto";
import { Platform } from "@herald/proto/common";
import { ApiKeyKind, KeyScope } from "@herald/proto/credential";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApnsKey, makeServiceAccount, makeVapidKeys } from "../../../test/support/credential-fixtures.js";
import { displayPrefix, generateSecret } from "../src/api-key-secret.js";
import type { Config } from "../src/config.js";
import { waitUntil } from "../../../test/support/wait.js";
import { putEveryPlatformConfig, rawPool } from "./harness.js";
import { cleanUp, type RunningIdentity, startIdentity, testConfig } from "./identity-support.js";

// What someone holding a copy of the credential schema (a backup, a replica, a dump) sees:
// every column of every row of the sealed tables and of api_keys, searched for the private
// material in every encoding it could reasonably take. Checked under master key v1 and
// again after a rotation moved every row to v2.

const v1 = randomBytes(32);
const v2 = randomBytes(32);
const config = testConfig({ masterKey: v1, bootstrapApiKey: generateSecret() });
const rotated: Config = {
  ...config,
  masterKey: v2,
  masterKeyVersion: 2,
  previousMasterKeys: [{ version: 1, key: v1 }],
};
let svc: RunningIdentity | undefined;

/**
 * Private material given to or made by the service (searched for with its fragments, or
 * whole when fragments would also match public parts stored in clear, such as a JWK's
 * kid), and the API key secrets it handed out.
 */
const privateMaterial: { what: string; needles: string[]; whole?: boolean }[] = [];
const apiKeySecrets: string[] = [config.bootstrapApiKey!];

const b64Forms = (bytes: Buffer) => [bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex")];

/**
 * A private key as text in every form worth searching for: the text (and as a JSON string,
 * the way a service-account file carries it), each base64 line of a PEM, the DER in base64
 * and hex, and each private JWK member in base64url, base64 and hex.
 */
function keyNeedles(text: string): string[] {
  const needles = [text, JSON.stringify(text).slice(1, -1), ...b64Forms(Buffer.from(text, "utf8"))];
  if (text.includes("-----BEGIN")) {
    needles.push(...text.split("\n").filter((l) => l && !l.startsWith("-----")));
    const key = createPrivateKey(text);
    needles.push(...b64Forms(key.export({ type: "pkcs8", format: "der" })));
    const jwk = key.export({ format: "jwk" }) as Record<string, string | undefined>;
    for (const member of ["d", "p", "q", "dp", "dq", "qi"]) {
      const value = jwk[member];
      if (value) needles.push(value, ...b64Forms(Buffer.from(value, "base64url")));
    }
  } else if (/^[A-Za-z0-9_-]{43}$/.test(text)) {
    // A P-256 scalar in base64url: a VAPID private key, a JWK's d.
    needles.push(...b64Forms(Buffer.from(text, "base64url")));
  }
  return needles;
}

/** Needles plus their 24-character windows every 8 characters: any leak of 31 characters or more shows. */
function withFragments(needles: string[]): string[] {
  const out = new Set(needles);
  for (const n of needles) {
    for (let i = 0; i + 24 <= n.length; i += 8) out.add(n.slice(i, i + 24));
  }
  return [...out].filter((n) => n.length >= 16);
}

/**
 * Every row of a table as an attacker can read it: the row as JSON (bytea as \x hex), and
 * each bytea column decoded as latin1 and UTF-8 and re-encoded as base64, base64url and hex.
 */
async function rowDumps(table: string): Promise<string[]> {
  const pool = rawPool(config);
  try {
    const { rows } = await pool.query<{ json: string }>(`SELECT row_to_json(t)::text AS json FROM ${table} t`);
    const raw = await pool.query<Record<string, unknown>>(`SELECT * FROM ${table}`);
    const dumps = rows.map((r) => r.json);
    for (const row of raw.rows) {
      for (const value of Object.values(row)) {
        if (!Buffer.isBuffer(value)) continue;
        dumps.push(value.toString("latin1"), value.toString("utf8"), ...b64Forms(value));
      }
    }
    expect(raw.rows.length).toBeGreaterThan(0);
    return dumps;
  } finally {
    await pool.end();
  }
}

/** What of the private material (or a master key) the dumps hold, named but never shown. */
function leaks(dumps: string[]): string[] {
  const found: string[] = [];
  const material = [
    ...privateMaterial,
    ...[v1, v2].map((key, i) => ({ what: `master key v${i + 1}`, needles: b64Forms(key), whole: false })),
  ];
  for (const { what, needles, whole } of material) {
    const hit = (whole ? needles : withFragments(needles)).find((n) => dumps.some((d) => d.includes(n)));
    if (hit) found.push(`${what} (${hit.length} chars)`);
  }
  return found;
}

async function expectNoPrivateMaterialAtRest(): Promise<void> {
  for (const table of ["platform_configs", "signing_keys"]) {
    expect(leaks(await rowDumps(table)), table).toEqual([]);
  }
}

beforeAll(async () => {
  svc = await startIdentity(config);
  const orgId = (await svc.client.verifyApiKey({ secret: config.bootstrapApiKey! })).principal!.orgId;
  const app = (await svc.client.createApp({ orgId, name: "At rest", platform: Platform.IOS, bundleId: "com.rest.a" }))
    .app!;
  const apns = makeApnsKey();
  const account = makeServiceAccount({ projectId: "at-rest" });
  const vapid = makeVapidKeys();
  await putEveryPlatformConfig(svc.client, app.id, { apns, account, vapid });
  // A VAPID pair the service generates itself: its private half is only ever in the sealed blob.
  const other = (await svc.client.createApp({ orgId, name: "Gen", platform: Platform.WEB, bundleId: "com.rest.b" }))
    .app!;
  await svc.client.putPlatformConfig({
    appId: other.id,
    credentials: { case: "vapid", value: { subject: "mailto:ops@example.com" } },
  });
  const generated = await svc.client.getSendCredentials({ appId: other.id, platform: Platform.WEB });
  if (generated.credentials.case !== "vapid") throw new Error("expected vapid credentials");

  privateMaterial.push(
    { what: "the APNs .p8 key", needles: keyNeedles(apns.p8) },
    { what: "the service account's private_key", needles: keyNeedles(account.privateKeyPem) },
    { what: "the VAPID private key", needles: keyNeedles(vapid.privateKey) },
    { what: "a generated VAPID private key", needles: keyNeedles(generated.credentials.value.privateKey) },
  );

  // Signing keys: an active one and a retired one.
  await svc.identity.getSigningKeys({});
  const pool = rawPool(config);
  await pool.query("UPDATE signing_keys SET retired_at = now()").finally(() => pool.end());
  for (const key of (await svc.identity.getSigningKeys({})).keys) {
    const jwk = JSON.parse(key.privateJwk) as { d: string };
    privateMaterial.push(
      {
        what: `signing key ${key.kid}'s private JWK`,
        needles: [key.privateJwk, ...b64Forms(Buffer.from(key.privateJwk))],
        whole: true,
      },
      { what: `signing key ${key.kid}'s d`, needles: keyNeedles(jwk.d) },
    );
  }
  expect(privateMaterial).toHaveLength(8);

  for (const req of [
    { appId: app.id, name: "server" },
    { appId: app.id, name: "org", scope: KeyScope.ORG },
    { appId: app.id, name: "client", kind: ApiKeyKind.CLIENT },
  ]) {
    apiKeySecrets.push((await svc.client.createApiKey(req)).secret);
  }
});

afterAll(async () => {
  await svc?.close();
  await cleanUp(config);
});

describe("secrets at rest", () => {
  it("no row of platform_configs or signing_keys holds private material in clear, base64 or hex (key v1)", async () => {
    await expectNoPrivateMaterialAtRest();
  });

  it("the search itself finds each secret in any of those encodings, whole or in part", () => {
    const names = (dumps: string[]) => leaks(dumps).map((l) => l.slice(0, l.lastIndexOf(" (")));
    const forms = (text: string) => {
      const bytes = Buffer.from(text, "utf8");
      return [text, bytes.toString("base64"), bytes.toString("hex"), `\\x${bytes.toString("hex")}`];
    };
    for (const { what, needles, whole } of privateMaterial) {
      for (const dump of forms(needles[0]!)) expect(names([`noise ${dump} noise`]), what).toContain(what);
      if (!whole) expect(names([`{"sealed":"${needles.at(-1)!.slice(3, 40)}"}`]), what).toContain(what);
    }
  });

  it("nor after a rotation moved every row to key v2", async () => {
    await svc!.close();
    svc = await startIdentity(rotated);
    const pool = rawPool(config);
    try {
      await waitUntil(
        "every row sealed under v2",
        async () => {
          const { rows } = await pool.query<{ n: string }>(
            "SELECT (SELECT count(*) FROM platform_configs WHERE key_version <> 2) + (SELECT count(*) FROM signing_keys WHERE key_version <> 2) AS n",
          );
          return Number(rows[0]!.n) === 0;
        },
        20_000,
      );
    } finally {
      await pool.end();
    }
    await expectNoPrivateMaterialAtRest();
  });

  it("API keys are stored as their SHA-256 only: no column holds a secret beyond its display prefix", async () => {
    const pool = rawPool(config);
    try {
      const { rows } = await pool.query<{ json: string; secret_hash: Buffer; prefix: string }>(
        "SELECT row_to_json(k)::text AS json, secret_hash, prefix FROM api_keys k",
      );
      expect(rows).toHaveLength(apiKeySecrets.length);
      const hashes = apiKeySecrets.map((s) => createHash("sha256").update(s, "utf8").digest());
      for (const row of rows) {
        expect(row.secret_hash).toHaveLength(32);
        expect(hashes.some((h) => h.equals(row.secret_hash))).toBe(true);
      }
      expect(rows.map((r) => r.prefix).sort()).toEqual(apiKeySecrets.map(displayPrefix).sort());
      const dumps = rows.flatMap((r) => [r.json, r.secret_hash.toString("latin1"), ...b64Forms(r.secret_hash)]);
      for (const secret of apiKeySecrets) {
        // The display prefix (kind and 4 characters) is stored on purpose; the rest never is.
        const hidden = secret.slice(displayPrefix(secret).length);
        for (const needle of withFragments([secret, hidden, ...b64Forms(Buffer.from(secret, "utf8"))])) {
          for (const dump of dumps) expect(dump).not.toContain(needle);
        }
      }
    } finally {
      await pool.end();
    }
    // And every secret still verifies (against its hash; services/credential/src/api-key-secret.ts
    // secretMatches confirms the row with timingSafeEqual).
    for (const secret of apiKeySecrets) {
      expect((await svc!.client.verifyApiKey({ secret })).principal?.keyId).toBeTruthy();
    }
  });
});
