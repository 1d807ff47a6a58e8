import { ConfigError, createLogger, handleShutdown, readEnv } from "@herald/runtime";
import { configSpec, type Config } from "./config.js";
import { start } from "./server.js";

let config: Config;
try {
  config = readEnv(configSpec);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  // No logger yet: the level is part of the config. The message names variables, never values.
  process.stderr.write(`campaign: ${err.message}\n`);
  process.exit(1);
}

const log = createLogger("campaign", config.logLevel);
try {
  const app = await start(config, { log });
  handleShutdown(log, [app.close]);
  log.info({ port: app.port, adminPort: app.adminPort }, "campaign service listening");
} catch (err) {
  log.fatal({ err }, "campaign service failed to start");
  process.exit(1);
}
