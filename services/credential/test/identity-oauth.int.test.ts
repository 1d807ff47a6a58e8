import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { Role } from "@herald/proto/identity";
import { createLogger } from "@herald/runtime";
import { describe, expect, it } from "vitest";
import { IdentityCleanup } from "../src/identity-cleanup.js";
import { rawPool } from "./harness.js";
import { failure, useAdminIdentity } from "./identity-support.js";

const { config, svc } = useAdminIdentity();

const inSeconds = (s: number) => timestampFromDate(new Date(Date.now() + s * 1000));

describe("OAuth model storage", () => {
  it("upserts and finds a model by id, uid and user code", async () => {
    const payload = { jti: "s1", uid: "u-1", accountId: "acc", nested: { a: [1, 2] } };
    await svc.identity.oAuthUpsert({
      kind: "Session",
      id: "s1",
      payload: JSON.stringify(payload),
      expiresAt: inSeconds(60),
      uid: "u-1",
    });
    const byId = await svc.identity.oAuthFind({ kind: "Session", key: { case: "id", value: "s1" } });
    expect(JSON.parse(byId.payload!)).toEqual(payload);
    expect(byId.consumedAt).toBeUndefined();
    const byUid = await svc.identity.oAuthFind({ kind: "Session", key: { case: "uid", value: "u-1" } });
    expect(JSON.parse(byUid.payload!)).toEqual(payload);
    // Kinds are separate namespaces.
    expect((await svc.identity.oAuthFind({ kind: "Grant", key: { case: "id", value: "s1" } })).payload).toBeUndefined();

    await svc.identity.oAuthUpsert({
      kind: "DeviceCode",
      id: "d1",
      payload: "{}",
      expiresAt: inSeconds(60),
      userCode: "ABCD-EFGH",
    });
    const byCode = await svc.identity.oAuthFind({ kind: "DeviceCode", key: { case: "userCode", value: "ABCD-EFGH" } });
    expect(byCode.payload).toBe("{}");

    // An upsert replaces the payload.
    await svc.identity.oAuthUpsert({ kind: "Session", id: "s1", payload: '{"v":2}', expiresAt: inSeconds(60) });
    expect((await svc.identity.oAuthFind({ kind: "Session", key: { case: "id", value: "s1" } })).payload).toBe(
      '{"v":2}',
    );
  });

  it("returns a consumed model with consumed_at set, and keeps it when upserted again", async () => {
    await svc.identity.oAuthUpsert({
      kind: "AuthorizationCode",
      id: "c1",
      payload: '{"a":1}',
      expiresAt: inSeconds(60),
    });
    const t0 = Date.now();
    await svc.identity.oAuthConsume({ kind: "AuthorizationCode", id: "c1" });
    const found = await svc.identity.oAuthFind({ kind: "AuthorizationCode", key: { case: "id", value: "c1" } });
    expect(found.payload).toBe('{"a":1}');
    const consumedAt = timestampDate(found.consumedAt!).getTime();
    expect(Math.abs(consumedAt - t0)).toBeLessThan(5_000);

    await svc.identity.oAuthConsume({ kind: "AuthorizationCode", id: "c1" });
    await svc.identity.oAuthUpsert({
      kind: "AuthorizationCode",
      id: "c1",
      payload: '{"a":2}',
      expiresAt: inSeconds(60),
    });
    const again = await svc.identity.oAuthFind({ kind: "AuthorizationCode", key: { case: "id", value: "c1" } });
    expect(timestampDate(again.consumedAt!).getTime()).toBe(consumedAt);
  });

  it("destroys one model, and every model of a grant at once", async () => {
    const grant = (kind: string, id: string, grantId: string) =>
      svc.identity.oAuthUpsert({ kind, id, payload: "{}", expiresAt: inSeconds(60), grantId });
    await grant("Grant", "g1", "g1");
    await grant("RefreshToken", "r1", "g1");
    await grant("AuthorizationCode", "c2", "g1");
    await grant("RefreshToken", "r2", "g2");
    const find = async (kind: string, id: string) =>
      (await svc.identity.oAuthFind({ kind, key: { case: "id", value: id } })).payload;

    await svc.identity.oAuthDestroy({ kind: "RefreshToken", id: "r2" });
    expect(await find("RefreshToken", "r2")).toBeUndefined();

    await svc.identity.oAuthRevokeByGrantId({ grantId: "g1" });
    for (const [kind, id] of [
      ["Grant", "g1"],
      ["RefreshToken", "r1"],
      ["AuthorizationCode", "c2"],
    ] as const) {
      expect(await find(kind, id)).toBeUndefined();
    }
  });

  it("never returns a model past its expiry, and the cleanup deletes it", async () => {
    await svc.identity.oAuthUpsert({
      kind: "Interaction",
      id: "i1",
      payload: "{}",
      expiresAt: inSeconds(-1),
      uid: "iu",
    });
    await svc.identity.oAuthUpsert({ kind: "Interaction", id: "i2", payload: "{}" });
    expect(
      (await svc.identity.oAuthFind({ kind: "Interaction", key: { case: "id", value: "i1" } })).payload,
    ).toBeUndefined();
    expect(
      (await svc.identity.oAuthFind({ kind: "Interaction", key: { case: "uid", value: "iu" } })).payload,
    ).toBeUndefined();
    // No expiry: lives until destroyed.
    expect((await svc.identity.oAuthFind({ kind: "Interaction", key: { case: "id", value: "i2" } })).payload).toBe(
      "{}",
    );
  });

  it("rejects malformed requests", async () => {
    const calls = [
      () => svc.identity.oAuthUpsert({ kind: "Session", id: "x", payload: "not json" }),
      () => svc.identity.oAuthUpsert({ kind: "Session", id: "x", payload: "[1]" }),
      () => svc.identity.oAuthUpsert({ kind: "", id: "x", payload: "{}" }),
      () => svc.identity.oAuthUpsert({ kind: "Session", id: "", payload: "{}" }),
      () => svc.identity.oAuthFind({ kind: "Session" }),
    ];
    for (const call of calls) expect((await failure(call())).code).toBe(Code.InvalidArgument);
  });
});

describe("OAuth clients", () => {
  it("registers a client with a random id, lists, gets and deletes it", async () => {
    const redirectUris = ["http://127.0.0.1:53682/callback", "https://cli.example.com/cb", "http://[::1]/cb"];
    const { client } = await svc.identity.createOAuthClient({ orgId: svc.orgId, name: " CLI ", redirectUris });
    expect(client).toMatchObject({ orgId: svc.orgId, name: "CLI", redirectUris });
    expect(client!.clientId).toMatch(/^hc_[A-Za-z0-9_-]{24}$/);
    const second = (await svc.identity.createOAuthClient({ orgId: svc.orgId, name: "CLI", redirectUris })).client!;
    expect(second.clientId).not.toBe(client!.clientId);

    expect((await svc.identity.getOAuthClient({ clientId: client!.clientId })).client).toEqual(client);
    const list = await svc.identity.listOAuthClients({ orgId: svc.orgId, page: { page: 1, perPage: 1 } });
    expect(list.clients.map((c) => c.clientId)).toEqual([client!.clientId]);
    expect(list.page?.total).toBe(2n);

    await svc.identity.deleteOAuthClient({ orgId: svc.orgId, clientId: client!.clientId });
    expect((await failure(svc.identity.getOAuthClient({ clientId: client!.clientId }))).code).toBe(Code.NotFound);
    expect((await failure(svc.identity.deleteOAuthClient({ orgId: svc.orgId, clientId: client!.clientId }))).code).toBe(
      Code.NotFound,
    );
  });

  it("accepts only absolute http(s) redirect URIs, http only on loopback, without fragments", async () => {
    for (const uri of [
      "http://example.com/cb",
      "https://example.com/cb#frag",
      "/relative/cb",
      "custom-scheme:/cb",
      "javascript:alert(1)",
      "https://user:pw@example.com/cb",
    ]) {
      const err = await failure(svc.identity.createOAuthClient({ orgId: svc.orgId, name: "Bad", redirectUris: [uri] }));
      expect(err.code, uri).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toMatch(/^redirect_uris\[0\] /);
    }
    const none = await failure(svc.identity.createOAuthClient({ orgId: svc.orgId, name: "None", redirectUris: [] }));
    expect(none.code).toBe(Code.InvalidArgument);
    const localhost = await svc.identity.createOAuthClient({
      orgId: svc.orgId,
      name: "Ok",
      redirectUris: ["http://localhost:8000/cb"],
    });
    expect(localhost.client?.redirectUris).toEqual(["http://localhost:8000/cb"]);
  });
});

describe("cleanup", () => {
  it("deletes expired models and invitations, in batches, and nothing live", async () => {
    const pool = rawPool(config);
    try {
      await pool.query(
        `INSERT INTO oauth_models (kind, id, payload, expires_at)
         SELECT 'AccessToken', 'old' || n, '{}', now() - interval '1 minute' FROM generate_series(1, 1500) n`,
      );
      await svc.identity.oAuthUpsert({ kind: "AccessToken", id: "live", payload: "{}", expiresAt: inSeconds(60) });
      await svc.identity.createInvitation({ orgId: svc.orgId, email: "gone@herald.test", role: Role.VIEWER });
      await pool.query("UPDATE invitations SET expires_at = now() - interval '1 second'");

      await new IdentityCleanup(
        pool,
        { intervalMs: 60_000, signingKeyRetentionHours: 24 },
        createLogger("t", "silent"),
      ).runOnce();
      const count = async (q: string) => (await pool.query<{ n: number }>(q)).rows[0]!.n;
      expect(await count("SELECT count(*)::int AS n FROM oauth_models WHERE expires_at <= now()")).toBe(0);
      expect(await count("SELECT count(*)::int AS n FROM invitations")).toBe(0);
      expect((await svc.identity.oAuthFind({ kind: "AccessToken", key: { case: "id", value: "live" } })).payload).toBe(
        "{}",
      );
      expect((await svc.identity.oAuthFind({ kind: "Interaction", key: { case: "id", value: "i2" } })).payload).toBe(
        "{}",
      );
    } finally {
      await pool.end();
    }
  });
});
