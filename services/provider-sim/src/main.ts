import { ConfigError, createLogger, handleShutdown, readEnv } from "@herald/runtime";
import { configSpec, type Config } from "./config.js";
import { start } from "./server.js";

let config: Config;
try {
  config = readEnv(configSpec);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  // No logger yet: the level is part of the config. The message names variables, never values.
  process.stderr.write(`provider-sim: ${err.message}\n`);
  process.exit(1);
}

const log = createLogger("provider-sim", config.logLevel);
try {
  const sim = await start(config, { log });
  handleShutdown(log, [sim.close]);
  log.info({ port: sim.port, adminPort: sim.adminPort }, "provider simulator listening");
} catch (err) {
  log.fatal({ err }, "provider simulator failed to start");
  process.exit(1);
}
