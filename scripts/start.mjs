#!/usr/bin/env node
// `npm start`: Herald on one machine as production runs it. Installs what is missing,
// builds what is stale (scripts/start-build.mjs), starts the infrastructure when it is
// installed but stopped, runs every role from the production build (the herald command's
// bundle, packages/cli/dist/main.js, as the image does: deploy/Dockerfile) with the
// provider simulator, and prints the URLs, a working API key and the console's admin
// sign-in.
//
// `npm run dev` (scripts/dev.mjs) is the same from the TypeScript sources under tsx, no
// build step: both are runHerald below, and differ only in what they run. The processes,
// their ports and environment are scripts/processes.mjs, as for the tests and the bench.
//
//   npm start [-- --ports gateway=8081,providerSim=4543,...]
//   (--ports: any of the names of DEFAULT_PORTS in scripts/processes.mjs; the others keep theirs)
import { execFileSync, spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { ensureConsoleBuilt } from "./console-build.mjs";
import { ensureDatabase } from "./database.mjs";
import { loadDevEnv } from "./dev-env.mjs";
import { ensureInfra } from "./infra.mjs";
import { ensureNativeBuilt } from "./native-build.mjs";
import { ensurePinnedNode } from "./pinned-node.mjs";
import { DEFAULT_PORTS, heraldProcesses, providerUrls, SOURCE_NODE_ARGS } from "./processes.mjs";
import { buildStale } from "./start-build.mjs";
import { caBundle, ensureSimulatorCa } from "./trust.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * What each mode runs. built: the production build, as the image runs it (NODE_ENV too);
 * source: the TypeScript sources under tsx.
 */
const MODES = {
  built: {
    command: "npm start",
    describe: "the production build (packages/cli/dist)",
    prepare: async (say) => say(`build: ${(await buildStale({ warn: (m) => say(m, "warn") })).join(", ")}`),
    args: (proc) => proc.built,
    env: { NODE_ENV: "production" },
  },
  source: {
    command: "npm run dev",
    describe: "the TypeScript sources (tsx)",
    prepare: async (say) => {
      // The gateway serves console/dist at /console.
      ensureConsoleBuilt();
      // sender-webpush's key agreement; without a C compiler it runs on node:crypto, slower.
      for (const problem of ensureNativeBuilt({ install: true })) say(problem, "warn");
    },
    args: (proc) => [...SOURCE_NODE_ARGS, ...proc.args],
    env: {},
  },
};

/** How long the processes get to stop after SIGTERM before they are killed: a role's own grace is 25 s (packages/runtime/src/shutdown.ts). */
const STOP_GRACE_MS = 30_000;

function installIfNeeded() {
  const marker = "node_modules/.package-lock.json";
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync("package-lock.json").mtimeMs) return;
  console.log("installing dependencies (npm ci)…");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { stdio: "inherit" });
}

/** `--ports name=port,…` over DEFAULT_PORTS. */
function parsePorts(spec) {
  const ports = { ...DEFAULT_PORTS };
  for (const pair of (spec ?? "").split(",").filter(Boolean)) {
    const [name, value] = pair.split("=");
    const port = Number(value);
    if (!(name in DEFAULT_PORTS)) {
      throw new Error(`--ports: unknown name "${name}" (names: ${Object.keys(DEFAULT_PORTS).join(", ")})`);
    }
    if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`--ports: ${name} needs a port number`);
    ports[name] = port;
  }
  return ports;
}

function answers200(port, pathname) {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: pathname, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
  });
}

async function waitReady(proc, seconds = 60) {
  for (let i = 0; i < seconds * 4; i++) {
    if (await answers200(proc.health, proc.ready)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${proc.name} did not become ready (${proc.ready} on port ${proc.health})`);
}

/** Copies a process's output line by line, each line after `label`: one write per chunk read, not per line (a gateway logs two lines per request). */
function prefixLines(stream, label, out) {
  let partial = "";
  stream.on("data", (chunk) => {
    const end = chunk.lastIndexOf("\n");
    if (end === -1) {
      partial += chunk;
      return;
    }
    const lines = partial + chunk.slice(0, end);
    partial = chunk.slice(end + 1);
    out.write(`${label} ${lines.replaceAll("\n", `\n${label} `)}\n`);
  });
}

/** Runs Herald in one of MODES until SIGINT, SIGTERM or SIGHUP, or until one of its processes exits. */
export async function runHerald(mode, argv = process.argv.slice(2)) {
  const { command, describe, prepare, args, env: modeEnv } = MODES[mode];
  const say = (message, level = "log") => console[level](`${command}: ${message}`);
  process.chdir(root);
  installIfNeeded();
  await ensurePinnedNode();
  const ports = parsePorts(parseArgs({ args: argv, options: { ports: { type: "string" } } }).values.ports);
  await prepare(say);
  await ensureInfra();
  const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/herald";
  await ensureDatabase(databaseUrl);
  const secrets = loadDevEnv();
  const env = {
    ...process.env,
    ...secrets,
    ...modeEnv,
    DATABASE_URL: databaseUrl,
    HERALD_WEBPUSH_ALLOW_PRIVATE: "1",
    HERALD_WEBHOOK_ALLOW_PRIVATE: "1",
    NODE_EXTRA_CA_CERTS: caBundle(root, ensureSimulatorCa(root)),
  };

  const children = [];
  const running = () => children.filter((c) => c.exitCode === null && c.signalCode === null);
  let stopping;
  /** Stops every process (SIGTERM, SIGKILL after the grace), then exits with `code`. */
  const stopAll = (code) => {
    stopping ??= (async () => {
      const left = running();
      for (const c of left) c.kill("SIGTERM");
      // An idle sender lets its open fetch run out (at most 5 s, the runtime's
      // PULL_EXPIRES_MS) rather than abandon it; what still runs after the grace is killed.
      const kill = setTimeout(() => {
        for (const c of running()) c.kill("SIGKILL");
      }, STOP_GRACE_MS);
      // "close": exited, and the last of its output printed.
      await Promise.all(left.map((c) => new Promise((r) => c.once("close", r))));
      clearTimeout(kill);
      process.exit(code);
    })();
    return stopping;
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => stopAll(0));
  // The children have process groups of their own: nothing else stops them if this process ends otherwise.
  process.on("exit", () => {
    for (const c of running()) c.kill("SIGKILL");
  });

  const providers = providerUrls(ports);
  const processes = heraldProcesses(ports, providers);
  const width = Math.max(...processes.map((p) => p.name.length));
  const launch = (proc) => {
    const child = spawn(process.execPath, args(proc), {
      env: { ...env, ...proc.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: a terminal's Ctrl-C reaches this process alone, which stops
      // each child with one SIGTERM (a second signal makes a role exit at once).
      detached: true,
    });
    const label = `[${proc.name.padEnd(width)}]`;
    prefixLines(child.stdout.setEncoding("utf8"), label, process.stdout);
    prefixLines(child.stderr.setEncoding("utf8"), label, process.stderr);
    child.once("exit", (code, signal) => {
      if (stopping) return;
      console.error(`${label} exited (${signal ?? code}); stopping Herald`);
      void stopAll(1);
    });
    children.push(child);
    return proc;
  };
  try {
    for (const stage of [...new Set(processes.map((p) => p.stage))].sort()) {
      if (stopping) return;
      await Promise.all(
        processes
          .filter((p) => p.stage === stage)
          .map(launch)
          .map((p) => waitReady(p)),
      );
    }
  } catch (err) {
    say(err.message, "error");
    return stopAll(1);
  }
  if (stopping) return;

  const base = `http://127.0.0.1:${ports.gateway}`;
  const sim = `https://127.0.0.1:${ports.providerSim}`;
  console.log(`
Herald is running, from ${describe}.
  API        ${base}/v1
  Docs       ${base}/docs
  OpenAPI    ${base}/openapi.json
  Metrics    ${base}/metrics
  Simulator  ${sim}   admin http://127.0.0.1:${ports.providerSimAdmin}/admin
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

/** The entry of `npm start` and `npm run dev`: runs Herald in `mode`, or prints why it cannot and exits 1. */
export function main(mode) {
  runHerald(mode).catch((err) => {
    console.error(`${MODES[mode].command}: ${err.message}`);
    process.exit(1);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main("built");
