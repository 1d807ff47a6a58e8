#!/usr/bin/env node
// `npm run dev`: installs what is missing, starts the infrastructure when it is installed
// but stopped, runs every Herald process, and prints the URLs, a working API key and the
// console's admin sign-in.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureConsoleBuilt } from "./console-build.mjs";
import { ensureDatabase } from "./database.mjs";
import { ensureInfra } from "./infra.mjs";
import { ensurePinnedNode } from "./pinned-node.mjs";
import { loadDevEnv } from "./dev-env.mjs";
import { ensureNativeBuilt } from "./native-build.mjs";
import { DEFAULT_PORTS, heraldProcesses, providerUrls, SOURCE_NODE_ARGS } from "./processes.mjs";
import { caBundle, ensureSimulatorCa } from "./trust.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);

function installIfNeeded() {
  const marker = "node_modules/.package-lock.json";
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync("package-lock.json").mtimeMs) return;
  console.log("installing dependencies (npm ci)…");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { stdio: "inherit" });
}

function healthy(port, pathname = "/healthz") {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: pathname, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
  });
}

async function waitHealthy(proc, seconds = 60) {
  for (let i = 0; i < seconds * 4; i++) {
    if (await healthy(proc.health)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${proc.name} did not become healthy on port ${proc.health}`);
}

function prefixLines(stream, label, out) {
  let buf = "";
  stream.on("data", (chunk) => {
    buf += chunk;
    const lines = buf.split("\n");
    buf = lines.pop();
    for (const line of lines) out.write(`${label} ${line}\n`);
  });
}

async function main() {
  installIfNeeded();
  await ensurePinnedNode();
  // The gateway serves console/dist at /console.
  ensureConsoleBuilt();
  // sender-webpush's key agreement; without a C compiler it runs on node:crypto, slower.
  for (const problem of ensureNativeBuilt({ install: true })) console.warn(`herald dev: ${problem}`);
  await ensureInfra();
  const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/herald";
  await ensureDatabase(databaseUrl);
  const secrets = loadDevEnv();
  const env = {
    ...process.env,
    ...secrets,
    DATABASE_URL: databaseUrl,
    HERALD_WEBPUSH_ALLOW_PRIVATE: "1",
    HERALD_WEBHOOK_ALLOW_PRIVATE: "1",
    NODE_EXTRA_CA_CERTS: caBundle(root, ensureSimulatorCa(root)),
  };

  const children = [];
  let stopping = false;
  const stopAll = (code) => {
    if (stopping) return;
    stopping = true;
    for (const c of children) c.kill("SIGTERM");
    // Long enough for a clean stop: an idle sender lets its open fetch run out (at most
    // 5 s, the runtime's PULL_EXPIRES_MS) rather than abandon it.
    setTimeout(() => process.exit(code), 8000).unref();
    Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once("exit", r))))).then(() =>
      process.exit(code),
    );
  };
  process.on("SIGINT", () => stopAll(0));
  process.on("SIGTERM", () => stopAll(0));

  const providers = providerUrls();
  const processes = heraldProcesses(DEFAULT_PORTS, providers);
  const width = Math.max(...processes.map((p) => p.name.length));
  const launch = (proc) => {
    const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, ...proc.args], {
      env: { ...env, ...proc.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const label = `[${proc.name.padEnd(width)}]`;
    prefixLines(child.stdout.setEncoding("utf8"), label, process.stdout);
    prefixLines(child.stderr.setEncoding("utf8"), label, process.stderr);
    child.once("exit", (code, signal) => {
      if (stopping) return;
      console.error(`${label} exited (${signal ?? code}); stopping Herald`);
      stopAll(1);
    });
    children.push(child);
    return proc;
  };
  for (const stage of [...new Set(processes.map((p) => p.stage))].sort()) {
    await Promise.all(
      processes
        .filter((p) => p.stage === stage)
        .map(launch)
        .map((p) => waitHealthy(p)),
    );
  }

  const base = `http://127.0.0.1:${DEFAULT_PORTS.gateway}`;
  const sim = `https://127.0.0.1:${DEFAULT_PORTS.providerSim}`;
  console.log(`
Herald is running.
  API        ${base}/v1
  Docs       ${base}/docs
  OpenAPI    ${base}/openapi.json
  Metrics    ${base}/metrics
  Simulator  ${sim}   admin http://127.0.0.1:${DEFAULT_PORTS.providerSimAdmin}/admin
  APNs       ${providers.APNS_URL}${providers.APNS_URL === sim ? "  (simulated; set APNS_URL for Apple)" : ""}
  FCM        ${providers.FCM_URL}${providers.FCM_URL === sim ? "  (simulated; set FCM_URL for Google)" : ""}
  API key    ${secrets.HERALD_BOOTSTRAP_API_KEY}   (org-scoped; kept in .herald/dev.env)
  Console    ${base}/console   admin ${consoleLogin(secrets)}

Try:  curl -H "Authorization: Bearer ${secrets.HERALD_BOOTSTRAP_API_KEY}" ${base}/v1/apps
Stop with Ctrl-C.
`);
}

/** The console's sign-in line; a password that came from the user's own environment is never printed. */
function consoleLogin(secrets) {
  const fromEnv = Boolean(process.env.HERALD_BOOTSTRAP_ADMIN_PASSWORD);
  const password = fromEnv ? "(from your environment)" : secrets.HERALD_BOOTSTRAP_ADMIN_PASSWORD;
  return `${secrets.HERALD_BOOTSTRAP_ADMIN_EMAIL} / ${password}`;
}

main().catch((err) => {
  console.error(`npm run dev: ${err.message}`);
  process.exit(1);
});
