import { readEnv, type ServiceRole } from "@herald/runtime";
import { configSpec, type Config } from "./config.js";
import { start } from "./server.js";

/** The campaign role, as the `herald` command starts it. */
export const serviceRole: ServiceRole<Config> = {
  name: "campaign",
  readConfig: (env) => readEnv(configSpec, env),
  start,
};
