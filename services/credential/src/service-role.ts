import { readEnv, type ServiceRole } from "@herald/runtime";
import { configSpec, type Config } from "./config.js";
import { start } from "./server.js";

/** The credential role, as the `herald` command starts it. */
export const serviceRole: ServiceRole<Config> = {
  name: "credential",
  readConfig: (env) => readEnv(configSpec, env),
  start,
};
