import { JetStreamApiError } from "@nats-io/jetstream";
import { TimeoutError } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import {
  NATS_RECONNECT_BACKOFF,
  natsConnection,
  replicaPlan,
  retryJetStreamApi,
  transientJetStreamError,
} from "./nats.js";

describe("natsConnection", () => {
  it("gives the client every server of NATS_URL and reconnects forever, waiting for a first server", () => {
    const { options } = natsConnection(" nats://a:4222, nats://b:4222 ,nats://c:4222,", "test");
    expect(options.servers).toEqual(["nats://a:4222", "nats://b:4222", "nats://c:4222"]);
    expect(options.maxReconnectAttempts).toBe(-1);
    expect(options.waitOnFirstConnect).toBe(true);
  });

  it("backs off between dials up to its cap, and starts again from the first step once connected", () => {
    const { options, connected } = natsConnection("nats://a:4222", "test");
    const waits = Array.from({ length: 12 }, () => options.reconnectDelayHandler!());
    expect(waits[0]).toBeLessThanOrEqual(NATS_RECONNECT_BACKOFF.baseMs);
    expect(Math.max(...waits)).toBeLessThanOrEqual(NATS_RECONNECT_BACKOFF.capMs);
    expect(waits.at(-1)).toBeGreaterThanOrEqual(NATS_RECONNECT_BACKOFF.capMs / 2);
    connected();
    expect(options.reconnectDelayHandler!()).toBeLessThanOrEqual(NATS_RECONNECT_BACKOFF.baseMs);
  });
});

describe("replicaPlan", () => {
  const tags = (t: string[]) => ({ placement: { cluster: "", tags: t } });

  it("scales an R1 stream up to the configured replicas, after an update that keeps its replicas", () => {
    const plan = replicaPlan({ num_replicas: 1 }, { num_replicas: 3 });
    expect(plan.keep).toMatchObject({ num_replicas: 1 });
    expect(plan.change).toMatchObject({ num_replicas: 3 });
    expect(plan.from.replicas).toBe(1);
    expect(plan.to.replicas).toBe(3);
  });

  it("changes nothing when the stream already has the configured replicas and tags", () => {
    expect(replicaPlan({ num_replicas: 3, ...tags(["a", "b"]) }, { num_replicas: 3, ...tags(["b", "a"]) }).change).toBe(
      undefined,
    );
    // A stream created before the setting existed has num_replicas 0 or 1: one replica.
    expect(replicaPlan({ num_replicas: 0 }, { num_replicas: 1 }).change).toBeUndefined();
  });

  it("never scales down: a stream with more replicas than configured keeps them", () => {
    const plan = replicaPlan({ num_replicas: 3 }, { num_replicas: 1 });
    expect(plan.change).toBeUndefined();
    expect(plan.keep.num_replicas).toBe(3);
  });

  it("moves a stream whose placement tags changed, keeping its replicas when more", () => {
    const plan = replicaPlan({ num_replicas: 3 }, { num_replicas: 1, ...tags(["az:b"]) });
    expect(plan.change).toEqual({ num_replicas: 3, placement: { cluster: "", tags: ["az:b"] } });
  });
});

describe("retryJetStreamApi", () => {
  const unavailable = new JetStreamApiError({
    code: 503,
    err_code: 10008,
    description: "JetStream system temporarily unavailable",
  });
  const notFound = new JetStreamApiError({ code: 404, err_code: 10059, description: "stream not found" });

  it("tells transient errors (timeout, JetStream unavailable) from answers", () => {
    expect(transientJetStreamError(new TimeoutError())).toBe(true);
    expect(transientJetStreamError(unavailable)).toBe(true);
    expect(transientJetStreamError(notFound)).toBe(false);
    expect(transientJetStreamError(new Error("stream name already in use"))).toBe(false);
  });

  it("repeats a call that timed out until it answers, and passes other errors on at once", async () => {
    let calls = 0;
    const answer = await retryJetStreamApi(
      async () => {
        if (++calls < 3) throw new TimeoutError();
        return "created";
      },
      { what: "stream create" },
    );
    expect(answer).toBe("created");
    expect(calls).toBe(3);
    let failed = 0;
    await expect(
      retryJetStreamApi(
        async () => {
          failed++;
          throw notFound;
        },
        { what: "stream info" },
      ),
    ).rejects.toBe(notFound);
    expect(failed).toBe(1);
  });

  it("gives up after its patience", async () => {
    await expect(
      retryJetStreamApi(
        async () => {
          throw new TimeoutError();
        },
        { what: "stream info", patienceMs: 0 },
      ),
    ).rejects.toBeInstanceOf(TimeoutError);
  });
});
