import type { ChildProcess } from "node:child_process";

/** Polls `check` every `everyMs` until it holds (true) or `timeoutMs` has passed (false). */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return true;
}

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<void> {
  return waitWhileRunning(what, check, { timeoutMs, everyMs });
}

/** Whether `url` answers 2xx (false while nothing listens). */
const answersOk = (url: string): Promise<boolean> =>
  fetch(url).then(
    (r) => r.ok,
    () => false,
  );

/** A process that a wait depends on: the wait fails at once if it exits, and a timeout quotes the end of its output. */
export interface Watched {
  child: ChildProcess;
  name: string;
  output?: readonly string[];
}

const tail = (output: readonly string[] = []): string => output.join("").slice(-3000);

/** Throws, with the end of its output, when a process a start waits for has exited already. */
export function assertRunning(child: ChildProcess, name: string, output: readonly string[] = []): void {
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}):\n${tail(output)}`);
  }
}

/**
 * Polls `check` until it holds, failing at once when `watched` has exited; after
 * `timeoutMs` throws naming `what`, with the end of the watched process's output.
 */
export async function waitWhileRunning(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; everyMs?: number; watched?: Watched },
): Promise<void> {
  const { watched } = opts;
  const held = await eventually(
    async () => {
      if (watched) assertRunning(watched.child, watched.name, watched.output);
      return check();
    },
    opts.timeoutMs,
    opts.everyMs,
  );
  if (!held) throw new Error(`timed out waiting for ${what}${watched ? `:\n${tail(watched.output)}` : ""}`);
}

/** Waits until `url` answers 2xx from the process `child` starts, failing at once if it exits. */
export function untilServing(
  child: ChildProcess,
  name: string,
  url: string,
  opts: { timeoutMs: number; everyMs?: number; output?: readonly string[] },
): Promise<void> {
  return waitWhileRunning(`${name} to serve ${url}`, () => answersOk(url), {
    timeoutMs: opts.timeoutMs,
    everyMs: opts.everyMs,
    watched: { child, name, output: opts.output },
  });
}
