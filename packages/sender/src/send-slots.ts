import { performance } from "node:perf_hooks";
import type { SendCapacity } from "./http2-pool.js";
import { Limiter } from "./limiter.js";

/**
 * Sends a replica lets wait for a stream beyond what its connections carry: enough that the
 * pool sees every open connection full and opens another (up to its maxConnections), and
 * that a new origin or group gets sends before its first connection is open. Also the
 * slots a replica starts with: SENDER_MAX_IN_FLIGHT's default before slots followed the
 * connections.
 */
export const QUEUED_SENDS = 256;

/** Event-loop utilization below which more sends in flight would be sent sooner (when all slots are taken). */
export const IDLE_LOOP = 0.8;
/** Event-loop utilization at or above which sends in flight only wait in the loop: fewer will do. */
export const BUSY_LOOP = 0.95;

const TICK_MS = 200;

/**
 * The slots' next target: twice as many while every slot was taken and the event loop had
 * time to spare (the provider's round trip, not this process, held the sends back), never
 * above `ceiling`; a fifth fewer, down to QUEUED_SENDS, while the loop is busy: sends in
 * flight beyond what the process can work on only wait in it, costing memory and garbage
 * collection (a provider that answers at once, or more load than one core takes).
 */
export function nextTarget(target: number, ceiling: number, saturated: boolean, utilization: number): number {
  let next = target;
  if (saturated && utilization < IDLE_LOOP) next = target * 2;
  else if (utilization >= BUSY_LOOP) next = Math.max(QUEUED_SENDS, Math.floor(target * 0.8));
  return Math.max(1, Math.min(ceiling, next));
}

/**
 * The send slots of a sender replica (BatchProcessor's sendLimiter), sized by its provider
 * connections: at most their streams (the peers' SETTINGS_MAX_CONCURRENT_STREAMS × open
 * connections, `capacity`) plus QUEUED_SENDS waiting in the pool, and never more than
 * `maxInFlight` (SENDER_MAX_IN_FLIGHT, the memory cap). Within that ceiling it starts at
 * QUEUED_SENDS and doubles every 200 ms while all slots are taken and the event loop has
 * time, and shrinks while the loop is busy (nextTarget): a provider 100 ms away gets as
 * many sends in flight as the connections carry, one that answers at once no more than the
 * process can work on. A
 * lowered ceiling (a lowered SETTINGS limit, a connection leaving) holds at once: no new
 * send until the holders are below it. Whatever the provider's latency, a replica holds at
 * most the ceiling's sends (and the devices of SENDER_CONCURRENT_BATCHES batches).
 */
export class SendSlots extends Limiter {
  private target: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly maxInFlight: number,
    private readonly capacity: SendCapacity,
    /** Event-loop utilization since the previous call (tests script it). */
    private readonly utilization: () => number = loopUtilization(),
    tickMs = TICK_MS,
  ) {
    super(Math.min(maxInFlight, QUEUED_SENDS));
    this.target = this.size;
    capacity.watchCapacity(() => this.follow());
    this.timer = setInterval(() => this.tick(), tickMs);
    this.timer.unref();
  }

  /** The most the slots may grow to now: the connections' streams plus the queue margin, within the cap. */
  get ceiling(): number {
    return Math.min(this.maxInFlight, this.capacity.streamCapacity() + QUEUED_SENDS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** @internal Every 200 ms (tests call it): the next target from the last interval's saturation and loop. */
  tick(): void {
    const saturated = this.takeSaturated();
    this.target = nextTarget(this.target, this.ceiling, saturated, this.utilization());
    this.follow();
  }

  private follow(): void {
    const size = Math.max(1, Math.min(this.target, this.ceiling));
    if (size !== this.size) this.resize(size);
  }
}

/** Event-loop utilization (0 to 1) over the time since the previous call. */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, last);
    last = now;
    return delta.utilization;
  };
}

/**
 * A sender's send slots: SendSlots over its provider connections' `capacity`, or a fixed
 * `maxInFlight` for a provider without an HTTP/2 pool.
 */
export function sendSlots(maxInFlight: number, capacity?: SendCapacity): Limiter & { stop?(): void } {
  return capacity ? new SendSlots(maxInFlight, capacity) : new Limiter(maxInFlight);
}
