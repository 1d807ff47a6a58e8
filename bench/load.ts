// A closed-loop HTTP load generator: `concurrency` workers each send their next request
// as soon as the last one answers, for `seconds`. Latency is measured per request.

export interface LoadResult {
  requests: number;
  errors: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export async function closedLoop(opts: {
  url: string;
  headers: Record<string, string>;
  body: (i: number) => unknown;
  concurrency: number;
  seconds: number;
  /** Status a successful request answers. */
  ok: number;
}): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const end = started + opts.seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const i = next++;
      const t0 = performance.now();
      try {
        const res = await fetch(opts.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...opts.headers },
          body: JSON.stringify(opts.body(i)),
        });
        await res.arrayBuffer();
        if (res.status === opts.ok) latencies.push(performance.now() - t0);
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}
