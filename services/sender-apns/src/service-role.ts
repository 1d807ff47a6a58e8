import type { ServiceRole } from "@herald/runtime";
import { loadConfig, type Config } from "./config.js";
import { start } from "./server.js";

/** The sender-apns role, as the `herald` command starts it. */
export const serviceRole: ServiceRole<Config> = {
  name: "sender-apns",
  readConfig: loadConfig,
  start,
};
