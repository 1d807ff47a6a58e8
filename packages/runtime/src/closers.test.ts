import { expect, it } from "vitest";
import { Closers } from "./closers.js";

it("closes last-added first, each step once", async () => {
  const ran: string[] = [];
  const closers = new Closers();
  closers.add(() => void ran.push("pool"));
  closers.add(async () => void ran.push("nats"));
  closers.add(() => void ran.push("rpc"));
  await closers.close();
  await closers.close();
  expect(ran).toEqual(["rpc", "nats", "pool"]);
});
