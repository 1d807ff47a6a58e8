import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
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
  /**
   * The NATS servers one by one when NATS runs as a cluster (startPrivateInfra's
   * `natsServers` > 1; urls.natsUrl then lists every server); empty for one server.
   */
  natsNodes: NatsNode[];
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
  /** kill -9, resolved once the process has exited. */
  crash(): Promise<void>;
}

export interface PrivateInfraOptions {
  /** NATS as a JetStream cluster of this many servers on loopback (natsCluster) instead of one. */
  natsServers?: number;
}

export async function startPrivateInfra(opts: PrivateInfraOptions = {}): Promise<PrivateInfra> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "herald-private-infra-"));
  // The postgres user must reach its data directory inside.
  chmodSync(dir, 0o755);
  const [pgPort, natsPort, redisPort] = [await freePort(), await freePort(), await freePort()];
  const cluster =
    (opts.natsServers ?? 1) > 1 ? await natsCluster(path.join(dir, "nats"), opts.natsServers!) : undefined;
  const servers = {
    postgres: postgresServer(path.join(dir, "pg"), pgPort),
    nats:
      cluster?.server ??
      childServer("nats", natsBinary(), [
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
    natsUrl: cluster?.url ?? `nats://127.0.0.1:${natsPort}`,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
  };
  const ready: Record<InfraServer, () => Promise<void>> = {
    postgres: () => waitUntil("private PostgreSQL", () => reachable(urls.databaseUrl, 500)),
    nats: () => cluster?.ready() ?? waitUntil("private NATS JetStream", () => jetStreamAnswers(urls.natsUrl)),
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
    natsNodes: cluster?.nodes ?? [],
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
    async crash() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) throw new Error(`private ${label} is not running`);
      stopping = true;
      const exited = once(c, "exit");
      c.kill("SIGKILL");
      await exited;
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

/** One server of a private NATS cluster. */
export interface NatsNode {
  /** Its server_name: what JetStream's stream info names as a leader or replica. */
  name: string;
  url: string;
  /** Its HTTP monitoring port's origin (/healthz, /jsz). */
  monitorUrl: string;
  /** kill -9; resolved once the process has exited. */
  crash(): Promise<void>;
  /** Graceful stop (SIGTERM), as an orchestrator's rolling upgrade does. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and store; resolved once its /healthz answers 200 (ready()). */
  start(): Promise<void>;
  /**
   * Waits until the server's /healthz answers 200: since NATS 2.9 only once it has caught
   * up with the cluster's JetStream state (the readiness the official chart probes).
   */
  ready(): Promise<void>;
}

export interface NatsCluster {
  nodes: NatsNode[];
  /** Every server's client URL, comma-separated: Herald's NATS_URL. */
  url: string;
  /** All servers as one (start, stop, freeze together). */
  server: ChildServer;
  /** Every server healthy and JetStream answering through the list. */
  ready(): Promise<void>;
}

/**
 * `size` nats-server processes with JetStream, routed to each other on loopback (cluster
 * "herald"), each with its own store under `dir` and a server tag `node:<i>`; nothing is
 * started yet (server.start(), then ready()). Used by startPrivateInfra({ natsServers }).
 */
export async function natsCluster(dir: string, size: number): Promise<NatsCluster> {
  const ports = [];
  for (let i = 0; i < size; i++)
    ports.push({ client: await freePort(), route: await freePort(), monitor: await freePort() });
  const routes = ports.map((p) => `"nats://127.0.0.1:${p.route}"`).join(", ");
  const nodes = ports.map((p, i): NatsNode & { server: ChildServer } => {
    const name = `nats-${i}`;
    const store = path.join(dir, name);
    mkdirSync(store, { recursive: true });
    const conf = path.join(dir, `${name}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: "${name}"`,
        `listen: "127.0.0.1:${p.client}"`,
        `http: "127.0.0.1:${p.monitor}"`,
        `server_tags: ["node:${i}"]`,
        `jetstream { store_dir: "${store}" }`,
        `cluster { name: "herald", listen: "127.0.0.1:${p.route}", routes: [${routes}] }`,
        "",
      ].join("\n"),
    );
    const server = childServer(name, natsBinary(), ["-c", conf]);
    const monitorUrl = `http://127.0.0.1:${p.monitor}`;
    const ready = () => waitUntil(`${name} healthy`, () => healthy(monitorUrl), 60_000, 100);
    return {
      name,
      url: `nats://127.0.0.1:${p.client}`,
      monitorUrl,
      server,
      crash: () => server.crash(),
      stop: () => server.stop(),
      start: async () => {
        await server.start();
        await ready();
      },
      ready,
    };
  });
  const url = nodes.map((n) => n.url).join(",");
  return {
    nodes,
    url,
    server: {
      start: async () => {
        await Promise.all(nodes.map((n) => n.server.start()));
      },
      stop: async () => {
        await Promise.all(nodes.map((n) => n.server.stop()));
      },
      kill: () => {
        for (const n of nodes) n.server.kill();
      },
      signal: (sig) => {
        for (const n of nodes) n.server.signal(sig);
      },
      crash: async () => {
        await Promise.all(nodes.map((n) => n.server.crash()));
      },
    },
    ready: async () => {
      await Promise.all(nodes.map((n) => n.ready()));
      await waitUntil("private NATS cluster's JetStream", () => jetStreamAnswers(url));
    },
  };
}

async function healthy(monitorUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${monitorUrl}/healthz`, { signal: AbortSignal.timeout(1_000) });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

async function jetStreamAnswers(url: string): Promise<boolean> {
  const { connect } = await import("@nats-io/transport-node");
  const { jetstreamManager } = await import("@nats-io/jetstream");
  let nc: Awaited<ReturnType<typeof connect>> | undefined;
  try {
    nc = await connect({ servers: url.split(","), timeout: 1_000 });
    await (await jetstreamManager(nc)).getAccountInfo();
    return true;
  } catch {
    return false;
  } finally {
    await nc?.close().catch(() => undefined);
  }
}
