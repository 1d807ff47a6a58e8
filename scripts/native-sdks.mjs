#!/usr/bin/env node
// The toolchains of the native client libraries (sdks/ios, sdks/android), installed when
// missing, and the one way to run their builds and tests:
//
//   node scripts/native-sdks.mjs ensure            # both toolchains
//   node scripts/native-sdks.mjs swift test …      # `swift …` in sdks/ios, inside the Swift root
//   node scripts/native-sdks.mjs mvn test …        # `mvn …` in sdks/android, offline
//
// Swift: Debian 12 has no Swift compiler and Debian 13's `swiftlang` needs a newer C
// library than this system's, so Swift lives in a Debian 13 root made with debootstrap
// (Debian's package) at SWIFT_ROOT, outside the repository, made once and reused. Its
// builds run chrooted in a private mount namespace (unshare), so the /proc, /dev and
// repository mounts they need vanish with the command; the root shares the host's network,
// so a test inside reaches a Herald on 127.0.0.1.
// Java: the machine's JDK 17 and Maven, against Debian's /usr/share/maven-repo only, which
// the Debian packages below fill (JUnit, the Maven plugins, Android's org.json).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { aptInstall } from "./debian-packages.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const SWIFT_ROOT = process.env.HERALD_SWIFT_ROOT ?? "/opt/herald/swift-root";
const SWIFT_PACKAGES = ["swiftlang", "libc6-dev", "libstdc++-14-dev"];
const JAVA_PACKAGES = [
  "maven",
  "junit4",
  "libhamcrest-java",
  "libandroid-json-java",
  "libmaven-compiler-plugin-java",
  "libmaven-resources-plugin-java",
  "libmaven-jar-plugin-java",
  "libsurefire-java",
];
/** Environment passed into the Swift root: only these (and the live tests' HERALD_LIVE_*). */
const SWIFT_ENV = { PATH: "/usr/bin:/bin:/usr/sbin:/sbin", HOME: "/root", LANG: "C.UTF-8" };

function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, { stdio: "inherit", ...opts });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

function must(cmd, args, opts) {
  const status = run(cmd, args, opts);
  if (status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${status}`);
}

/** The Debian 13 root with Swift, made when missing (about a minute and 3.3 GB). */
export function ensureSwift() {
  // (usr/bin/swift is an absolute link, meaningful only inside the root.)
  if (existsSync(path.join(SWIFT_ROOT, "usr/libexec/swift/bin/swift-frontend"))) return;
  console.log(`native-sdks: making the Swift root at ${SWIFT_ROOT} (debootstrap trixie + swiftlang)…`);
  const started = Date.now();
  if (!existsSync("/usr/sbin/debootstrap")) aptInstall(["debootstrap"]);
  const partial = `${SWIFT_ROOT}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(path.dirname(SWIFT_ROOT), { recursive: true });
  must("debootstrap", ["--variant=minbase", "trixie", partial, "http://deb.debian.org/debian"], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  writeFileSync(path.join(partial, "etc/resolv.conf"), readFileSync("/etc/resolv.conf"));
  must(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      `mount -t proc proc "${partial}/proc" && chroot "${partial}" /bin/sh -c ` +
        `'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ${SWIFT_PACKAGES.join(" ")} && apt-get clean'`,
    ],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  rmSync(SWIFT_ROOT, { recursive: true, force: true });
  renameSync(partial, SWIFT_ROOT);
  console.log(`native-sdks: Swift root ready in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** JDK, Maven and the Debian packages the offline Maven build resolves from. */
export function ensureJava() {
  const missing = JAVA_PACKAGES.filter((p) => spawnSync("dpkg", ["-s", p], { stdio: "ignore" }).status !== 0);
  if (!existsSync("/usr/bin/javac")) missing.push("openjdk-17-jdk-headless");
  if (missing.length > 0) aptInstall(missing);
}

const liveEnv = (env) => Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith("HERALD_LIVE_")));

/**
 * `swift <args>` in sdks/ios inside the Swift root; the repository is mounted at its own
 * path there.
 */
export function runSwift(args, { env = process.env, onOutput } = {}) {
  ensureSwift();
  const inside = path.join(SWIFT_ROOT, root);
  mkdirSync(inside, { recursive: true });
  const vars = { ...SWIFT_ENV, ...liveEnv(env) };
  const envArgs = Object.entries(vars).map(([k, v]) => `${k}=${v}`);
  const q = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
  const script = [
    `mount -t proc proc ${q(`${SWIFT_ROOT}/proc`)}`,
    `mount --rbind /dev ${q(`${SWIFT_ROOT}/dev`)}`,
    `mount --bind ${q(root)} ${q(inside)}`,
    `exec chroot ${q(SWIFT_ROOT)} env -i ${envArgs.map(q).join(" ")} sh -c ${q(`cd ${q(path.join(root, "sdks/ios"))} && exec swift "$@"`)} swift ${args.map(q).join(" ")}`,
  ].join(" && ");
  return runAsync("unshare", ["--mount", "--propagation", "private", "sh", "-c", script], { onOutput });
}

/**
 * `mvn <args>` in sdks/android. Its settings (sdks/android/maven-settings.xml) mirror every
 * repository to Debian's file:///usr/share/maven-repo, so nothing is fetched from the
 * network; the local repository is the ignored sdks/android/.m2.
 */
export function runMaven(args, { env = process.env, onOutput } = {}) {
  ensureJava();
  const dir = path.join(root, "sdks/android");
  const settings = ["-s", path.join(dir, "maven-settings.xml"), `-Dmaven.repo.local=${path.join(dir, ".m2")}`];
  return runAsync("mvn", ["-B", ...settings, ...args], { cwd: dir, env, onOutput });
}

/**
 * Runs a command without blocking the event loop (a test's stack keeps reading its
 * processes' output meanwhile); resolves with the exit status and everything it printed.
 * `onOutput` sees each chunk (default: copied to this process's stdout).
 */
function runAsync(cmd, args, { cwd, env, onOutput = (chunk) => process.stdout.write(chunk) }) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const take = (chunk) => {
      output += chunk;
      onOutput(chunk);
    };
    child.stdout.setEncoding("utf8").on("data", take);
    child.stderr.setEncoding("utf8").on("data", take);
    child.on("error", reject);
    child.on("close", (code) => resolve({ status: code ?? 1, output }));
  });
}

/**
 * XCTest's closing count: the last "Executed N tests, with [S tests skipped and] F failures"
 * (the line of all suites); undefined when there is none.
 */
export function xctestCounts(output) {
  const lines = [...output.matchAll(/Executed (\d+) tests?, with (?:(\d+) tests? skipped and )?(\d+) failures?/g)];
  const last = lines.at(-1);
  if (!last) return undefined;
  const [run, skipped, failed] = [Number(last[1]), Number(last[2] ?? 0), Number(last[3])];
  return { passed: run - skipped - failed, failed, skipped };
}

/**
 * Surefire's counts summed over modules: each module's summary line ("Tests run: N,
 * Failures: F, Errors: E, Skipped: S" with nothing after it; the per-class lines go on with
 * "Time elapsed"); undefined when there is none.
 */
export function surefireCounts(output) {
  const lines = [
    ...output.matchAll(/^(?:\[\w+\] )?Tests run: (\d+), Failures: (\d+), Errors: (\d+), Skipped: (\d+)\s*$/gm),
  ];
  if (lines.length === 0) return undefined;
  const sum = { passed: 0, failed: 0, skipped: 0 };
  for (const [, run, failures, errors, skipped] of lines) {
    const failed = Number(failures) + Number(errors);
    sum.failed += failed;
    sum.skipped += Number(skipped);
    sum.passed += Number(run) - failed - Number(skipped);
  }
  return sum;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [what, ...rest] = process.argv.slice(2);
  try {
    if (what === "ensure") {
      ensureJava();
      ensureSwift();
    } else if (what === "swift") {
      process.exit((await runSwift(rest)).status);
    } else if (what === "mvn") {
      process.exit((await runMaven(rest)).status);
    } else {
      console.error("usage: native-sdks.mjs ensure | swift <args> | mvn <args>");
      process.exit(2);
    }
  } catch (err) {
    console.error(`native-sdks: ${err.message}`);
    process.exit(1);
  }
}
