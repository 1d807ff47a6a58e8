import { ConfigError } from "./env.js";
import { createLogger, type Logger } from "./logger.js";
import { DEFAULT_GRACE_MS, handleShutdown } from "./shutdown.js";

/** What `start` returns: the ports it listens on (if any) and how to stop it. */
export interface RunningService {
  port?: number;
  adminPort?: number;
  close(): Promise<void>;
}

/**
 * One process role (gateway, campaign, sender-apns, …): how it reads its configuration
 * and how it starts. The `herald` command and dev mode run roles through `runService`.
 */
export interface ServiceRole<C extends { logLevel: string }> {
  name: string;
  readConfig(env: NodeJS.ProcessEnv): C;
  start(config: C, deps: { log: Logger }): Promise<RunningService>;
}

/**
 * The one start-up path of every Herald process: read the configuration (a bad or
 * missing variable ends the process with one line naming every bad variable, never a
 * value), start the role, and stop it gracefully on SIGTERM/SIGINT.
 */
export async function runService<C extends { logLevel: string }>(
  serviceRole: ServiceRole<C>,
  opts: {
    env?: NodeJS.ProcessEnv /** Runs after the role has stopped (e.g. flushing spans). */;
    onStop?: () => Promise<void>;
  } = {},
): Promise<void> {
  const env = opts.env ?? process.env;
  let config: C;
  try {
    config = serviceRole.readConfig(env);
  } catch (err) {
    // No logger yet: the level is part of the config. ConfigError names variables only.
    const message = err instanceof ConfigError ? err.message : `invalid configuration: ${(err as Error).message}`;
    process.stderr.write(`${serviceRole.name}: ${message}\n`);
    process.exit(1);
  }
  const log = createLogger(serviceRole.name, config.logLevel);
  try {
    const running = await serviceRole.start(config, { log });
    // Closers run in reverse: the role stops first, then onStop. A role that drains work
    // on SIGTERM (the senders' SENDER_DRAIN_MS) gets its drain plus 5 s before the hard exit.
    const drainMs = (config as { drainMs?: unknown }).drainMs;
    const graceMs = Math.max(DEFAULT_GRACE_MS, typeof drainMs === "number" ? drainMs + 5_000 : 0);
    handleShutdown(log, [...(opts.onStop ? [opts.onStop] : []), () => running.close()], graceMs);
    log.info({ port: running.port, adminPort: running.adminPort }, `${serviceRole.name} started`);
  } catch (err) {
    log.fatal({ err }, `${serviceRole.name} failed to start`);
    process.exit(1);
  }
}
