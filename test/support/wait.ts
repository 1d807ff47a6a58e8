import type { ChildProcess } from "node:child_process";

/** Polls `check` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Whether `url` answers 2xx (false while nothing listens). */
const answersOk = (url: string, init?: RequestInit): Promise<boolean> =>
  fetch(url, init).then(
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
