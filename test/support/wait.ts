import type { ChildProcess } from "node:child_process";

export interface PollResult<T> {
  /** Whether `done` held before the deadline. */
  held: boolean;
  /** The last value read. */
  value: T;
}

/**
 * The one polling loop of the tests (every other wait is a wrapper over it): reads every
 * `everyMs` until `done(value)` holds or `timeoutMs` has passed, and answers the last value.
 */
export async function poll<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  everyMs = 100,
): Promise<PollResult<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return { held: true, value };
    if (Date.now() > deadline) return { held: false, value };
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Polls `check` every `everyMs` until it holds (true) or `timeoutMs` has passed (false). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  everyMs = 100,
): Promise<boolean> {
  return (await poll(check, (held) => held, timeoutMs, everyMs)).held;
}

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<void> {
  return waitWhileRunning(what, check, { timeoutMs, everyMs });
}

/**
 * Reads until `done(value)` holds and answers that value; after `timeoutMs` throws naming
 * `what` and the last value read (`show` renders it; JSON by default).
 */
export async function waitForValue<T>(
  what: string,
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  opts: { timeoutMs?: number; everyMs?: number; show?: (value: T) => string } = {},
): Promise<T> {
  const { held, value } = await poll(read, done, opts.timeoutMs ?? 60_000, opts.everyMs);
  if (held) return value;
  const show = opts.show ?? ((v: T) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x)));
  throw new Error(`timed out waiting for ${what}; last: ${show(value)?.slice(0, 2000)}`);
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
  check: () => boolean | Promise<boolean>,
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
