import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { InfraUrls } from "./infra-urls.js";
import { reachable } from "./infra-urls.js";
import { freePort } from "./stack.js";
import { waitUntil } from "./wait.js";

const run = promisify(execFile);

export type InfraServer = "postgres" | "nats" | "redis";

/**
 * PostgreSQL, NATS (JetStream) and Redis of one test run's own, started from the
 * installed binaries on free ports in a temporary directory: tests that stop or restart
 * a server (the chaos suite) never touch the machine's shared instances, which other test
 * files use concurrently. Nothing is persisted beyond the run; JetStream's file store and
 * PostgreSQL's data directory survive a restart (that is the point of one).
 */
export interface PrivateInfra {
  urls: InfraUrls;
  /** Stops the server (gracefully, as an orchestrator would), waits `downMs`, starts it again on the same port. */
  restart(server: InfraServer, opts?: { downMs?: number }): Promise<{ stoppedAt: number; upAt: number }>;
  /**
   * Freezes the server (SIGSTOP) for `ms`, then lets it go on (SIGCONT): its connections
   * stay open but nothing answers, as in a long pause of its host or a stalled network.
   * NATS and Redis only (PostgreSQL runs as several processes).
   */
  pause(server: "nats" | "redis", ms: number): Promise<{ stoppedAt: number; upAt: number }>;
  stop(server: InfraServer): Promise<void>;
  start(server: InfraServer): Promise<void>;
  /** Stops every server and removes the directory. */
  close(): Promise<void>;
}

interface Server {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Synchronous, for process exit: whatever still runs is killed. */
  kill(): void;
}

/** A server that is one process of ours: it can be signalled (frozen, let go on). */
interface ChildServer extends Server {
  signal(sig: NodeJS.Signals): void;
}

export async function startPrivateInfra(): Promise<PrivateInfra> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "herald-private-infra-"));
  // The postgres user must reach its data directory inside.
  chmodSync(dir, 0o755);
  const [pgPort, natsPort, redisPort] = [await freePort(), await freePort(), await freePort()];
  const servers = {
    postgres: postgresServer(path.join(dir, "pg"), pgPort),
    nats: childServer("nats", natsBinary(), [
      "-js",
      "-sd",
      path.join(dir, "nats"),
      "-a",
      "127.0.0.1",
      "-p",
      String(natsPort),
    ]),
    redis: childServer("redis", "redis-server", [
      "--port",
      String(redisPort),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
    ]),
  } satisfies Record<InfraServer, Server>;
  const urls: InfraUrls = {
    databaseUrl: `postgres://postgres@127.0.0.1:${pgPort}/herald`,
    natsUrl: `nats://127.0.0.1:${natsPort}`,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
  };
  const ready: Record<InfraServer, () => Promise<void>> = {
    postgres: () => waitUntil("private PostgreSQL", () => reachable(urls.databaseUrl, 500)),
    nats: () => waitUntil("private NATS JetStream", () => jetStreamAnswers(urls.natsUrl)),
    redis: () => waitUntil("private Redis", () => reachable(urls.redisUrl, 500)),
  };
  const onExit = () => {
    for (const s of Object.values(servers)) s.kill();
  };
  process.once("exit", onExit);
  const start = async (name: InfraServer) => {
    await servers[name].start();
    await ready[name]();
  };
  const close = async () => {
    process.off("exit", onExit);
    await Promise.allSettled(Object.values(servers).map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all((Object.keys(servers) as InfraServer[]).map(start));
    const admin = new pg.Client({ connectionString: urls.databaseUrl.replace(/\/herald$/, "/postgres") });
    await admin.connect();
    await admin.query("CREATE DATABASE herald");
    await admin.end();
  } catch (err) {
    await close();
    throw err;
  }
  return {
    urls,
    start,
    stop: (name) => servers[name].stop(),
    async restart(name, opts = {}) {
      const stoppedAt = Date.now();
      await servers[name].stop();
      if (opts.downMs) await new Promise((r) => setTimeout(r, opts.downMs));
      await start(name);
      return { stoppedAt, upAt: Date.now() };
    },
    async pause(name, ms) {
      const stoppedAt = Date.now();
      servers[name].signal("SIGSTOP");
      try {
        await new Promise((r) => setTimeout(r, ms));
      } finally {
        servers[name].signal("SIGCONT");
      }
      return { stoppedAt, upAt: Date.now() };
    },
    close,
  };
}

/** A server that runs as this process's child: SIGTERM is its graceful stop. */
function childServer(label: string, binary: string, args: string[]): ChildServer {
  let child: ChildProcess | undefined;
  let stopping = false;
  const output: string[] = [];
  return {
    async start() {
      stopping = false;
      const c = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
      c.stdout!.setEncoding("utf8").on("data", (d: string) => output.push(d));
      c.stderr!.setEncoding("utf8").on("data", (d: string) => output.push(d));
      c.once("exit", (code) => {
        if (child === c && !stopping && code !== 0) {
          process.stderr.write(`private ${label} exited with ${code}:\n${output.join("").slice(-2000)}\n`);
        }
      });
      child = c;
      await new Promise<void>((resolve, reject) => {
        c.once("spawn", resolve);
        c.once("error", reject);
      });
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      stopping = true;
      const exited = once(c, "exit");
      c.kill("SIGTERM");
      const timer = setTimeout(() => c.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
    signal(sig) {
      if (!child || child.exitCode !== null || child.signalCode !== null)
        throw new Error(`private ${label} is not running`);
      child.kill(sig);
    },
    kill() {
      if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/**
 * A throwaway cluster (trust authentication, fsync off) run with pg_ctl. PostgreSQL
 * refuses to run as root: as root, the cluster belongs to the `postgres` user and every
 * command runs as it.
 */
function postgresServer(dataRoot: string, port: number): Server {
  const bin = postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ["runuser", ["-u", "postgres", "--", path.join(bin, tool), ...args]] : [path.join(bin, tool), args];
  const data = path.join(dataRoot, "data");
  const options = `-p ${port} -k ${dataRoot} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const pgCtl = (args: string[]) => {
    const [cmd, argv] = command("pg_ctl", ["-D", data, ...args]);
    return run(cmd, argv);
  };
  let running = false;
  return {
    async start() {
      if (!existsSync(data)) {
        mkdirSync(dataRoot, { recursive: true });
        if (asRoot) {
          const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
          const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
          chownSync(dataRoot, uid, gid);
        }
        const [cmd, argv] = command("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]);
        await run(cmd, argv);
      }
      await pgCtl(["-l", path.join(dataRoot, "postgres.log"), "-o", options, "-w", "-t", "60", "start"]);
      running = true;
    },
    async stop() {
      if (!running) return;
      running = false;
      await pgCtl(["-m", "fast", "-w", "-t", "60", "stop"]);
    },
    kill() {
      if (!running) return;
      running = false;
      const [cmd, argv] = command("pg_ctl", ["-D", data, "-m", "immediate", "stop"]);
      try {
        execFileSync(cmd, argv, { stdio: "ignore" });
      } catch {
        // Already gone.
      }
    },
  };
}

function postgresBinDir(): string {
  if (process.env.HERALD_PG_BIN) return process.env.HERALD_PG_BIN;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, "bin/initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) throw new Error(`no PostgreSQL server binaries under ${root} (set HERALD_PG_BIN)`);
  return path.join(root, versions[0], "bin");
}

function natsBinary(): string {
  for (const p of ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"]) {
    if (existsSync(p)) return p;
  }
  return "nats-server";
}

async function jetStreamAnswers(url: string): Promise<boolean> {
  const { connect } = await import("@nats-io/transport-node");
  const { jetstreamManager } = await import("@nats-io/jetstream");
  let nc: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    nc = await connect({ servers: url, timeout: 1_000 });
    await (await jetstreamManager(nc)).getAccountInfo();
    return true;
  } catch {
    return false;
  } finally {
    await nc?.close().catch(() => undefined);
  }
}
