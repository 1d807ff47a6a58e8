import { expect } from "vitest";
import { restClient, type Stack } from "./stack.js";
import { waitForValue } from "./wait.js";

export type Rest = ReturnType<typeof restClient>;

/** Runs fn over items with at most `concurrency` in flight. */
export async function mapLimit<T, R>(
  items: T[],
  concurrency: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/** An org key without the default 1,000/min limit, for tests that make many calls. */
export async function bulkKey(api: Rest, appId: string): Promise<string> {
  const res = await api("POST", `/v1/apps/${appId}/api-keys`, {
    name: "bulk",
    scope: "org",
    rate_limit_per_minute: 1_000_000,
  });
  expect(res.status, res.text).toBe(201);
  return res.body.secret as string;
}

/**
 * A new app, made with the stack's bootstrap key (`boot`), and a client (`api`) on a bulk key
 * (`key`) for it: where the end-to-end suites start.
 */
export async function appWithBulkKey(
  stack: Pick<Stack, "gatewayUrls" | "apiKey">,
  app: { name: string; platform: string; bundle_id: string },
): Promise<{ appId: string; key: string; api: Rest; boot: Rest }> {
  const boot = restClient(stack.gatewayUrls[0]!, stack.apiKey);
  const created = await boot("POST", "/v1/apps", app);
  expect(created.status, created.text).toBe(201);
  const appId = created.body.id as string;
  const key = await bulkKey(boot, appId);
  return { appId, key, api: restClient(stack.gatewayUrls[0]!, key), boot };
}

/** appWithBulkKey for a web app, configured with a VAPID key pair the service generates (its public key answered). */
export async function webPushApp(
  stack: Pick<Stack, "gatewayUrls" | "apiKey">,
  name: string,
  bundleId: string,
): Promise<{ appId: string; api: Rest; vapidPublicKey: string }> {
  const { appId, api } = await appWithBulkKey(stack, { name, platform: "web", bundle_id: bundleId });
  const config = await api("POST", `/v1/apps/${appId}/platform-config`, {
    platform: "web",
    vapid_subject: "mailto:ops@example.com",
  });
  expect(config.status, config.text).toBe(200);
  return { appId, api, vapidPublicKey: config.body.vapid_public_key as string };
}

/** Polls a campaign until it reaches one of `statuses`. */
export async function waitForCampaign(api: Rest, id: string, statuses = ["completed"], timeoutMs = 120_000) {
  const last = await waitForValue(
    `campaign ${id} to be ${statuses.join(" or ")}`,
    async () => (await api("GET", `/v1/campaigns/${id}`)).body,
    (c: any) => statuses.includes(c?.status) || c?.status === "failed",
    { timeoutMs, everyMs: 250, show: (c: any) => `${c?.status} ${JSON.stringify(c?.stats)}` },
  );
  if (!statuses.includes(last?.status)) throw new Error(`campaign failed: ${JSON.stringify(last)}`);
  return last;
}

/** Checks the stats invariants of a completed campaign (docs/design.md §3 Campaign stats). */
export function expectConsistentStats(campaign: any) {
  const s = campaign.stats;
  expect(s.sent).toBe(campaign.audience_size);
  expect(s.delivered + s.failed + s.bounced + s.throttled).toBe(s.sent);
}

/** One metric's value summed over the series whose labels include `labels`, from a /metrics port (0 when absent). */
export async function scrapeMetric(port: number, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (want.every((w) => line.includes(w))) total += Number(line.split(" ").pop());
  }
  return total;
}

/** A completed campaign that reached every one of its `n` devices, with consistent stats. */
export function expectAllDelivered(campaign: any, n: number): void {
  expect(campaign.audience_size).toBe(n);
  expect(campaign.stats).toMatchObject({ sent: n, delivered: n, failed: 0, bounced: 0, throttled: 0 });
  expectConsistentStats(campaign);
}
