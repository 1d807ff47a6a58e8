#!/usr/bin/env node
// Makes sure PostgreSQL, NATS (with JetStream) and Redis answer at their URLs. A local
// server that is installed but stopped is started; with --install (CI) a missing one is
// installed with apt-get first. Otherwise a one-line instruction says what to do.
// No npm dependencies: it runs before `npm install` in dev mode.
import { execFileSync, spawn } from "node:child_process";
import { aptInstall } from "./debian-packages.mjs";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import net from "node:net";
import { pathToFileURL } from "node:url";

const LOCAL = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

export const services = [
  {
    name: "PostgreSQL",
    url: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/herald",
    defaultPort: 5432,
    binary: "/usr/lib/postgresql",
    apt: ["postgresql"],
    start() {
      const versions = readdirSync("/etc/postgresql");
      for (const v of versions) run("pg_ctlcluster", ["--skip-systemctl-redirect", v, "main", "start"]);
    },
  },
  {
    name: "NATS",
    url: (process.env.NATS_URL ?? "nats://127.0.0.1:4222").split(",")[0],
    defaultPort: 4222,
    binary: "/usr/sbin/nats-server",
    apt: ["nats-server"],
    start() {
      mkdirSync("/var/lib/nats-server", { recursive: true });
      spawn(
        "/usr/sbin/nats-server",
        ["-a", "127.0.0.1", "-p", "4222", "-js", "-sd", "/var/lib/nats-server", "-l", "/var/log/nats-server.log"],
        { detached: true, stdio: "ignore" },
      ).unref();
    },
  },
  {
    name: "Redis",
    url: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    defaultPort: 6379,
    binary: "/usr/bin/redis-server",
    apt: ["redis-server"],
    start() {
      mkdirSync("/var/lib/redis", { recursive: true });
      mkdirSync("/var/log/redis", { recursive: true });
      run("redis-server", [
        "--daemonize",
        "yes",
        "--bind",
        "127.0.0.1",
        "-::1",
        "--port",
        "6379",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        "/var/lib/redis",
        "--logfile",
        "/var/log/redis/herald.log",
      ]);
    },
  },
];

function run(cmd, args) {
  execFileSync(cmd, args, { stdio: ["ignore", "ignore", "inherit"] });
}

export function reachable(rawUrl, defaultPort, timeoutMs = 1500) {
  const u = new URL(rawUrl);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port || defaultPort) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

async function waitFor(svc, seconds = 30) {
  for (let i = 0; i < seconds * 4; i++) {
    if (await reachable(svc.url, svc.defaultPort)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

export async function ensureInfra({ install = false, quiet = false } = {}) {
  const problems = [];
  for (const svc of services) {
    if (await reachable(svc.url, svc.defaultPort)) continue;
    const host = new URL(svc.url).hostname;
    if (!LOCAL.has(host)) {
      problems.push(`${svc.name} does not answer at ${host}; check its URL or start it`);
      continue;
    }
    if (!existsSync(svc.binary)) {
      if (!install) {
        problems.push(
          `${svc.name} is not installed: run 'apt-get install -y ${svc.apt.join(" ")}' (or point its URL at a running server)`,
        );
        continue;
      }
      aptInstall(svc.apt);
    }
    if (!quiet) console.log(`starting ${svc.name}…`);
    try {
      svc.start();
    } catch (err) {
      problems.push(`${svc.name} failed to start: ${err.message.split("\n")[0]}`);
      continue;
    }
    if (!(await waitFor(svc))) problems.push(`${svc.name} was started but does not answer at ${svc.url}`);
  }
  if (problems.length > 0) throw new Error(problems.join("\n"));
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  ensureInfra({ install: process.argv.includes("--install") }).then(
    () => console.log("infrastructure: PostgreSQL, NATS and Redis are up"),
    (err) => {
      console.error(err.message);
      process.exit(1);
    },
  );
}
