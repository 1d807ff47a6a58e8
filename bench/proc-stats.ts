import { readFileSync } from "node:fs";

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

/** Samples the RSS of some processes every `everyMs` and keeps each one's peak. */
export function peakRss(pids: Record<string, number>, everyMs = 100): { stop(): Record<string, number> } {
  const peaks: Record<string, number> = Object.fromEntries(Object.keys(pids).map((k) => [k, 0]));
  const sample = () => {
    for (const [name, pid] of Object.entries(pids)) {
      try {
        peaks[name] = Math.max(peaks[name]!, rssMb(pid));
      } catch {}
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}
