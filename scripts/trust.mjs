// Trust for the provider simulator's CA: dev mode and the tests hand every process a CA
// bundle made of the CA file the user already trusts (NODE_EXTRA_CA_CERTS, kept, never
// replaced) plus the simulator's CA. TLS verification is never turned off.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SOURCE_NODE_ARGS } from "./processes.mjs";

export function ensureSimulatorCa(root) {
  const out = execFileSync(process.execPath, [...SOURCE_NODE_ARGS, "services/provider-sim/src/ca-cli.ts"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return out.trim();
}

/** Writes .herald/ca-bundle.pem and returns its path. */
export function caBundle(root, simCaPath, userCaFile = process.env.NODE_EXTRA_CA_CERTS) {
  const parts = [];
  if (
    userCaFile &&
    existsSync(userCaFile) &&
    path.resolve(userCaFile) !== path.resolve(root, ".herald/ca-bundle.pem")
  ) {
    parts.push(readFileSync(userCaFile, "utf8").trim());
  }
  parts.push(readFileSync(simCaPath, "utf8").trim());
  mkdirSync(path.join(root, ".herald"), { recursive: true });
  const bundle = path.join(root, ".herald/ca-bundle.pem");
  writeFileSync(bundle, `${parts.join("\n")}\n`);
  return bundle;
}
