import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { configureMixedApp } from "./mixed-app.js";
import { uniqueName } from "./unique.js";

/**
 * What the native client libraries' live suites (sdks/ios Tests/HeraldLiveTests,
 * sdks/android LiveHeraldTest) are given: a real Herald, an app with APNs and FCM
 * configured against the provider simulator, a client key for the library and a server
 * key for the suite's own setup and checks. Names start with HERALD_LIVE_: the Swift root
 * passes only those in (scripts/native-sdks.mjs).
 */
export interface NativeLiveEnv {
  HERALD_LIVE_BASE_URL: string;
  HERALD_LIVE_APP_ID: string;
  HERALD_LIVE_CLIENT_KEY: string;
  HERALD_LIVE_SERVER_KEY: string;
  HERALD_LIVE_SIM_ADMIN_URL: string;
  HERALD_LIVE_APNS_TOPIC: string;
  HERALD_LIVE_FCM_PROJECT: string;
}

/** An app of its own for one live suite, on the Herald at `gatewayUrl`. */
export async function nativeLiveEnv(opts: {
  gatewayUrl: string;
  bootKey: string;
  simAdminUrl: string;
  name: string;
}): Promise<NativeLiveEnv> {
  const sim = new SimAdminClient(opts.simAdminUrl);
  const bundle = `example.${uniqueName(opts.name)
    .replace(/[^a-z0-9]/gi, "")
    .toLowerCase()}`;
  const app = await configureMixedApp({
    gatewayUrl: opts.gatewayUrl,
    bootKey: opts.bootKey,
    sim,
    bundle,
    name: opts.name,
  });
  // Every install shares a client key and this machine is one address: the suites make
  // some hundred calls a minute, above the default budget of 120 per key and address.
  const client = await app.api("POST", `/v1/apps/${app.appId}/api-keys`, {
    name: `${opts.name} app`,
    kind: "client",
    rate_limit_per_minute: 100_000,
  });
  if (client.status !== 201) throw new Error(`client key: ${client.status} ${client.text}`);
  return {
    HERALD_LIVE_BASE_URL: opts.gatewayUrl,
    HERALD_LIVE_APP_ID: app.appId,
    HERALD_LIVE_CLIENT_KEY: client.body.secret,
    HERALD_LIVE_SERVER_KEY: app.key,
    HERALD_LIVE_SIM_ADMIN_URL: opts.simAdminUrl,
    HERALD_LIVE_APNS_TOPIC: bundle,
    HERALD_LIVE_FCM_PROJECT: app.serviceAccount.projectId,
  };
}

// For working on a library against `npm run dev`: prints the environment as `export` lines.
//   eval "$(node --conditions=herald-source --import tsx test/support/native-live.ts)"
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(import.meta.dirname, "../..");
  const devEnv = Object.fromEntries(
    readFileSync(path.join(root, ".herald/dev.env"), "utf8")
      .split("\n")
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
  const bootKey = process.env.HERALD_BOOTSTRAP_API_KEY ?? devEnv.HERALD_BOOTSTRAP_API_KEY;
  if (!bootKey) throw new Error("no HERALD_BOOTSTRAP_API_KEY: start `npm run dev` first");
  const env = await nativeLiveEnv({
    gatewayUrl: process.env.HERALD_URL ?? "http://127.0.0.1:8080",
    bootKey,
    simAdminUrl: process.env.HERALD_SIM_ADMIN_URL ?? "http://127.0.0.1:4444",
    name: "native-dev",
  });
  for (const [k, v] of Object.entries(env)) console.log(`export ${k}='${v}'`);
}
