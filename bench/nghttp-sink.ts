import { type ChildProcess, execFile, spawn } from "node:child_process";
import { aptInstall, which } from "../scripts/debian-packages.mjs";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import net from "node:net";
import { assertRunning, waitUntil } from "../test/support/wait.js";
import os from "node:os";
import path from "node:path";
import { freePort } from "../test/support/stack.js";

// The provider stand-in of bench/senders.ts: nghttp2's C servers, so that the sink is never
// what limits a sender. nghttpd serves a docroot over HTTP/2 (any method, 200 when the file
// exists); it speaks no HTTP/1.1, so nghttpx (h2 and HTTP/1.1 by ALPN) fronts a second,
// cleartext nghttpd on the same docroot for the clients that need HTTP/1.1. h2load measures
// the ceiling of both.

/** Binary → the Debian package that holds it. */
const TOOLS: Record<string, string> = { nghttpd: "nghttp2-server", h2load: "nghttp2-client", nghttpx: "nghttp2-proxy" };

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(" ")} failed: ${stderr.trim() || err.message}`)) : resolve(stdout),
    ),
  );
}

/**
 * nghttpd, nghttpx and h2load, installed with apt-get when missing
 * (scripts/debian-packages.mjs). Resolves to each binary's path.
 */
export async function ensureNghttp(): Promise<Record<string, string>> {
  const missing = Object.entries(TOOLS)
    .filter(([bin]) => !which(bin))
    .map(([, pkg]) => pkg);
  if (missing.length > 0) {
    console.log(`  installing ${missing.join(" ")} with apt-get…`);
    aptInstall(missing);
  }
  const bins = Object.fromEntries(Object.keys(TOOLS).map((bin) => [bin, which(bin)]));
  const still = Object.entries(bins).filter(([, file]) => !file);
  if (still.length > 0) {
    throw new Error(
      `${still.map(([b]) => b).join(", ")} missing: apt-get install -y ${still.map(([b]) => TOOLS[b]).join(" ")}`,
    );
  }
  return bins as Record<string, string>;
}

export interface Sink {
  /** nghttpd over TLS, HTTP/2 only. */
  h2Url: string;
  /** nghttpx over TLS, HTTP/2 or HTTP/1.1 by ALPN, in front of a cleartext nghttpd on the same docroot. */
  frontUrl: string;
  docroot: string;
  /** The sink's processes, for their CPU time. */
  pids(): Record<string, number>;
  stop(): Promise<void>;
}

async function listening(port: number, child: ChildProcess, output: string[], name: string): Promise<void> {
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const s = net.connect({ host: "127.0.0.1", port }, () => {
        s.destroy();
        resolve(true);
      });
      s.on("error", () => resolve(false));
    });
  await waitUntil(
    `${name} to listen on ${port}`,
    async () => {
      assertRunning(child, name, output);
      return accepts();
    },
    10_000,
    50,
  );
}

/**
 * Starts the sink on free ports with `files` (docroot-relative path → content) in a
 * temporary docroot. `maxStreams`: SETTINGS_MAX_CONCURRENT_STREAMS of every HTTP/2 side.
 */
export async function startSink(opts: {
  bins: Record<string, string>;
  files: Record<string, string | Buffer>;
  certFile: string;
  keyFile: string;
  maxStreams: number;
  workers?: number;
}): Promise<Sink> {
  const docroot = mkdtempSync(path.join(os.tmpdir(), "herald-sink-"));
  for (const [rel, content] of Object.entries(opts.files)) {
    const file = path.join(docroot, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
  const [h2Port, backendPort, frontPort] = [await freePort(), await freePort(), await freePort()];
  const workers = String(opts.workers ?? 1);
  const streams = String(opts.maxStreams);
  const children: { name: string; child: ChildProcess }[] = [];
  const start = async (name: string, bin: string, args: string[], port: number) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    const output: string[] = [];
    child.stdout!.setEncoding("utf8").on("data", (s: string) => output.push(s));
    child.stderr!.setEncoding("utf8").on("data", (s: string) => output.push(s));
    children.push({ name, child });
    await listening(port, child, output, name);
  };
  const stop = async () => {
    await Promise.all(
      children.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        await exited;
      }),
    );
    rmSync(docroot, { recursive: true, force: true });
  };
  try {
    const common = ["-a", "127.0.0.1", "-d", docroot, "-n", workers, "-m", streams];
    await start("nghttpd", opts.bins.nghttpd!, [...common, String(h2Port), opts.keyFile, opts.certFile], h2Port);
    await start(
      "nghttpd (behind nghttpx)",
      opts.bins.nghttpd!,
      [...common, "--no-tls", String(backendPort)],
      backendPort,
    );
    await start(
      "nghttpx",
      opts.bins.nghttpx!,
      [
        "--conf=/dev/null",
        // One process: the pid spawned is the one doing the work (and SIGTERM stops it).
        "--single-process",
        `--frontend=127.0.0.1,${frontPort}`,
        `--backend=127.0.0.1,${backendPort};;proto=h2`,
        `--workers=${workers}`,
        `--frontend-http2-max-concurrent-streams=${streams}`,
        `--backend-http2-max-concurrent-streams=${streams}`,
        "--no-ocsp",
        "--no-via",
        "--log-level=WARN",
        opts.keyFile,
        opts.certFile,
      ],
      frontPort,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    h2Url: `https://127.0.0.1:${h2Port}`,
    frontUrl: `https://127.0.0.1:${frontPort}`,
    docroot,
    pids: () => Object.fromEntries(children.map(({ name, child }) => [name, child.pid!])),
    stop,
  };
}

export interface H2loadResult {
  perSecond: number;
  succeeded: number;
  failed: number;
}

/** One h2load run: POSTs `body` to `url` with `headers`; the sink's ceiling for that request. */
export async function h2load(
  bin: string,
  opts: {
    url: string;
    body: Buffer;
    headers: Record<string, string>;
    requests: number;
    clients: number;
    streams: number;
    h1?: boolean;
  },
): Promise<H2loadResult> {
  const bodyFile = path.join(mkdtempSync(path.join(os.tmpdir(), "herald-h2load-")), "body");
  writeFileSync(bodyFile, opts.body);
  try {
    const out = await run(bin, [
      ...(opts.h1 ? ["--h1"] : []),
      "-n",
      String(opts.requests),
      "-c",
      String(opts.clients),
      "-m",
      String(opts.streams),
      "-t",
      "1",
      "-d",
      bodyFile,
      ...Object.entries(opts.headers).flatMap(([k, v]) => ["-H", `${k}: ${v}`]),
      opts.url,
    ]);
    const rate = /finished in [^,]+, ([\d.]+) req\/s/.exec(out);
    const counts = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed/.exec(out);
    if (!rate || !counts) throw new Error(`unreadable h2load output:\n${out}`);
    return { perSecond: Number(rate[1]), succeeded: Number(counts[1]), failed: Number(counts[2]) };
  } finally {
    rmSync(path.dirname(bodyFile), { recursive: true, force: true });
  }
}
