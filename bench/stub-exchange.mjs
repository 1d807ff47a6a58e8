// Preloaded (`--import`) into a built sender for the senders benchmark's "HTTP/2 exchange
// stubbed" side (bench/senders.ts): every request of the sender's HTTP/2 pool answers at
// once with an empty 200, so the side measures what the sender spends besides the HTTP/2
// exchange itself (JetStream, protobuf, batching, limiter, provider code, metrics,
// outcomes). Benchmark only: nothing in the product loads it.
import path from "node:path";
import { pathToFileURL } from "node:url";

// The stubbed sender runs from the repository's tsc output, not the release's bundle, with
// the repository as its working directory (bench/herald-stack.ts, `unbundled`): the same
// URL as the one `@herald/sender` resolves to, so the sender gets this patched class.
const { Http2Pool } = await import(pathToFileURL(path.resolve("packages/sender/dist/http2-pool.js")).href);
const answer = Object.freeze({ status: 200, headers: Object.freeze({}), body: "", retire() {} });
Http2Pool.prototype.request = () => Promise.resolve(answer);
