import autocannon from "autocannon";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { restClient, startStack, type Stack } from "../support/stack.js";

// The gateway under load from many keys at once: two gateway processes sharing Redis, a
// closed loop of autocannon connections per gateway, each connection bound to one key.
// Every key gets exactly its limit in a minute, whichever gateway answered, the rest is
// 429, and nothing is a 5xx.
const KEYS = 20;
const LIMIT = 50;
/** Requests per key and gateway: well past the limit, so every key reaches it. */
const PER_KEY_AND_GATEWAY = 60;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack(inject("infra"), { gateways: 2, env: { LOG_LEVEL: "warn" } });
});

afterAll(async () => {
  await stack?.stop();
});

it(`holds ${KEYS} keys to exactly ${LIMIT} requests a minute each across two gateways under load`, async () => {
  const admin = restClient(stack.gatewayUrls[0]!, stack.apiKey);
  const app = await admin("POST", "/v1/apps", { name: "load", platform: "ios", bundle_id: "com.example.load" });
  expect(app.status, app.text).toBe(201);
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const key = await admin("POST", `/v1/apps/${app.body.id}/api-keys`, {
      name: `load-${i}`,
      rate_limit_per_minute: LIMIT,
    });
    expect(key.status, key.text).toBe(201);
    keys.push(key.body.secret);
  }

  const statuses = keys.map(() => new Map<number, number>());
  const runs = stack.gatewayUrls.map((url) => {
    let connection = 0;
    return autocannon({
      url: `${url}/v1/apps/${app.body.id}`,
      connections: KEYS,
      amount: KEYS * PER_KEY_AND_GATEWAY,
      setupClient: (client) => {
        // Each connection is one key's client; autocannon balances requests over them.
        const k = connection++ % KEYS;
        client.setHeaders({ authorization: `Bearer ${keys[k]}` });
        client.on("response", (status: number) => statuses[k]!.set(status, (statuses[k]!.get(status) ?? 0) + 1));
      },
    });
  });
  const results = await Promise.all(runs);

  const all = new Map<number, number>();
  for (const byStatus of statuses) for (const [s, n] of byStatus) all.set(s, (all.get(s) ?? 0) + n);
  console.log(
    `load: ${[...all.values()].reduce((a, b) => a + b, 0)} requests over ${KEYS} keys and 2 gateways, ` +
      `statuses ${JSON.stringify(Object.fromEntries(all))}, ` +
      `p50 ${results.map((r) => r.latency.p50).join("/")} ms, p99 ${results.map((r) => r.latency.p99).join("/")} ms`,
  );
  for (const r of results) expect(r.errors + r.timeouts).toBe(0);
  for (const [k, byStatus] of statuses.entries()) {
    expect(byStatus.get(200), `key ${k}`).toBe(LIMIT);
    expect([...byStatus.keys()].sort(), `key ${k}`).toEqual([200, 429]);
  }
  expect([...all.keys()].some((s) => s >= 500)).toBe(false);
});
