/**
 * Maps each item of `source` through `work`, keeping up to `depth` items started ahead of
 * the consumer: while one result is being used (written to a socket, say), the next
 * items are already being read and worked on, so a chain of round trips (read a chunk,
 * look something up, write it) runs as a pipeline instead of one step after another.
 * Results come in the source's order; the source is read one item at a time, in order.
 * An error of the source or of `work` is thrown when its item's turn comes. When the
 * consumer stops early, the source is returned and what was started ahead is dropped.
 * Memory: at most `depth` results (and the one in use) at a time.
 *
 * Written here rather than taken from a library: the small stream libraries that map
 * with concurrency (p-map's pMapIterable, it-parallel) either do not keep order with
 * bounded look-ahead or bring a dependency for these few lines.
 */
export async function* readAhead<T, U>(
  source: AsyncIterable<T>,
  work: (item: T) => Promise<U>,
  depth: number,
): AsyncGenerator<U> {
  if (!Number.isInteger(depth) || depth < 1)
    throw new RangeError(`readAhead depth must be a positive integer, not ${depth}`);
  const it = source[Symbol.asyncIterator]();
  // Each read waits for the previous one: the source never sees two next() calls at once.
  let lastRead: Promise<IteratorResult<T>> | undefined;
  const start = (): Promise<IteratorResult<U, undefined>> => {
    const read: Promise<IteratorResult<T>> = lastRead
      ? lastRead.then((previous) => (previous.done ? previous : it.next()))
      : it.next();
    lastRead = read;
    const result = read.then(
      async (r): Promise<IteratorResult<U, undefined>> =>
        r.done ? { done: true, value: undefined } : { done: false, value: await work(r.value) },
    );
    // Surfaced in order by the await below; this only keeps a failure that the consumer
    // never reaches (it stopped first) from being an unhandled rejection.
    result.catch(() => {});
    return result;
  };
  const ahead: Promise<IteratorResult<U, undefined>>[] = [];
  let finished = false;
  try {
    for (let i = 0; i < depth; i++) ahead.push(start());
    for (;;) {
      const next = await ahead.shift()!;
      if (next.done) {
        finished = true;
        return;
      }
      ahead.push(start());
      yield next.value;
    }
  } finally {
    // Not awaited: a read still in flight would hold the consumer's return until it ends.
    if (!finished) it.return?.().catch(() => {});
  }
}
