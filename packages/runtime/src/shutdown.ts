import type { Logger } from "pino";

export type Closer = () => Promise<void> | void;

/**
 * Runs the closers (in reverse order of registration) on SIGTERM/SIGINT, then exits.
 * A second signal, or the grace period running out, exits at once.
 */
export function handleShutdown(log: Logger, closers: Closer[], graceMs = 25_000): void {
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
