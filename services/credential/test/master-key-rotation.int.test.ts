import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { Platform } from "@herald/proto/common";
import type { GetSendCredentialsResponse } from "@herald/proto/credential";
import { createLogger, type Pool } from "@herald/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { makeApnsKey, makeServiceAccount, makeVapidKeys } from "../../../test/support/credential-fixtures.js";
import { generateSecret } from "../src/api-key-secret.js";
import type { Config } from "../src/config.js";
import { ReencryptionJob } from "../src/reencryption-job.js";
import { SealedBox } from "@herald/runtime";
import { LogCapture } from "../../../test/support/log-capture.js";
import { waitForValue } from "../../../test/support/wait.js";
import { putEveryPlatformConfig, rawPool } from "./harness.js";
import { cleanUp, type RunningIdentity, startIdentity, testConfig } from "./identity-support.js";

// Rotating HERALD_MASTER_KEY without downtime: data sealed under key v1, the service
// restarted with v2 active and v1 previous (everything still opens), the re-encryption
// job moving every row to v2, then v1 dropped; and what a wrong key does (nothing fatal).

const configs: Config[] = [];
const running = new Set<RunningIdentity>();

async function start(config: Config): Promise<RunningIdentity> {
  if (!configs.includes(config)) configs.push(config);
  const svc = await startIdentity(config, new LogCapture());
  running.add(svc);
  return svc;
}

async function stop(svc: RunningIdentity): Promise<void> {
  running.delete(svc);
  await svc.close();
}

afterAll(async () => {
  await Promise.all([...running].map((r) => r.close()));
  for (const config of configs) await cleanUp(config);
});

/** The gauge's series of a /metrics text: `{labels} → value`, the `service` label left out. */
async function gauge(svc: RunningIdentity, name: string): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${svc.app.adminPort}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const m = new RegExp(`^${name}\\{(.*)\\} (\\S+)$`).exec(line);
    if (!m) continue;
    const labels = m[1]!
      .split(",")
      .filter((l) => !l.startsWith("service="))
      .join(",");
    out[labels] = Number(m[2]);
  }
  return out;
}

const until = <T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, ms = 20_000): Promise<T> =>
  waitForValue(what, read, done, { timeoutMs: ms });

const versionsOf = async (pool: Pool) =>
  (
    await pool.query<{ t: string; key_version: number; n: string }>(
      `SELECT 'platform_configs' AS t, key_version, count(*) AS n FROM platform_configs GROUP BY 2
       UNION ALL SELECT 'signing_keys', key_version, count(*) FROM signing_keys GROUP BY 2 ORDER BY 1, 2`,
    )
  ).rows.map((r) => `${r.t}:v${r.key_version}=${r.n}`);

const wire = (r: GetSendCredentialsResponse) =>
  JSON.stringify({ fingerprint: r.fingerprint, credentials: r.credentials });

describe("master-key rotation", () => {
  const v1 = randomBytes(32);
  const v2 = randomBytes(32);
  const config = testConfig({ masterKey: v1, bootstrapApiKey: generateSecret() });
  const staged: Config = { ...config, previousMasterKeys: [{ version: 2, key: v2 }] };
  const rotating: Config = {
    ...config,
    masterKey: v2,
    masterKeyVersion: 2,
    previousMasterKeys: [{ version: 1, key: v1 }],
  };
  const rotated: Config = { ...config, masterKey: v2, masterKeyVersion: 2, previousMasterKeys: [] };
  /** appId → platform → what GetSendCredentials answers (as the senders get it). */
  const sent = new Map<string, Map<Platform, string>>();
  let signingKeys: { kid: string; privateJwk: string; active: boolean }[] = [];
  const material: string[] = [];

  const sendCredentials = async (svc: RunningIdentity) => {
    const out = new Map<string, Map<Platform, string>>();
    for (const [appId, platforms] of sent) {
      const got = new Map<Platform, string>();
      for (const platform of platforms.keys()) {
        got.set(platform, wire(await svc.client.getSendCredentials({ appId, platform })));
      }
      out.set(appId, got);
    }
    return out;
  };
  const signingKeysOf = async (svc: RunningIdentity) =>
    (await svc.identity.getSigningKeys({})).keys.map(({ kid, privateJwk, active }) => ({ kid, privateJwk, active }));

  it("stores provider credentials and signing keys under key v1", async () => {
    const svc = await start(config);
    const orgId = (await svc.client.verifyApiKey({ secret: config.bootstrapApiKey! })).principal!.orgId;
    // Three apps with all three platforms, then enough web configs for more than one batch of 100.
    for (let i = 0; i < 3; i++) {
      const app = (
        await svc.client.createApp({ orgId, name: `Rotation ${i}`, platform: Platform.IOS, bundleId: `com.rot.a${i}` })
      ).app!;
      const apns = makeApnsKey();
      const account = makeServiceAccount({ projectId: `rot-${i}` });
      const vapid = makeVapidKeys();
      material.push(apns.p8, account.privateKeyPem, vapid.privateKey);
      await putEveryPlatformConfig(svc.client, app.id, { apns, account, vapid });
      sent.set(app.id, new Map([Platform.IOS, Platform.ANDROID, Platform.WEB].map((p) => [p, ""])));
    }
    for (let i = 0; i < 105; i++) {
      const app = (
        await svc.client.createApp({ orgId, name: `Web ${i}`, platform: Platform.WEB, bundleId: `com.rot.w${i}` })
      ).app!;
      await svc.client.putPlatformConfig({
        appId: app.id,
        credentials: { case: "vapid", value: { subject: "mailto:ops@example.com" } },
      });
      sent.set(app.id, new Map([[Platform.WEB, ""]]));
    }
    const v1Credentials = await sendCredentials(svc);
    for (const [appId, got] of v1Credentials) sent.set(appId, got);

    // An active key and a retired one, both sealed under v1.
    await signingKeysOf(svc);
    const pool = rawPool(config);
    try {
      await pool.query("UPDATE signing_keys SET retired_at = now()");
      signingKeys = await signingKeysOf(svc);
      expect(signingKeys.map((k) => k.active)).toEqual([true, false]);
      expect(await versionsOf(pool)).toEqual(["platform_configs:v1=114", "signing_keys:v1=2"]);
    } finally {
      await pool.end();
    }
    material.push(...signingKeys.map((k) => JSON.parse(k.privateJwk).d as string));
    await stop(svc);
  });

  it("step 1, v2 staged beside the active v1: everything opens, nothing moves, new secrets are sealed under v1", async () => {
    const svc = await start(staged);
    expect(await sendCredentials(svc)).toEqual(sent);
    expect(await signingKeysOf(svc)).toEqual(signingKeys);
    const [appId] = [...sent.keys()];
    await svc.client.putPlatformConfig({
      appId: appId!,
      credentials: { case: "vapid", value: { subject: "mailto:ops@example.com" } },
    });
    sent
      .get(appId!)!
      .set(Platform.WEB, wire(await svc.client.getSendCredentials({ appId: appId!, platform: Platform.WEB })));
    expect(await gauge(svc, "herald_credential_sealed_rows")).toEqual({
      'table="platform_configs",key_version="1"': 114,
      'table="platform_configs",key_version="2"': 0,
      'table="signing_keys",key_version="1"': 2,
      'table="signing_keys",key_version="2"': 0,
    });
    await stop(svc);
  });

  it("step 2, v2 active and v1 previous: every credential and signing key opens while still sealed under v1", async () => {
    // Hold every sealed row: the re-encryption job skips locked rows (SKIP LOCKED), so
    // what the service answers below is read from v1 blobs, and start() is not blocked.
    const lockPool = rawPool(config);
    const lock = await lockPool.connect();
    try {
      await lock.query("BEGIN");
      await lock.query("SELECT 1 FROM platform_configs FOR UPDATE");
      await lock.query("SELECT 1 FROM signing_keys FOR UPDATE");

      const svc = await start(rotating);
      expect(await sendCredentials(svc)).toEqual(sent);
      expect(await signingKeysOf(svc)).toEqual(signingKeys);
      const rows = await lock.query<{ n: string }>(
        "SELECT (SELECT count(*) FROM platform_configs WHERE key_version = 1) + (SELECT count(*) FROM signing_keys WHERE key_version = 1) AS n",
      );
      expect(Number(rows.rows[0]!.n)).toBe(116);
      // What is written now is sealed under v2.
      const [appId] = [...sent.keys()];
      const fresh = makeVapidKeys();
      material.push(fresh.privateKey);
      await lock.query("COMMIT");
      await svc.client.putPlatformConfig({
        appId: appId!,
        credentials: { case: "vapid", value: { ...fresh, subject: "mailto:ops@example.com" } },
      });
      sent
        .get(appId!)!
        .set(Platform.WEB, wire(await svc.client.getSendCredentials({ appId: appId!, platform: Platform.WEB })));
      const row = await lock.query("SELECT key_version FROM platform_configs WHERE app_id = $1 AND platform = 'web'", [
        appId,
      ]);
      expect(row.rows[0].key_version).toBe(2);
      await stop(svc);
    } finally {
      await lock.query("ROLLBACK").catch(() => undefined);
      lock.release();
      await lockPool.end();
    }
  });

  it("re-encrypts every row to v2 in batches, showing progress in herald_credential_sealed_rows", async () => {
    const svc = await start(rotating);
    const done = await until(
      "sealed rows of v1",
      () => gauge(svc, "herald_credential_sealed_rows"),
      (g) => g['table="platform_configs",key_version="1"'] === 0 && g['table="signing_keys",key_version="1"'] === 0,
    );
    expect(done).toEqual({
      'table="platform_configs",key_version="1"': 0,
      'table="platform_configs",key_version="2"': 114,
      'table="signing_keys",key_version="1"': 0,
      'table="signing_keys",key_version="2"': 2,
    });
    expect(await gauge(svc, "herald_credential_unreadable_sealed_rows")).toEqual({
      'table="platform_configs"': 0,
      'table="signing_keys"': 0,
    });
    const pool = rawPool(config);
    try {
      expect(await versionsOf(pool)).toEqual(["platform_configs:v2=114", "signing_keys:v2=2"]);
    } finally {
      await pool.end();
    }
    expect(await sendCredentials(svc)).toEqual(sent);
    expect(await signingKeysOf(svc)).toEqual(signingKeys);

    // Counts only in the logs: no key, no private material.
    const logs = svc.logs.text();
    expect(logs).toContain("sealed rows moved to the active master key");
    const moved = svc.logs.lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "sealed rows moved to the active master key");
    expect(moved.reduce((n, l) => n + l.platformConfigs, 0)).toBe(113);
    expect(moved.reduce((n, l) => n + l.signingKeys, 0)).toBe(2);
    for (const key of [v1, v2]) {
      for (const encoding of ["base64", "base64url", "hex"] as const)
        expect(logs).not.toContain(key.toString(encoding));
    }
    for (const m of material) expect(logs).not.toContain(m.split("\n")[1] ?? m);
    await stop(svc);
  });

  it("step 3, once no row uses v1, the service started with v2 alone serves everything", async () => {
    const svc = await start(rotated);
    expect(await sendCredentials(svc)).toEqual(sent);
    expect(await signingKeysOf(svc)).toEqual(signingKeys);
    expect(await gauge(svc, "herald_credential_sealed_rows")).toEqual({
      'table="platform_configs",key_version="2"': 114,
      'table="signing_keys",key_version="2"': 2,
    });
    expect(svc.logs.text()).not.toContain("no configured master key");
    await stop(svc);
  });

  it("a service given only an unrelated key starts, fails those reads without crashing and replaces its signing key", async () => {
    const pool = rawPool(config);
    try {
      const before = (await pool.query("SELECT app_id, platform, sealed FROM platform_configs ORDER BY 1, 2")).rows;

      // An unrelated key under a new version (the old key forgotten): v2 rows are unknown.
      const forgotten = await start({
        ...config,
        masterKey: randomBytes(32),
        masterKeyVersion: 3,
        previousMasterKeys: [],
      });
      const [appId] = [...sent.keys()];
      const err = await forgotten.client.getSendCredentials({ appId: appId!, platform: Platform.IOS }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err).toMatchObject({ code: Code.Internal, rawMessage: "internal error" });
      const unreadable = await until(
        "unreadable rows",
        () => gauge(forgotten, "herald_credential_unreadable_sealed_rows"),
        (g) => g['table="platform_configs"'] === 114,
      );
      expect(unreadable['table="signing_keys"']).toBe(2);
      const keys = await signingKeysOf(forgotten);
      expect(keys).toHaveLength(1);
      expect(signingKeys.map((k) => k.kid)).not.toContain(keys[0]!.kid);
      const logs = forgotten.logs.text();
      expect(logs).toContain("no configured master key opens");
      expect(logs).toContain("cannot be decrypted with any configured master key");
      await stop(forgotten);
      // Nothing it could not open was touched.
      expect((await pool.query("SELECT app_id, platform, sealed FROM platform_configs ORDER BY 1, 2")).rows).toEqual(
        before,
      );

      // An unrelated key under the same version (a new key without a new version).
      const mislabelled = await start({ ...config, masterKey: randomBytes(32), masterKeyVersion: 2 });
      const again = await mislabelled.client.getSendCredentials({ appId: appId!, platform: Platform.WEB }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(again?.code).toBe(Code.Internal);
      expect((await signingKeysOf(mislabelled)).map((k) => k.active)).toEqual([true]);
      await stop(mislabelled);
    } finally {
      await pool.end();
    }
  });
});

describe("the re-encryption job", () => {
  it("shares the work between replicas: every row moved exactly once, in batches, rows it cannot open left alone", async () => {
    const v1 = randomBytes(32);
    const v2 = randomBytes(32);
    const config = testConfig({ masterKey: v1, bootstrapApiKey: generateSecret() });
    const svc = await start(config);
    const orgId = (await svc.client.verifyApiKey({ secret: config.bootstrapApiKey! })).principal!.orgId;
    const apps: string[] = [];
    for (let i = 0; i < 40; i++) {
      const app = (
        await svc.client.createApp({ orgId, name: `J${i}`, platform: Platform.WEB, bundleId: `com.job.${i}` })
      ).app!;
      await svc.client.putPlatformConfig({
        appId: app.id,
        credentials: { case: "vapid", value: { subject: "mailto:a@b.c" } },
      });
      apps.push(app.id);
    }
    const [signingKey] = (await svc.identity.getSigningKeys({})).keys;
    await stop(svc);

    const pools = [rawPool(config), rawPool(config), rawPool(config)];
    const logs = new LogCapture();
    const log = createLogger("credential", "debug", logs);
    try {
      // A replica with a wrong v1 key first: it opens nothing, moves nothing, and finishes.
      const wrong = new ReencryptionJob(
        pools[2]!,
        new SealedBox(v2, 2, [{ version: 1, key: randomBytes(32) }]),
        { intervalMs: 60_000, batchSize: 7 },
        log,
      );
      const nothing = await wrong.runOnce();
      expect(nothing).toEqual({
        moved: { platform_configs: 0, signing_keys: 0 },
        unreadable: { platform_configs: { 1: 40 }, signing_keys: { 1: 1 } },
      });
      expect(wrong.unreadableRows()).toEqual({ platform_configs: 40, signing_keys: 1 });
      expect(logs.text()).toContain("no configured master key opens");
      expect(await versionsOf(pools[0]!)).toEqual(["platform_configs:v1=40", "signing_keys:v1=1"]);

      const box = new SealedBox(v2, 2, [{ version: 1, key: v1 }]);
      const jobs = [0, 1].map((i) => new ReencryptionJob(pools[i]!, box, { intervalMs: 60_000, batchSize: 7 }, log));
      const results = await Promise.all(jobs.map((j) => j.runOnce()));
      const movedConfigs = results.reduce((n, r) => n + r!.moved.platform_configs, 0);
      const movedKeys = results.reduce((n, r) => n + r!.moved.signing_keys, 0);
      expect([movedConfigs, movedKeys]).toEqual([40, 1]);
      for (const r of results) expect(r!.unreadable).toEqual({ platform_configs: {}, signing_keys: {} });
      expect(await versionsOf(pools[0]!)).toEqual(["platform_configs:v2=40", "signing_keys:v2=1"]);
      // A later pass finds nothing to do.
      expect((await jobs[0]!.runOnce())!.moved).toEqual({ platform_configs: 0, signing_keys: 0 });
      // A replica still on step-1 settings (v1 active, v2 staged) reads v2 rows and leaves them be.
      const stepOne = new ReencryptionJob(
        pools[2]!,
        new SealedBox(v1, 1, [{ version: 2, key: v2 }]),
        { intervalMs: 60_000, batchSize: 7 },
        log,
      );
      expect(await stepOne.runOnce()).toEqual({
        moved: { platform_configs: 0, signing_keys: 0 },
        unreadable: { platform_configs: {}, signing_keys: {} },
      });
      expect(await versionsOf(pools[0]!)).toEqual(["platform_configs:v2=40", "signing_keys:v2=1"]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }

    const after = await start({ ...config, masterKey: v2, masterKeyVersion: 2 });
    for (const appId of apps) {
      const { credentials } = await after.client.getSendCredentials({ appId, platform: Platform.WEB });
      expect(credentials.case).toBe("vapid");
    }
    expect((await after.identity.getSigningKeys({})).keys).toEqual([signingKey]);
    await stop(after);
  });
});
