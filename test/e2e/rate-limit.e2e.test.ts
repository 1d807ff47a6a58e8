import { afterAll, beforeAll, expect, it } from "vitest";
import { inject } from "vitest";
import { restClient, startStack, type Stack } from "../support/stack.js";

// Two gateway processes share one Redis: the per-key limit of 1,000 requests a minute
// holds across both, with exact headers.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(inject("infra"), { gateways: 2 });
});

afterAll(async () => {
  await stack?.stop();
});

it("allows exactly 1,000 requests a minute per key across two gateways, then 429", async () => {
  const [a, _b] = stack.gatewayUrls.map((u) => restClient(u, stack.apiKey));
  const app = await a!("POST", "/v1/apps", { name: "rl", platform: "web", bundle_id: "com.example.rl" });
  expect(app.status).toBe(201);
  const key = await a!("POST", `/v1/apps/${app.body.id}/api-keys`, { name: "limited" });
  expect(key.status).toBe(201);
  const clients = stack.gatewayUrls.map((u) => restClient(u, key.body.secret));

  const remaining: number[] = [];
  let reset = 0;
  for (let i = 0; i < 1000; i += 20) {
    const batch = await Promise.all(
      Array.from({ length: 20 }, (_, j) => clients[(i + j) % 2]!("GET", `/v1/apps/${app.body.id}`)),
    );
    for (const res of batch) {
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
      remaining.push(Number(res.headers.get("x-ratelimit-remaining")));
      reset = Math.max(reset, Number(res.headers.get("x-ratelimit-reset")));
    }
  }
  expect(remaining.sort((x, y) => y - x)).toEqual(Array.from({ length: 1000 }, (_, i) => 999 - i));
  const now = Date.now() / 1000;
  expect(reset).toBeGreaterThan(now);
  expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 61);

  for (const client of clients) {
    const refused = await client("GET", `/v1/apps/${app.body.id}`);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: "RateLimited", message: expect.any(String) });
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("x-ratelimit-limit")).toBe("1000");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  }

  // Another key is not affected.
  expect((await restClient(stack.gatewayUrls[1]!, stack.apiKey)("GET", "/v1/apps")).status).toBe(200);
});
