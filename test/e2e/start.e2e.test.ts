import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync, readFileSync, statSync, utimesSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { consoleBuildIsStale } from "../../scripts/console-build.mjs";
import { CLI_BUNDLE, DEFAULT_PORTS, type HeraldPorts, heraldProcesses } from "../../scripts/processes.mjs";
import { bundleIsStale } from "../../scripts/start-build.mjs";
import { expectAllDelivered, waitForCampaign } from "../support/herald-client.js";
import { createMixedApp } from "../support/mixed-app.js";
import { deleteNamespaceStreams } from "../support/nats-streams.js";
import { findSecrets } from "../support/secret-scan.js";
import { freePort } from "../support/stack.js";
import { uniqueName } from "../support/unique.js";
import { waitWhileRunning } from "../support/wait.js";

// `npm start` as a user runs it: npm from a PATH without the project's node_modules/.bin,
// in a terminal of its own (its own process group, which Ctrl-C signals). It builds what
// is stale (a build that `npm test`'s chart test or an earlier run made is reused: a no-op
// takes about a second; from nothing, a few minutes), runs every role from the production
// build with the simulator, and prints what dev mode prints. Its own ports, database, NATS
// namespace and Redis prefix; the API key is the one it printed and kept in .herald/dev.env.
const root = path.resolve(import.meta.dirname, "../..");
/** A fresh clone's first start builds everything: TypeScript, the bundle, the console. */
const FIRST_START_MS = 600_000;

let npm: ChildProcess;
const output: string[] = [];
const printed = () => output.join("");
let ports: HeraldPorts;
let databaseUrl: string;
let namespace: string;
/** Every process under npm once Herald runs, with its start time (a pid may be reused later). */
let tree: ProcInfo[] = [];

interface ProcInfo {
  pid: number;
  ppid: number;
  startTime: string;
  argv: string[];
}

/** One process from /proc, or undefined when it is gone. */
function procInfo(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which may hold spaces and parentheses: state ppid … starttime (the 22nd).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
    return { pid, ppid: Number(fields[1]), startTime: fields[19]!, argv };
  } catch {
    return undefined;
  }
}

/** The processes whose ancestors include `pid`. */
function descendants(pid: number): ProcInfo[] {
  const all = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map((d) => procInfo(Number(d)))
    .filter((p): p is ProcInfo => p !== undefined);
  const out: ProcInfo[] = [];
  let parents = new Set([pid]);
  while (parents.size > 0) {
    const children = all.filter((p) => parents.has(p.ppid));
    out.push(...children);
    parents = new Set(children.map((p) => p.pid));
  }
  return out;
}

const alive = (p: ProcInfo) => procInfo(p.pid)?.startTime === p.startTime;

async function dropDatabase(url: string): Promise<void> {
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  const infra = inject("infra");
  namespace = uniqueName("start");
  const db = new URL(infra.databaseUrl);
  db.pathname = `/herald_${namespace}`;
  databaseUrl = db.toString();
  const names = Object.keys(DEFAULT_PORTS) as (keyof HeraldPorts)[];
  ports = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await freePort()]))) as HeraldPorts;
  const userPath = (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => !dir.includes("node_modules"))
    .join(path.delimiter);
  npm = spawn(
    "npm",
    [
      "start",
      "--",
      "--ports",
      Object.entries(ports)
        .map(([n, p]) => `${n}=${p}`)
        .join(","),
    ],
    {
      cwd: root,
      // What a user's shell has, and the infrastructure this stack uses (the database is made by npm start).
      env: {
        PATH: userPath,
        HOME: process.env.HOME ?? "/root",
        DATABASE_URL: databaseUrl,
        NATS_URL: infra.natsUrl,
        NATS_NAMESPACE: namespace,
        REDIS_URL: infra.redisUrl,
        REDIS_KEY_PREFIX: `${namespace}:`,
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  npm.stdout!.setEncoding("utf8").on("data", (d: string) => output.push(d));
  npm.stderr!.setEncoding("utf8").on("data", (d: string) => output.push(d));
  await waitWhileRunning("npm start to print that Herald runs", () => printed().includes("Herald is running"), {
    timeoutMs: FIRST_START_MS,
    everyMs: 250,
    watched: { child: npm, name: "npm start", output },
  });
  tree = descendants(npm.pid!);
}, FIRST_START_MS + 10_000);

afterAll(async () => {
  // What a failed test left running.
  for (const p of [...tree, ...(npm?.pid ? descendants(npm.pid) : [])]) if (alive(p)) process.kill(p.pid, "SIGKILL");
  if (namespace) {
    await dropDatabase(databaseUrl);
    await deleteNamespaceStreams(inject("infra").natsUrl, namespace);
  }
});

describe("npm start", () => {
  it("builds what is stale and prints the URLs, the API key kept in .herald/dev.env and the console's sign-in", () => {
    const text = printed();
    expect(text).toMatch(/npm start: build: TypeScript \(tsc -b\) (up to date|built in [\d.]+ s), bundle /);
    expect(text).toContain("Herald is running, from the production build (packages/cli/dist).");
    const gateway = `http://127.0.0.1:${ports.gateway}`;
    for (const line of [`API        ${gateway}/v1`, `Docs       ${gateway}/docs`, `Console    ${gateway}/console`]) {
      expect(text).toContain(line);
    }
    expect(text).toContain(
      `Simulator  https://127.0.0.1:${ports.providerSim}   admin http://127.0.0.1:${ports.providerSimAdmin}/admin`,
    );
    const key = /API key {4}(hk_live_[A-Za-z0-9]{40}) /.exec(text)?.[1];
    expect(readFileSync(path.join(root, ".herald/dev.env"), "utf8")).toContain(`HERALD_BOOTSTRAP_API_KEY=${key}\n`);
  });

  it("leaves the build up to date for the next start, and finds a bundle older than what it is made from stale", () => {
    expect(bundleIsStale()).toBe(false);
    expect(consoleBuildIsStale()).toBe(false);
    const bundle = path.join(root, CLI_BUNDLE);
    const { atime, mtime } = statSync(bundle);
    utimesSync(bundle, atime, new Date(0));
    try {
      expect(bundleIsStale()).toBe(true);
    } finally {
      utimesSync(bundle, atime, mtime);
    }
  });

  it("runs every role from the production build, as the image does, and nothing under tsx", () => {
    const running = tree.filter(alive);
    for (const def of heraldProcesses(ports)) {
      const proc = running.filter((p) => p.argv.slice(1).join(" ") === def.built.join(" "));
      expect(proc, `${def.name}: ${def.built.join(" ")}`).toHaveLength(1);
      expect(readFileSync(`/proc/${proc[0]!.pid}/environ`, "utf8").split("\0")).toContain("NODE_ENV=production");
    }
    expect(running.filter((p) => p.argv.some((a) => /tsx/.test(a))).map((p) => p.argv.join(" "))).toEqual([]);
  });

  it("registers devices and delivers a campaign to iOS, Android and web through the simulator", async () => {
    const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
    const bootKey = /API key {4}(hk_live_[A-Za-z0-9]{40}) /.exec(printed())![1]!;
    const sim = new SimAdminClient(`http://127.0.0.1:${ports.providerSimAdmin}`);
    const { appId, api } = await createMixedApp({
      gatewayUrl,
      bootKey,
      sim,
      bundle: "com.example.start",
      perPlatform: 4,
    });
    const send = await api("POST", "/v1/push/send", {
      app_id: appId,
      name: "from npm start",
      contents: { en: { title: "Started", body: "with npm start" } },
    });
    expect(send.status, send.text).toBe(201);
    expectAllDelivered(await waitForCampaign(api, send.body.id, ["completed"], 60_000), 12);
    for (const platform of ["apns", "fcm", "webpush"] as const) {
      expect((await sim.deliveryCount(platform)).total, platform).toBe(4);
    }
  });

  it("stops every process on Ctrl-C, each once and cleanly, and leaves none behind", async () => {
    const exited = once(npm, "exit");
    // Ctrl-C: SIGINT to the terminal's foreground process group (npm, its shell, the script).
    process.kill(-npm.pid!, "SIGINT");
    const [code, signal] = await exited;
    // npm ends as its script did, or by the signal it forwarded (as a Ctrl-C'd program does);
    // a script that failed would have npm print an error.
    expect({ code, signal }, printed().slice(-3000)).toSatisfy(
      (e: { code: number | null; signal: string | null }) => e.code === 0 || e.signal === "SIGINT",
    );
    expect(printed()).not.toMatch(/npm (error|ERR!)/);
    expect(tree.filter(alive).map((p) => p.argv.join(" "))).toEqual([]);
    const roles = heraldProcesses(ports).map((p) => p.name);
    const lines = printed().split("\n");
    for (const role of roles) {
      const own = lines.filter((l) => l.startsWith(`[${role} `) || l.startsWith(`[${role}]`));
      // One signal each (a second one makes a role exit at once), then a graceful stop.
      expect(
        own.filter((l) => l.includes('"msg":"shutting down"')),
        role,
      ).toHaveLength(1);
      expect(
        own.filter((l) => l.includes('"msg":"stopped"')),
        role,
      ).toHaveLength(1);
      // The roles' logs hold no secret (the banner printed the API key on purpose; the simulator is not Herald).
      if (role !== "provider-sim") expect(findSecrets(own.join("\n"), `${role}'s log`)).toEqual([]);
    }
  });
});
