import { readEnv, type ServiceRole } from "@herald/runtime";
import { configSpec, type Config } from "./config.js";
import { start } from "./server.js";

/** The webhooks role (endpoints API and dispatcher), as the `herald` command starts it. */
export const serviceRole: ServiceRole<Config> = {
  name: "webhooks",
  readConfig: (env) => readEnv(configSpec, env),
  start,
};
