import pino from "pino";
import { describe, expect, it } from "vitest";
import { startWithClosers } from "./service-data.js";

const log = pino({ level: "silent" });

describe("startWithClosers", () => {
  it("answers what start built, whose close() closes what it opened, last first, once", async () => {
    const closed: string[] = [];
    const app = await startWithClosers(log, async (closers) => {
      closers.add(() => void closed.push("pool"));
      closers.add(async () => void closed.push("rpc"));
      return { port: 7 };
    });
    expect(app.port).toBe(7);
    await app.close();
    await app.close();
    expect(closed).toEqual(["rpc", "pool"]);
  });

  it("closes what a failed start had opened and rethrows its error", async () => {
    const closed: string[] = [];
    const failure = new Error("NATS unreachable");
    await expect(
      startWithClosers(log, async (closers) => {
        closers.add(() => void closed.push("pool"));
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(closed).toEqual(["pool"]);
  });
});
