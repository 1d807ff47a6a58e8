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
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<void> {
  if (!(await eventually(check, timeoutMs, everyMs))) throw new Error(`timed out waiting for ${what}`);
}

/** Whether `url` answers 2xx (false while nothing listens). */
const answersOk = (url: string): Promise<boolean> =>
  fetch(url).then(
    (r) => r.ok,
    () => false,
  );

/** Throws, with the end of its output, when a process a start waits for has exited already. */
export function assertRunning(child: ChildProcess, name: string, output: readonly string[] = []): void {
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}):\n${output.join("").slice(-2000)}`);
  }
}

/** Waits until `url` answers 2xx from the process `child` starts, failing at once if it exits. */
export async function untilServing(
  child: ChildProcess,
  name: string,
  url: string,
  opts: { timeoutMs: number; everyMs?: number; output?: readonly string[] },
): Promise<void> {
  await waitUntil(
    `${name} to serve ${url}`,
    async () => {
      assertRunning(child, name, opts.output);
      return answersOk(url);
    },
    opts.timeoutMs,
    opts.everyMs,
  );
}
