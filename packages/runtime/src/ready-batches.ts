/**
 * Groups an async stream into arrays of what has already arrived, up to `max` each: a
 * burst becomes a few large arrays, and a lone item is not held back waiting for more.
 * (Counting on the NATS iterator's getPending() instead does not work: it stays above
 * zero after the client's internal status callbacks pass through the queue.)
 */
export async function* readyBatches<T>(source: AsyncIterable<T>, max: number): AsyncGenerator<T[]> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  for (;;) {
    const first = await next;
    if (first.done) return;
    const batch = [first.value];
    next = it.next();
    while (batch.length < max) {
      // Items already queued settle within microtasks; setImmediate fires only after them.
      const ready = await Promise.race([
        next,
        new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
      ]);
      if (ready === undefined) break;
      if (ready.done) {
        yield batch;
        return;
      }
      batch.push(ready.value);
      next = it.next();
    }
    yield batch;
  }
}
