import { describe, expect, it } from "vitest";
import { commonEnv, readEnv } from "./env.js";
import { configuredStreams } from "./service-data.js";
import {
  deliveryStreamConfig,
  eventsStreamConfig,
  outcomesStreamConfig,
  streamNames,
  webhooksStreamConfig,
} from "./streams.js";

const EVERY_STREAM = [eventsStreamConfig, deliveryStreamConfig, outcomesStreamConfig, webhooksStreamConfig];

describe("stream replication", () => {
  it("gives every stream one replica and no placement by default", () => {
    for (const config of EVERY_STREAM.map((f) => f(streamNames("ns")))) {
      expect(config.num_replicas, config.name).toBe(1);
      expect(config.placement, config.name).toBeUndefined();
    }
  });

  it("applies NATS_STREAM_REPLICAS and NATS_STREAM_PLACEMENT_TAGS to every stream", () => {
    const env = readEnv(commonEnv, { NATS_STREAM_REPLICAS: "3", NATS_STREAM_PLACEMENT_TAGS: " az:a, ssd ,," });
    const names = configuredStreams(env);
    expect(names.replication).toEqual({ replicas: 3, placementTags: ["az:a", "ssd"] });
    for (const config of EVERY_STREAM.map((f) => f(names))) {
      expect(config.num_replicas, config.name).toBe(3);
      expect(config.placement?.tags, config.name).toEqual(["az:a", "ssd"]);
    }
  });

  it("reads one replica and no tags when the variables are unset, and refuses what JetStream cannot hold", () => {
    expect(readEnv(commonEnv, {})).toMatchObject({ natsStreamReplicas: 1, natsPlacementTags: [] });
    expect(() => readEnv(commonEnv, { NATS_STREAM_REPLICAS: "0" })).toThrow(
      /NATS_STREAM_REPLICAS: must be between 1 and 5/,
    );
    expect(() => readEnv(commonEnv, { NATS_STREAM_REPLICAS: "6" })).toThrow(/NATS_STREAM_REPLICAS/);
    expect(() => readEnv(commonEnv, { NATS_STREAM_REPLICAS: "three" })).toThrow(/must be an integer/);
  });

  it("keeps one replica for a configuration built without the settings (tests, older callers)", () => {
    expect(configuredStreams({ natsNamespace: "x" }).replication).toEqual({ replicas: 1, placementTags: [] });
  });
});
