import { createLogger, handleShutdown } from "@herald/runtime";
import { loadConfig } from "./config.js";
import { start } from "./server.js";

const config = loadConfig();
const log = createLogger("sender-apns", config.logLevel);
const sender = await start(config, { log });
handleShutdown(log, [() => sender.close()]);
