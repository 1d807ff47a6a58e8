import type { ServiceRole } from "@herald/runtime";
import { loadConfig, type Config } from "./config.js";
import { start } from "./server.js";

/** The sender-fcm role, as the `herald` command starts it. */
export const serviceRole: ServiceRole<Config> = {
  name: "sender-fcm",
  readConfig: loadConfig,
  start,
};
