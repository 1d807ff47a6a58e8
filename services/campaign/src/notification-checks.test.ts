import { create } from "@bufbuild/protobuf";
import { NotificationOptionsSchema } from "@herald/proto/delivery";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { notificationOptions, requireDeliverable } from "./notification-checks.js";

const options = (init: Parameters<typeof create<typeof NotificationOptionsSchema>>[1]) =>
  create(NotificationOptionsSchema, init);

function codeOf(fn: () => unknown): Code | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof ConnectError ? err.code : undefined;
  }
  return undefined;
}

describe("notificationOptions", () => {
  it("keeps what is set and reads an empty message as none", () => {
    expect(notificationOptions(undefined)).toBeUndefined();
    expect(notificationOptions(options({}))).toBeUndefined();
    expect(
      notificationOptions(
        options({ sound: "default", badge: 0, threadId: "t", webActions: [{ action: "a", title: "A" }] }),
      ),
    ).toEqual({ sound: "default", badge: 0, threadId: "t", webActions: [{ action: "a", title: "A" }] });
  });

  it("refuses malformed options as INVALID_ARGUMENT", () => {
    for (const init of [
      { badge: 1, badgeIncrement: 1 },
      { badgeIncrement: 0 },
      { badge: 100_000 },
      { sound: "a/b" },
      { threadId: "" },
      { webIconUrl: "http://x.test/i.png" },
      { webBadgeUrl: "nope" },
      { webActions: [1, 2, 3].map((n) => ({ action: `a${n}`, title: "A" })) },
      {
        webActions: [
          { action: "a", title: "A" },
          { action: "a", title: "B" },
        ],
      },
      { webActions: [{ action: "a", title: "" }] },
      { androidChannelId: "a b" },
    ]) {
      expect(
        codeOf(() => notificationOptions(options(init))),
        JSON.stringify(init),
      ).toBe(Code.InvalidArgument);
    }
  });
});

describe("requireDeliverable", () => {
  it("refuses a silent push with anything visible as FAILED_PRECONDITION", () => {
    expect(codeOf(() => requireDeliverable({ contentAvailable: true }, undefined))).toBeUndefined();
    expect(codeOf(() => requireDeliverable({ sound: "x" }, "https://x.test/i.png"))).toBeUndefined();
    expect(codeOf(() => requireDeliverable({ contentAvailable: true, badge: 0 }, undefined))).toBe(
      Code.FailedPrecondition,
    );
    expect(codeOf(() => requireDeliverable({ contentAvailable: true }, "https://x.test/i.png"))).toBe(
      Code.FailedPrecondition,
    );
  });
});
