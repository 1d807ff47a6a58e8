import { readEnv, runService } from "@herald/runtime/service";
import { configSpec } from "./config.js";
import { start } from "./server.js";

// The simulator is a dev and test tool, not a role of the `herald` command (nor of the image).
await runService({ name: "provider-sim", readConfig: (env) => readEnv(configSpec, env), start });
