#!/usr/bin/env node
// Only the telemetry module is imported statically: it must start before the role's
// modules (and the PostgreSQL, Redis and HTTP libraries they load) are imported.
import { startTelemetry } from "@herald/runtime/telemetry";
import { isRoleName, ROLE_NAMES, ROLES } from "./roles.js";

// `herald <role>`: one entry for every process, so that one image (and one chart
// template) runs any of them, chosen by the container's arguments.
const usage = `usage: herald <role>\nroles: ${ROLE_NAMES.join(", ")}`;
const [name, ...rest] = process.argv.slice(2);

if (name === "--help" || name === "-h") {
  process.stdout.write(`${usage}\n`);
} else if (name === undefined || !isRoleName(name) || rest.length > 0) {
  process.stderr.write(
    `herald: ${name === undefined ? "no role given" : `unknown role "${name.slice(0, 40)}"`}\n${usage}\n`,
  );
  process.exit(2);
} else {
  const telemetry = await startTelemetry(name);
  const { start } = await ROLES[name]();
  await start({ onStop: telemetry.shutdown });
}
