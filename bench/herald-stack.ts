import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, mkdirSync } from "node:fs";
import path from "node:path";
import { CLI_BUNDLE, CLI_COMPILED, DEFAULT_PORTS, heraldProcesses, type HeraldPorts } from "../scripts/processes.mjs";
import { freePort } from "../test/support/stack.js";
import { untilServing } from "../test/support/wait.js";
import { LOG_DIR, root } from "./common.js";

// The built Herald processes (production build, production dependencies: what the image
// runs) for benchmarks, wired like dev mode (scripts/processes.mjs) on free ports.

export interface BuiltProcess {
  name: string;
  child: ChildProcess;
  /** Port of /readyz (the gateway: its HTTP port; the others: their admin port). */
  ready: number;
  output: string[];
}

/** Stacks started by this run: numbers their log folders in order. */
let stacks = 0;

export interface BuiltStack {
  gatewayUrl: string;
  processes: BuiltProcess[];
  pids(): Record<string, number>;
  /** The end of each process's output, for a failure's message (the whole is in its log file). */
  recentOutput(): string;
  stop(): Promise<void>;
}

export async function startBuiltStack(opts: {
  releaseDir: string;
  /** Roles to run (the simulator is never one: the benchmark brings its own sink). */
  roles: string[];
  /** APNS_URL, FCM_URL, FCM_TOKEN_URL: the sinks the senders talk to. */
  providers: Record<string, string>;
  env: Record<string, string>;
  envFor?: Record<string, Record<string, string>>;
  /** More than one replica of a role (senders only: they listen on nothing but an admin port). */
  replicas?: Record<string, number>;
  /** Names the folder of LOG_DIR that keeps the processes' output (default: the roles). */
  label?: string;
  /**
   * Roles run from the repository's tsc output (packages/cli/build, each package's dist/)
   * instead of the release's bundle: for a preload that patches a class of a package,
   * which the bundle holds a copy of (bench/stub-exchange.mjs).
   */
  unbundled?: string[];
}): Promise<BuiltStack> {
  const logDir = path.join(
    LOG_DIR,
    `${String(++stacks).padStart(3, "0")}-${(opts.label ?? opts.roles.join(" ")).replace(/[^a-z0-9]+/gi, "-")}`,
  );
  mkdirSync(logDir, { recursive: true });
  const names = Object.keys(DEFAULT_PORTS) as (keyof HeraldPorts)[];
  const ports = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await freePort()]))) as HeraldPorts;
  const defs = heraldProcesses(ports, opts.providers).filter((p) => opts.roles.includes(p.name));
  for (const [role, n] of Object.entries(opts.replicas ?? {})) {
    const def = defs.find((d) => d.name === role);
    if (!def?.name.startsWith("sender-")) throw new Error(`replicas: ${role} is not a sender of this stack`);
    for (let i = 2; i <= n; i++) {
      const admin = await freePort();
      defs.push({ ...def, name: `${role}#${i}`, health: admin, env: { ...def.env, ADMIN_PORT: String(admin) } });
    }
  }
  const processes: BuiltProcess[] = [];
  const stop = async () => {
    await Promise.all(
      processes.map(async (p) => {
        if (p.child.exitCode !== null || p.child.signalCode !== null) return;
        const exited = once(p.child, "exit");
        p.child.kill("SIGTERM");
        const timer = setTimeout(() => p.child.kill("SIGKILL"), 30_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  };
  try {
    for (const stage of [...new Set(defs.map((d) => d.stage))].sort()) {
      const started = defs
        .filter((d) => d.stage === stage)
        .map((d): BuiltProcess => {
          // The release's paths are relative to it; the role's V8 flags come first.
          const unbundled = opts.unbundled?.includes(d.name);
          const args = unbundled ? d.built.map((a) => (a === CLI_BUNDLE ? CLI_COMPILED : a)) : d.built;
          const child = spawn(process.execPath, args, {
            cwd: unbundled ? root : opts.releaseDir,
            env: {
              PATH: process.env.PATH ?? "",
              NODE_ENV: "production",
              ...opts.env,
              ...d.env,
              ...opts.envFor?.[d.name],
              // envFor's NODE_OPTIONS adds to the process's. Profiling:
              // BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench …
              NODE_OPTIONS: [d.env.NODE_OPTIONS, opts.envFor?.[d.name]?.NODE_OPTIONS, process.env.BENCH_NODE_OPTIONS]
                .filter(Boolean)
                .join(" "),
            },
            stdio: ["ignore", "pipe", "pipe"],
          });
          // Kept in memory for a failure's message, and on disk for what went wrong without one.
          const output: string[] = [];
          const log = createWriteStream(path.join(logDir, `${d.name}.log`));
          const keep = (s: string) => {
            output.push(s);
            log.write(s);
          };
          child.stdout!.setEncoding("utf8").on("data", keep);
          child.stderr!.setEncoding("utf8").on("data", keep);
          child.once("close", () => log.end());
          return { name: d.name, child, ready: d.health, output };
        });
      processes.push(...started);
      await Promise.all(started.map(waitReady));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    gatewayUrl: `http://127.0.0.1:${ports.gateway}`,
    processes,
    pids: () => Object.fromEntries(processes.map((p) => [p.name, p.child.pid!])),
    recentOutput: () => processes.map((p) => `[${p.name}] ${p.output.join("").slice(-1500)}`).join("\n"),
    stop,
  };
}

async function waitReady(p: BuiltProcess): Promise<void> {
  await untilServing(p.child, p.name, `http://127.0.0.1:${p.ready}/readyz`, {
    timeoutMs: 60_000,
    everyMs: 200,
    output: p.output,
  });
}
