import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { jetstream, type JsMsg } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Platform } from "@herald/proto/common";
import { KeyScope } from "@herald/proto/credential";
import { AppDeletedSchema } from "@herald/proto/delivery";
import { streamNames } from "@herald/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeApnsKey } from "../../../test/support/credential-fixtures.js";
import { generateSecret } from "../src/api-key-secret.js";
import { cleanUp, pemBody, rawPool, startService, testConfig, type Running } from "./harness.js";

const config = testConfig({ bootstrapApiKey: generateSecret() });
const names = streamNames(config.natsNamespace);
let svc: Running;
let nc: NatsConnection;
let orgId: string;
const secrets: string[] = [config.bootstrapApiKey!];

beforeAll(async () => {
  svc = await startService(config);
  orgId = (await svc.client.verifyApiKey({ secret: config.bootstrapApiKey! })).principal!.orgId;
  nc = await connect({ servers: config.natsUrl });
});

afterAll(async () => {
  await svc?.close();
  await nc?.close();
  await cleanUp(config);
});

/** Reads app.deleted messages of this test's namespace from the start of the stream. */
async function readAppDeleted(count: number): Promise<JsMsg[]> {
  const consumer = await jetstream(nc).consumers.get(names.eventsStream, { filter_subjects: names.appDeleted });
  const out: JsMsg[] = [];
  const deadline = Date.now() + 10_000;
  while (out.length < count && Date.now() < deadline) {
    const msg = await consumer.next({ expires: 1_000 });
    if (msg) out.push(msg);
  }
  await consumer.delete().catch(() => undefined);
  return out;
}

describe("DeleteApp", () => {
  it("deletes the app with its keys and configs and publishes app.deleted", async () => {
    const app = (
      await svc.client.createApp({ orgId, name: "Doomed", platform: Platform.IOS, bundleId: "com.example.doomed" })
    ).app!;
    const key = await svc.client.createApiKey({ appId: app.id, name: "app key", scope: KeyScope.APP });
    secrets.push(key.secret);
    const apns = makeApnsKey();
    secrets.push(pemBody(apns.p8));
    await svc.client.putPlatformConfig({
      appId: app.id,
      credentials: { case: "apns", value: { p8Key: apns.p8, keyId: apns.keyId, teamId: apns.teamId } },
    });

    const before = Date.now();
    await svc.client.deleteApp({ appId: app.id });

    const [msg] = await readAppDeleted(1);
    expect(msg?.subject).toBe(names.appDeleted);
    expect(msg?.headers?.get("Nats-Msg-Id")).toBe(`app.deleted.${app.id}`);
    const event = fromBinary(AppDeletedSchema, msg!.data);
    expect(event.appId).toBe(app.id);
    expect(timestampDate(event.deletedAt!).getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(timestampDate(event.deletedAt!).getTime()).toBeLessThanOrEqual(Date.now());

    const err = await svc.client.verifyApiKey({ secret: key.secret }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toMatchObject({ code: Code.Unauthenticated });
    const send = await svc.client
      .getSendCredentials({ appId: app.id, platform: Platform.IOS })
      .catch((e: unknown) => ConnectError.from(e));
    expect(send).toMatchObject({ code: Code.NotFound });

    const pool = rawPool(config);
    try {
      const count = async (sql: string) => Number((await pool.query<{ n: string }>(sql, [app.id])).rows[0]!.n);
      expect(await count("SELECT count(*) AS n FROM platform_configs WHERE app_id = $1")).toBe(0);
      // The publisher deletes the row right after the ack, possibly a moment after we read the message.
      await expect.poll(() => count("SELECT count(*) AS n FROM outbox WHERE msg_id = 'app.deleted.' || $1")).toBe(0);
    } finally {
      await pool.end();
    }
  });

  it("publishes events left in the outbox by a crash when the service starts again", async () => {
    await svc.close();
    // What a crash between the commit of a deletion and its publish leaves behind.
    const appId = "0b6a1d3e-2f44-4c55-9d66-778899aabbcc";
    const pool = rawPool(config);
    await pool
      .query("INSERT INTO outbox (kind, msg_id, payload) VALUES ('app.deleted', $1, $2)", [
        `app.deleted.${appId}`,
        JSON.stringify({ app_id: appId, deleted_at: new Date().toISOString() }),
      ])
      .finally(() => pool.end());

    svc = await startService(config, svc.logs);
    const messages = await readAppDeleted(2);
    // The row keeps its JSON payload (rows of earlier releases too); the stream gets protobuf.
    expect(messages.map((m) => fromBinary(AppDeletedSchema, m.data).appId)).toContain(appId);
  });

  it("never logs a secret", () => {
    const logs = svc.logs.text();
    expect(logs).toContain("app deleted");
    for (const secret of secrets) expect(logs).not.toContain(secret);
    expect(logs).not.toContain("PRIVATE KEY");
  });
});
