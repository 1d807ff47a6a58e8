import { readdirSync, readFileSync } from "node:fs";

// CPU time and memory of a process from /proc (Linux): what `time` and `ps` would say,
// read without disturbing it.
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Resident set size now, in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

/**
 * Proportional set size now, in MB: the resident pages, each page that n processes share
 * counted 1/n. Processes of one Node binary share its code (some 50 MB each holds
 * resident), which RSS counts in every one of them. Reading it walks the process's page
 * tables (some 0.3 ms), so only the memory figures sample it.
 */
export function pssMb(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  return Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0) / 1024;
}

/**
 * Samples the RSS of some processes every `everyMs`: each one's peak, and the peak of
 * their sum at one sample (`together`: what the group held at its worst moment; the sum
 * of the single peaks, reached at different moments, is at least as large). With `pss`,
 * also the peak of their PSS summed at one sample (`togetherPss`, NaN without).
 */
export function peakRss(
  pids: Record<string, number>,
  everyMs = 100,
  opts: { pss?: boolean } = {},
): { stop(): Record<string, number>; together(): number; togetherPss(): number } {
  const peaks: Record<string, number> = Object.fromEntries(Object.keys(pids).map((k) => [k, 0]));
  let together = 0;
  let togetherPss = opts.pss ? 0 : Number.NaN;
  const sample = () => {
    let sum = 0;
    let pssSum = 0;
    for (const [name, pid] of Object.entries(pids)) {
      try {
        const now = rssMb(pid);
        peaks[name] = Math.max(peaks[name]!, now);
        sum += now;
        if (opts.pss) pssSum += pssMb(pid);
      } catch {}
    }
    together = Math.max(together, sum);
    if (opts.pss) togetherPss = Math.max(togetherPss, pssSum);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
    together: () => together,
    togetherPss: () => togetherPss,
  };
}

/** Pids of the processes whose command name (/proc/<pid>/comm) is one of `names`. */
export function pidsNamed(names: readonly string[]): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (names.includes(readFileSync(`/proc/${entry}/comm`, "utf8").trim())) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}

/**
 * CPU seconds a group of processes found by name spends from now until stop(): the
 * shared servers (NATS, PostgreSQL with a backend per connection, Redis). A process
 * that starts meanwhile counts whole; one that ends meanwhile is lost (pools keep their
 * connections, so backends live through a run).
 */
export function cpuOfNamed(names: readonly string[]): { stop(): number } {
  const before = new Map<number, number>();
  for (const pid of pidsNamed(names)) {
    try {
      before.set(pid, cpuSeconds(pid));
    } catch {}
  }
  return {
    stop() {
      let total = 0;
      for (const pid of pidsNamed(names)) {
        try {
          total += cpuSeconds(pid) - (before.get(pid) ?? 0);
        } catch {}
      }
      return total;
    },
  };
}

/** The machine's shared servers Herald uses. */
export const INFRA_PROCESSES = ["nats-server", "postgres", "redis-server"] as const;
