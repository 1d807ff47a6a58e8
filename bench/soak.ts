import { median, option, QUICK, writeResult } from "./common.js";
import { createApp, ROLES, seedDevices, startSink } from "./e2e.js";
import { startBuiltStack } from "./herald-stack.js";
import { rssMb } from "./proc-stats.js";
import { restClient } from "../test/support/stack.js";
import { apnsToken } from "../test/support/device-tokens.js";

// Soak: the built processes under a steady mixed load for --soak-seconds (600; 60 quick):
// a campaign to --soak-devices mixed devices (3,000) every 5 s, and device registrations
// (8 at a time, 200 ms apart: about 30 a second), while each process's RSS is sampled
// every 5 s. Memory is flat when no process's peak in the last quarter exceeds its peak
// in the second quarter (after warm-up) by more than 15 % and 30 MB; every answer must
// be a 2xx.

const SECONDS = option("soak-seconds", QUICK ? 60 : 600);
const DEVICES = option("soak-devices", 3_000);
const SEND_EVERY_MS = 5_000;
const SAMPLE_EVERY_MS = 5_000;

export interface SoakContext {
  releaseDir: string;
  env: Record<string, string>;
  apiKey: string;
  databaseUrl: string;
}

export async function soak(ctx: SoakContext): Promise<void> {
  const sink = await startSink();
  const sinkUrl = `https://127.0.0.1:${sink.port}`;
  const stack = await startBuiltStack({
    releaseDir: ctx.releaseDir,
    roles: [...ROLES],
    providers: { APNS_URL: sinkUrl, FCM_URL: sinkUrl, FCM_TOKEN_URL: `https://127.0.0.1:${sink.tokenPort}/token` },
    env: { ...ctx.env, HERALD_WEBPUSH_ALLOW_PRIVATE: "true" },
  });
  const admin = restClient(stack.gatewayUrl, ctx.apiKey);
  const samples: { at: number; rss: Record<string, number> }[] = [];
  const statuses = new Map<number, number>();
  const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
  let campaigns = 0;
  let registrations = 0;
  try {
    const appId = await createApp(admin, "mixed", DEVICES);
    // Its own key: the load is meant to run, not to meet the default limit of 1,000 a minute.
    const key = await admin("POST", `/v1/apps/${appId}/api-keys`, { name: "soak", rate_limit_per_minute: 1_000_000 });
    if (key.status !== 201) throw new Error(`soak key: ${key.text}`);
    const api = restClient(stack.gatewayUrl, key.body.secret);
    await seedDevices(ctx.databaseUrl, appId, "mixed", DEVICES, sink.port);
    console.log(`soak: ${SECONDS} s, a campaign to ${DEVICES} devices every ${SEND_EVERY_MS / 1000} s`);
    const pids = stack.pids();
    const t0 = Date.now();
    const end = t0 + SECONDS * 1000;
    const sample = () => {
      const rss: Record<string, number> = {};
      for (const [name, pid] of Object.entries(pids)) rss[name] = rssMb(pid);
      samples.push({ at: Date.now() - t0, rss });
    };
    sample();
    const sampler = setInterval(sample, SAMPLE_EVERY_MS);
    const sends = (async () => {
      while (Date.now() < end) {
        const res = await api("POST", "/v1/push/send", {
          app_id: appId,
          name: `soak-${campaigns}`,
          contents: { en: { title: "Soak", body: `round ${campaigns}` } },
        });
        count(res.status);
        campaigns++;
        await new Promise((r) => setTimeout(r, SEND_EVERY_MS));
      }
    })();
    const registers = (async () => {
      while (Date.now() < end) {
        const batch = await Promise.all(
          Array.from({ length: 8 }, () =>
            api("POST", "/v1/devices/register", { app_id: appId, push_token: apnsToken(), platform: "ios" }),
          ),
        );
        for (const res of batch) count(res.status);
        registrations += batch.length;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await Promise.all([sends, registers]);
    clearInterval(sampler);
    sample();
  } finally {
    await stack.stop();
    sink.child.kill("SIGTERM");
  }
  report(samples, statuses, campaigns, registrations);
}

function report(
  samples: { at: number; rss: Record<string, number> }[],
  statuses: Map<number, number>,
  campaigns: number,
  registrations: number,
) {
  const quarter = (q: number) =>
    samples.filter((s) => s.at >= (q * SECONDS * 1000) / 4 && s.at < ((q + 1) * SECONDS * 1000) / 4);
  const names = Object.keys(samples[0]?.rss ?? {});
  const rows = names.map((name) => {
    const peak = (q: number) => Math.max(...quarter(q).map((s) => s.rss[name] ?? 0));
    const warm = peak(1);
    const late = peak(3);
    const flat = late <= Math.max(warm * 1.15, warm + 30);
    return { name, start: samples[0]!.rss[name]!, warm, late, median: median(samples.map((s) => s.rss[name]!)), flat };
  });
  const bad = [...statuses.keys()].filter((s) => s < 200 || s >= 300);
  const table = [
    `## Soak: ${SECONDS} s, a campaign to ${DEVICES} mixed devices every ${SEND_EVERY_MS / 1000} s, ` +
      `${Math.round(registrations / SECONDS)} registrations/s`,
    "",
    `${campaigns} campaigns, ${registrations} registrations; answers ${JSON.stringify(Object.fromEntries(statuses))}` +
      (bad.length ? ` — NOT all 2xx` : ""),
    "",
    "| process | RSS at start (MB) | peak, 2nd quarter | peak, last quarter | median | flat |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.start.toFixed(0)} | ${r.warm.toFixed(0)} | ${r.late.toFixed(0)} | ${r.median.toFixed(0)} | ${r.flat ? "yes" : "NO"} |`,
    ),
  ].join("\n");
  console.log(table);
  writeResult(
    QUICK ? "soak-quick" : "soak",
    { seconds: SECONDS, campaigns, registrations, statuses: Object.fromEntries(statuses), rows, samples },
    table,
  );
  if (bad.length > 0 || rows.some((r) => !r.flat)) throw new Error("soak: memory not flat or answers not all 2xx");
}
