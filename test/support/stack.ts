import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import path from "node:path";
import pg from "pg";
import { uniqueName } from "./unique.js";
import type { InfraUrls } from "./infra-urls.js";

const root = path.resolve(import.meta.dirname, "../..");

export interface StackProcess {
  name: string;
  child: ChildProcess;
  port: number;
  adminPort: number;
  /** Everything the process wrote to stdout and stderr. */
  output: string[];
}

export interface Stack {
  gatewayUrls: string[];
  apiKey: string;
  masterKey: string;
  processes: StackProcess[];
  /** All output of all processes so far, for leak checks. */
  logs(): string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitHealthy(proc: StackProcess, seconds = 60): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) {
      throw new Error(`${proc.name} exited with ${proc.child.exitCode}:\n${proc.output.join("").slice(-3000)}`);
    }
    const ok = await fetch(`http://127.0.0.1:${proc.adminPort}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${proc.name} not healthy after ${seconds}s:\n${proc.output.join("").slice(-3000)}`);
}

function launch(name: string, entry: string, env: NodeJS.ProcessEnv, port: number, adminPort: number): StackProcess {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: root,
    env: { ...process.env, ...env, PORT: String(port), ADMIN_PORT: String(adminPort) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const proc: StackProcess = { name, child, port, adminPort, output: [] };
  child.stdout!.setEncoding("utf8").on("data", (d: string) => proc.output.push(d));
  child.stderr!.setEncoding("utf8").on("data", (d: string) => proc.output.push(d));
  return proc;
}

async function stopProcess(proc: StackProcess): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill("SIGTERM");
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), 10_000);
  await once(proc.child, "exit");
  clearTimeout(timer);
}

/**
 * Starts the real Herald processes (the same entry points as `npm run dev`) on free
 * ports, each service in its own fresh schema, under one NATS namespace and Redis key
 * prefix of this stack's own.
 */
export async function startStack(infra: InfraUrls, opts: { gateways?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Stack> {
  const id = uniqueName("e2e");
  const apiKey = `hk_live_${Buffer.from(id).toString("hex").padEnd(40, "0").slice(0, 40)}`;
  const masterKey = (await import("node:crypto")).randomBytes(32).toString("base64");
  const common: NodeJS.ProcessEnv = {
    DATABASE_URL: infra.databaseUrl,
    NATS_URL: infra.natsUrl,
    NATS_NAMESPACE: id,
    REDIS_URL: infra.redisUrl,
    REDIS_KEY_PREFIX: `${id}:`,
    HERALD_MASTER_KEY: masterKey,
    HERALD_BOOTSTRAP_API_KEY: apiKey,
    HERALD_WEBPUSH_ALLOW_PRIVATE: "1",
    LOG_LEVEL: "debug",
    ...opts.env,
  };
  const processes: StackProcess[] = [];
  const [credPort, credAdmin, devPort, devAdmin] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const credential = launch("credential", "services/credential/src/main.ts",
    { ...common, DB_SCHEMA: `${id}_cred` }, credPort, credAdmin);
  const registry = launch("device-registry", "services/device-registry/src/main.ts",
    { ...common, DB_SCHEMA: `${id}_dev` }, devPort, devAdmin);
  processes.push(credential, registry);
  const stop = async () => {
    await Promise.all(processes.map(stopProcess));
    await dropSchemas(infra.databaseUrl, id);
  };
  try {
    await Promise.all([waitHealthy(credential), waitHealthy(registry)]);
    const gatewayUrls: string[] = [];
    const gateways: StackProcess[] = [];
    for (let i = 0; i < (opts.gateways ?? 1); i++) {
      const port = await freePort();
      const gw = launch(`gateway-${i}`, "gateway/src/main.ts", {
        ...common,
        CREDENTIAL_URL: `http://127.0.0.1:${credPort}`,
        DEVICE_REGISTRY_URL: `http://127.0.0.1:${devPort}`,
      }, port, port);
      processes.push(gw);
      gateways.push(gw);
      gatewayUrls.push(`http://127.0.0.1:${port}`);
    }
    await Promise.all(gateways.map((g) => waitHealthy(g)));
    return {
      gatewayUrls,
      apiKey,
      masterKey,
      processes,
      logs: () => processes.map((p) => p.output.join("")).join("\n"),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function dropSchemas(databaseUrl: string, id: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      "SELECT nspname FROM pg_namespace WHERE nspname LIKE $1", [`${id}%`]);
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
    let json: any = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, body: json, text };
  };
}
