import type { Logger } from "pino";

export type Closer = () => Promise<void> | void;

/**
 * Runs the closers (in reverse order of registration) on SIGTERM/SIGINT, then exits.
 * A second signal, or the grace period running out, exits at once.
 */
/** How long a process may take to stop after SIGTERM before it exits anyway. */
export const DEFAULT_GRACE_MS = 25_000;

export function handleShutdown(log: Logger, closers: Closer[], graceMs = DEFAULT_GRACE_MS): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, "shutting down");
    const timer = setTimeout(() => {
      log.error("graceful shutdown timed out");
      process.exit(1);
    }, graceMs);
    timer.unref();
    let code = 0;
    for (const close of [...closers].reverse()) {
      try {
        await close();
      } catch (err) {
        code = 1;
        log.error({ err }, "error during shutdown");
      }
    }
    log.info("stopped");
    process.exit(code);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}
