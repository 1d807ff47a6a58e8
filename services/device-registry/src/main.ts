import { createLogger, handleShutdown, readEnv } from "@herald/runtime";
import { configSpec } from "./config.js";
import { start } from "./server.js";

const config = readEnv(configSpec);
const log = createLogger("device-registry", config.logLevel);
const app = await start(config, { log });
handleShutdown(log, [app.close]);
log.info({ port: app.port, adminPort: app.adminPort }, "device-registry listening");
