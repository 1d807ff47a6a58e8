import { describe, expect, it } from "vitest";
import { guardedLookup } from "./http-sender.js";

const lookupWith = (addresses: string[], allowPrivate: boolean, all: boolean) =>
  new Promise<{ err: NodeJS.ErrnoException | null; result: unknown }>((resolve) =>
    guardedLookup(async () => addresses, allowPrivate)("hooks.example.test", { all }, (err, result) =>
      resolve({ err, result }),
    ),
  );

describe("guardedLookup", () => {
  it("refuses names that resolve only to non-public addresses", async () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "fe80::1", "::ffff:192.168.0.1"]) {
      const { err } = await lookupWith([a], false, true);
      expect(err?.message, a).toMatch(/non-public/);
    }
  });

  it("connects to the public addresses only, in both callback forms", async () => {
    const all = await lookupWith(["127.0.0.1", "93.184.216.34"], false, true);
    expect(all.result).toEqual([{ address: "93.184.216.34", family: 4 }]);
    const one = await lookupWith(["93.184.216.34"], false, false);
    expect(one.err).toBeNull();
    expect(one.result).toBe("93.184.216.34");
  });

  it("lets private addresses through when allowed (dev mode, tests)", async () => {
    const { err, result } = await lookupWith(["127.0.0.1"], true, true);
    expect(err).toBeNull();
    expect(result).toEqual([{ address: "127.0.0.1", family: 4 }]);
  });
});
