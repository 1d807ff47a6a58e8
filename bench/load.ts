import autocannon from "autocannon";

// A closed-loop HTTP load from autocannon: `concurrency` connections, each sending its next
// request as soon as the last one answered, for `seconds`, every request with its own body.
// autocannon's HTTP/1.1 client is far leaner than fetch, so on two cores the load
// generator takes less of the CPU that the measured side needs.

export interface LoadResult {
  /** Requests that answered with the expected status. */
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
  let next = 0;
  let expected = 0;
  let other = 0;
  const result = await autocannon({
    url: opts.url,
    method: "POST",
    connections: opts.concurrency,
    duration: opts.seconds,
    headers: { "content-type": "application/json", ...opts.headers },
    requests: [
      {
        setupRequest: (req) => ({ ...req, body: JSON.stringify(opts.body(next++)) }),
        onResponse: (status) => {
          if (status === opts.ok) expected++;
          else other++;
        },
      },
    ],
  });
  return {
    requests: expected,
    errors: other + result.errors + result.timeouts,
    perSecond: expected / opts.seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
}
