import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { root } from "./common.js";
import { cpuSeconds, peakRss } from "./proc-stats.js";

// The parent side of bench/peer-kit.mjs: runs a peer (bench/peer-*.ts, bench/raw-h2.ts) in
// its own plain-Node process, starts its send loop once it is ready, and measures the
// process from outside: its CPU seconds and peak RSS over the loop.

export interface PeerFigures {
  seconds: number;
  ok: number;
  failed: number;
  firstError?: string;
  cpuSeconds: number;
  rss: Record<string, number>;
}

/** Runs `script` with `config` (BENCH_PEER_CONFIG); `name` keys its RSS figure. */
export async function runPeerChild(
  script: string,
  config: unknown,
  env: Record<string, string>,
  name: string,
  /** Called (and awaited) just before the send loop starts, after the peer's warm-up. */
  onGo?: () => void | Promise<void>,
): Promise<PeerFigures> {
  const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", script], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      NODE_ENV: "production",
      BENCH_PEER_CONFIG: JSON.stringify(config),
      ...env,
      ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = messages(child);
  try {
    const ready = await next();
    if (ready.type !== "ready") throw new Error(`${script}: ${ready.message ?? ready.type}`);
    await onGo?.();
    const rss = peakRss({ [name]: child.pid! });
    const cpu0 = cpuSeconds(child.pid!);
    child.send({ type: "go" });
    const done = await next();
    if (done.type !== "done") throw new Error(`${script}: ${done.message ?? done.type}`);
    return {
      seconds: done.seconds!,
      ok: done.ok!,
      failed: done.failed!,
      ...(done.firstError ? { firstError: done.firstError } : {}),
      cpuSeconds: cpuSeconds(child.pid!) - cpu0,
      rss: rss.stop(),
    };
  } finally {
    if (child.connected) child.disconnect();
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  }
}

interface ChildMessage {
  type: "ready" | "done" | "error" | "exit";
  message?: string;
  seconds?: number;
  ok?: number;
  failed?: number;
  firstError?: string;
}

/** The child's IPC messages one at a time; its exit counts as one. */
function messages(child: ChildProcess): () => Promise<ChildMessage> {
  const queue: ChildMessage[] = [];
  const waiting: ((m: ChildMessage) => void)[] = [];
  const push = (m: ChildMessage) => {
    const w = waiting.shift();
    if (w) w(m);
    else queue.push(m);
  };
  child.on("message", (m) => push(m as ChildMessage));
  child.on("exit", (code, signal) => push({ type: "exit", message: `exited with ${code ?? signal}` }));
  return () => {
    const m = queue.shift();
    return m ? Promise.resolve(m) : new Promise((resolve) => waiting.push(resolve));
  };
}
