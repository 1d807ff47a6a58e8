import { execFileSync } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

// The one way the project's scripts install what they need from Debian's packages (the
// infrastructure, the chart renderer's Go sources, the benchmark's HTTP/2 sink): apt-get,
// through sudo when not root, non-interactive, `apt-get update` once per process.

/** The path of an executable on PATH (or in the sbin folders a non-root PATH may lack). */
export function which(bin, extraDirs = ["/usr/sbin", "/usr/bin"]) {
  for (const dir of [...(process.env.PATH ?? "").split(path.delimiter), ...extraDirs]) {
    const file = path.join(dir || ".", bin);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {}
  }
  return undefined;
}

let updated = false;

/** Installs Debian packages with apt-get; throws with apt-get's own message when it fails. */
export function aptInstall(packages) {
  if (packages.length === 0) return;
  // sudo resets the environment, hence the assignment as its argument.
  const [cmd, ...pre] =
    process.getuid?.() !== 0 && which("sudo") ? ["sudo", "DEBIAN_FRONTEND=noninteractive", "apt-get"] : ["apt-get"];
  const run = (args) =>
    execFileSync(cmd, [...pre, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  try {
    if (!updated) {
      run(["update", "-qq"]);
      updated = true;
    }
    run(["install", "-y", "-qq", ...packages]);
  } catch (err) {
    const stderr = String(err.stderr ?? "").trim();
    throw new Error(`apt-get install ${packages.join(" ")} failed: ${stderr || err.message}`);
  }
}
