import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { deleteNamespaceStreams } from "./nats-streams.js";
import { findSecrets } from "./secret-scan.js";
import { uniqueName } from "./unique.js";
import { untilServing } from "./wait.js";
import { type InfraUrls, stackEnv } from "./infra-urls.js";
import {
  DEFAULT_PORTS,
  heraldProcesses,
  providerUrls,
  SOURCE_NODE_ARGS,
  type HeraldPorts,
  type HeraldProcess,
} from "../../scripts/processes.mjs";

const root = path.resolve(import.meta.dirname, "../..");

export interface StackProcess {
  name: string;
  child: ChildProcess;
  /** Port of its /healthz. */
  health: number;
  env: NodeJS.ProcessEnv;
  args: string[];
  /** Everything the process wrote to stdout and stderr, across restarts. */
  output: string[];
}

export interface Stack {
  gatewayUrls: string[];
  /** Admin API of the provider simulator. */
  simAdminUrl: string;
  apiKey: string;
  /** The stack's Postgres schema of each service, e.g. schemas["device-registry"]. */
  schemas: Record<string, string>;
  processes: StackProcess[];
  process(name: string): StackProcess;
  /** SIGKILL: no shutdown hooks, in-flight work is simply gone. */
  kill(name: string): Promise<void>;
  /** Starts a stopped or killed process again with the same environment. */
  restart(name: string): Promise<void>;
  /** All output of all processes so far, for leak checks. */
  logs(): string;
  stop(): Promise<void>;
}

/**
 * A port for a process a test or bench starts next, not bound yet. Port 0 made the kernel
 * pick one, and the kernel would hand the same port to the next bind(0) or outgoing
 * connection anywhere on the machine until that process bound it: a chart cluster asks for
 * some 25 before starting its pods, and a pod lost its port now and then. These ports come
 * from below the kernel's ephemeral range (which starts at 32768), from a block of this
 * vitest worker's own, in turn, each checked free by listening on it.
 */
const PORT_BLOCK = 1_500;
const PORT_BLOCKS_FROM = 20_000;
const portBlock = PORT_BLOCKS_FROM + (Number(process.env.VITEST_POOL_ID ?? 0) % 8) * PORT_BLOCK;
let nextPort = Math.floor(Math.random() * PORT_BLOCK);

export async function freePort(): Promise<number> {
  for (let tried = 0; tried < PORT_BLOCK; tried++) {
    const port = portBlock + (nextPort++ % PORT_BLOCK);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${portBlock}-${portBlock + PORT_BLOCK - 1}`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

function waitHealthy(proc: StackProcess, seconds = 60): Promise<void> {
  return untilServing(proc.child, proc.name, `http://127.0.0.1:${proc.health}/healthz`, {
    timeoutMs: seconds * 1000,
    everyMs: 200,
    output: proc.output,
  });
}

function spawnProcess(proc: Omit<StackProcess, "child">): StackProcess {
  const child = spawn(process.execPath, [...SOURCE_NODE_ARGS, ...proc.args], {
    cwd: root,
    env: { ...process.env, ...proc.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const running: StackProcess = { ...proc, child };
  child.stdout!.setEncoding("utf8").on("data", (d: string) => proc.output.push(d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => proc.output.push(d));
  return running;
}

async function stopProcess(proc: StackProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  const exited = once(proc.child, "exit");
  proc.child.kill(signal);
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), 15_000);
  await exited;
  clearTimeout(timer);
}

export interface StackOptions {
  /** Gateway replicas sharing one Redis. */
  gateways?: number;
  /** Extra environment for every process. */
  env?: NodeJS.ProcessEnv;
  /** Extra environment per process name. */
  envFor?: Record<string, NodeJS.ProcessEnv>;
}

/**
 * Starts the real Herald processes (the same definitions as `npm run dev`) on free
 * ports, each service in a fresh schema, under one NATS namespace and Redis key prefix
 * of this stack's own. The provider simulator's CA is trusted through the
 * NODE_EXTRA_CA_CERTS the global setup put in the environment.
 */
export async function startStack(infra: InfraUrls, opts: StackOptions = {}): Promise<Stack> {
  const id = uniqueName("e2e");
  const apiKey = `hk_live_${randomBytes(30).toString("base64url").replace(/[-_]/g, "x").slice(0, 40)}`;
  const portNames = Object.keys(DEFAULT_PORTS) as (keyof HeraldPorts)[];
  const ports = Object.fromEntries(await Promise.all(portNames.map(async (n) => [n, await freePort()]))) as HeraldPorts;
  const common: NodeJS.ProcessEnv = {
    ...stackEnv(infra, id, apiKey),
    HERALD_WEBPUSH_ALLOW_PRIVATE: "1",
    HERALD_WEBHOOK_ALLOW_PRIVATE: "1",
    LOG_LEVEL: "debug",
    ...opts.env,
  };
  const schemas: Record<string, string> = {};
  const services = heraldProcesses(ports, providerUrls(ports, {})).filter((def) => def.name !== "gateway");
  const definitions = services.map((def): HeraldProcess & { env: NodeJS.ProcessEnv } => {
    const schema = `${id}_${def.name.replace(/-/g, "_")}`;
    schemas[def.name] = schema;
    return { ...def, env: { ...common, DB_SCHEMA: schema, ...def.env, ...opts.envFor?.[def.name] } };
  });
  const processes: StackProcess[] = [];
  const stop = async () => {
    const leaks = await scanForSecrets(processes);
    await Promise.all(processes.map((p) => stopProcess(p)));
    await dropSchemas(infra.databaseUrl, id);
    await deleteNamespaceStreams(infra.natsUrl, id);
    if (leaks.length > 0) throw new Error(`secrets leaked:\n${leaks.join("\n")}`);
  };
  const gatewayDef = heraldProcesses(ports, providerUrls(ports, {})).find((p) => p.name === "gateway")!;
  const gatewayUrls: string[] = [];
  const gatewayDefs: typeof definitions = [];
  for (let i = 0; i < (opts.gateways ?? 1); i++) {
    const port = i === 0 ? ports.gateway : await freePort();
    gatewayUrls.push(`http://127.0.0.1:${port}`);
    gatewayDefs.push({
      ...gatewayDef,
      name: i === 0 ? "gateway" : `gateway-${i}`,
      health: port,
      env: { ...common, ...gatewayDef.env, PORT: String(port), ...opts.envFor?.gateway },
    });
  }
  try {
    const all = [...definitions, ...gatewayDefs];
    for (const stage of [...new Set(all.map((d) => d.stage))].sort()) {
      const started = all.filter((d) => d.stage === stage).map((d) => spawnProcess({ ...d, output: [] }));
      processes.push(...started);
      await Promise.all(started.map((p) => waitHealthy(p)));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const find = (name: string) => {
    const p = processes.find((x) => x.name === name);
    if (!p) throw new Error(`no process ${name}`);
    return p;
  };
  return {
    gatewayUrls,
    simAdminUrl: `http://127.0.0.1:${ports.providerSimAdmin}`,
    apiKey,
    schemas,
    processes,
    process: find,
    kill: (name) => stopProcess(find(name), "SIGKILL"),
    restart: async (name) => {
      const old = find(name);
      await stopProcess(old);
      const fresh = spawnProcess({ ...old, output: old.output });
      processes[processes.indexOf(old)] = fresh;
      await waitHealthy(fresh);
    },
    logs: () => processes.map((p) => p.output.join("")).join("\n"),
    stop,
  };
}

/**
 * Every Herald process's output and /metrics, scanned for secrets when the stack stops:
 * every end-to-end test is also a leak test (the simulator, which plays Apple and Google,
 * is not Herald and is left out).
 */
async function scanForSecrets(processes: StackProcess[]): Promise<string[]> {
  const herald = processes.filter((p) => p.name !== "provider-sim");
  const found = herald.flatMap((p) => findSecrets(p.output.join(""), `${p.name}'s log`));
  for (const p of herald) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
    const metrics = await fetch(`http://127.0.0.1:${p.health}/metrics`)
      .then((r) => r.text())
      .catch(() => "");
    found.push(...findSecrets(metrics, `${p.name}'s /metrics`));
  }
  return found;
}

async function dropSchemas(databaseUrl: string, id: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>("SELECT nspname FROM pg_namespace WHERE nspname LIKE $1", [
      `${id}%`,
    ]);
    for (const r of rows) await client.query(`DROP SCHEMA "${r.nspname}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A small REST client for the tests: JSON in, status + headers + JSON out. */
export function restClient(baseUrl: string, apiKey?: string) {
  return async function call(method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(baseUrl + p, {
      method,
      headers: {
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, body: json, text };
  };
}
