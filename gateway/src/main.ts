import { ConfigError, createLogger, handleShutdown, readEnv } from "@herald/runtime";
import { configSpec, type Config } from "./config.js";
import { start } from "./server.js";

let config: Config;
try {
  config = readEnv(configSpec);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  // No logger yet: the level is part of the config. The message names variables, never values.
  process.stderr.write(`gateway: ${err.message}\n`);
  process.exit(1);
}

const log = createLogger("gateway", config.logLevel);
try {
  const gateway = await start(config, { log });
  handleShutdown(log, [gateway.close]);
  log.info({ port: gateway.port }, "gateway listening");
} catch (err) {
  log.fatal({ err }, "gateway failed to start");
  process.exit(1);
}
