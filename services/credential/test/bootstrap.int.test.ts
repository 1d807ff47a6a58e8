import { Code, ConnectError } from "@connectrpc/connect";
import { KeyScope } from "@herald/proto/credential";
import { ConfigError, createPool } from "@herald/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { generateSecret, hashSecret } from "../src/api-key-secret.js";
import type { Config } from "../src/config.js";
import { IdentityStore } from "../src/identity-store.js";
import { waitForValue } from "../../../test/support/wait.js";
import { cleanUp, rawPool, startService, testConfig, type Running } from "./harness.js";

const configs: Config[] = [];
const running: Running[] = [];

async function countBootstrapRows(config: Config, secret: string): Promise<{ keys: number; orgs: number }> {
  const pool = rawPool(config);
  try {
    const keys = await pool.query("SELECT 1 FROM api_keys WHERE secret_hash = $1", [hashSecret(secret)]);
    const orgs = await pool.query("SELECT 1 FROM orgs WHERE name = 'default'");
    return { keys: keys.rowCount ?? 0, orgs: orgs.rowCount ?? 0 };
  } finally {
    await pool.end();
  }
}

afterAll(async () => {
  await Promise.all(running.map((r) => r.close()));
  for (const config of configs) await cleanUp(config);
  for (const r of running) expect(r.logs.text()).not.toMatch(/hk_live_[A-Za-z0-9]{32}/);
});

describe("bootstrap org", () => {
  it("is the other replica's org when that replica's insert of the same name commits first", async () => {
    const config = testConfig({});
    configs.push(config);
    // The service's migrations and its own bootstrap run first; then the org stops being
    // the bootstrap one, so the call below finds none, as replicas on an empty database do.
    running.push(await startService(config));
    const pool = createPool({ url: config.databaseUrl, schema: config.schema, max: 3 });
    const other = await pool.connect();
    try {
      await pool.query("UPDATE orgs SET bootstrap = false, name = 'before' WHERE bootstrap");
      // The race, made certain: another replica's insert of the org is under way (its row
      // holds the name, not yet committed) when this replica's insert passes the bootstrap
      // check and waits on the name.
      await other.query("BEGIN");
      const { rows } = await other.query<{ id: string }>(
        "INSERT INTO orgs (name, bootstrap) VALUES ('race', false) RETURNING id",
      );
      const ours = new IdentityStore(pool).ensureBootstrapOrg("race");
      await waitForValue(
        "our insert to wait on the other's row",
        async () =>
          (
            await pool.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO orgs%'",
            )
          ).rows[0]!.n,
        (n) => n === 1,
        { everyMs: 20 },
      );
      await other.query("UPDATE orgs SET bootstrap = true WHERE id = $1", [rows[0]!.id]);
      await other.query("COMMIT");
      expect(await ours).toBe(rows[0]!.id);
      const { rows: bootstrap } = await pool.query("SELECT id FROM orgs WHERE bootstrap");
      expect(bootstrap).toEqual([{ id: rows[0]!.id }]);
    } finally {
      other.release();
      await pool.end();
    }
  });

  it("says why when an org that is not the bootstrap one holds the name", async () => {
    const config = testConfig({});
    configs.push(config);
    running.push(await startService(config));
    const pool = rawPool(config);
    try {
      await pool.query("UPDATE orgs SET bootstrap = false, name = 'taken' WHERE bootstrap");
      await expect(new IdentityStore(pool).ensureBootstrapOrg("taken")).rejects.toThrow(
        'an org named "taken" exists and is not the bootstrap org',
      );
    } finally {
      await pool.end();
    }
  });
});

describe("bootstrap API key", () => {
  it("verifies as an org-scoped key of the default org and survives a restart without duplicates", async () => {
    const secret = generateSecret();
    const config = testConfig({ bootstrapApiKey: secret, defaultRateLimit: 321 });
    configs.push(config);

    const first = await startService(config);
    const { principal } = await first.client.verifyApiKey({ secret });
    expect(principal).toMatchObject({ scope: KeyScope.ORG, rateLimitPerMinute: 321 });
    expect(principal?.appId).toBeUndefined();
    await first.close();

    const second = await startService(config);
    running.push(second);
    const again = await second.client.verifyApiKey({ secret });
    expect(again.principal).toMatchObject({ orgId: principal?.orgId, keyId: principal?.keyId });
    expect(await countBootstrapRows(config, secret)).toEqual({ keys: 1, orgs: 1 });
    expect(second.logs.text()).toContain("bootstrap API key already present");
  });

  it("is created once when replicas start together", async () => {
    const secret = generateSecret();
    const config = testConfig({ bootstrapApiKey: secret });
    configs.push(config);
    const replicas = await Promise.all([startService(config), startService(config), startService(config)]);
    running.push(...replicas);
    expect(await countBootstrapRows(config, secret)).toEqual({ keys: 1, orgs: 1 });
    const principals = await Promise.all(
      replicas.map(async (r) => (await r.client.verifyApiKey({ secret })).principal),
    );
    expect(new Set(principals.map((p) => p?.keyId)).size).toBe(1);
  });

  it("refuses to start with a malformed key, naming the variable but not the value", async () => {
    const value = "hk_live_tooshort_but_secret";
    const err = await startService(testConfig({ bootstrapApiKey: value })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain("HERALD_BOOTSTRAP_API_KEY");
    expect((err as Error).message).not.toContain(value);
  });

  it("rejects unknown and malformed secrets as UNAUTHENTICATED", async () => {
    const r = running[0]!;
    for (const secret of [generateSecret(), "hk_live_short", "", "Bearer something"]) {
      const err = await r.client.verifyApiKey({ secret }).catch((e: unknown) => ConnectError.from(e));
      expect(err).toMatchObject({ code: Code.Unauthenticated, rawMessage: "invalid API key" });
    }
  });

  it("reports ready on the admin port once Postgres and NATS answer", async () => {
    const r = running[0]!;
    const res = await fetch(`http://127.0.0.1:${r.app.adminPort}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });
});
