import { describe, expect, it } from "vitest";
import { checkEndpointUrl, checkPushEndpoint, classifyAddress, type Resolver } from "./endpoint-guard.js";

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.254", "private"],
    ["192.168.1.10", "private"],
    ["169.254.169.254", "link-local"],
    ["169.254.0.1", "link-local"],
    ["100.64.0.1", "shared"],
    ["100.127.255.255", "shared"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "reserved"],
    ["224.0.0.251", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:10.1.2.3", "private"],
    ["64:ff9b::10.0.0.1", "private"],
    ["2002:c0a8:0101::1", "private"],
    ["2001:db8::1", "reserved"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "172.15.255.255",
    "172.32.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "142.250.185.78",
    "2001:4860:4860::8888",
    "2a00:1450:4001:80b::200a",
    "::ffff:8.8.8.8",
  ])("%s is public", (address) => {
    expect(classifyAddress(address)).toBe("public");
  });

  it("treats anything unparsable as reserved", () => {
    expect(classifyAddress("example.com")).toBe("reserved");
  });
});

describe("checkEndpointUrl", () => {
  const strict = { allowPrivate: false };

  it("requires https unless private addresses are allowed", () => {
    expect(checkEndpointUrl("http://push.example.com/x", strict)).toEqual({
      ok: false,
      reason: "must be an https URL",
    });
    expect(checkEndpointUrl("http://push.example.com/x", { allowPrivate: true })).toMatchObject({ ok: true });
    expect(checkEndpointUrl("ftp://push.example.com/x", { allowPrivate: true })).toMatchObject({ ok: false });
    expect(checkEndpointUrl("not a url", strict)).toEqual({ ok: false, reason: "not a valid URL" });
  });

  it("checks a URL already parsed as it checks its text", () => {
    expect(checkEndpointUrl(new URL("http://push.example.com/x"), strict)).toMatchObject({ ok: false });
    expect(checkEndpointUrl(new URL("https://PUSH.example.com/x"), strict)).toEqual({
      ok: true,
      host: "push.example.com",
    });
  });

  it("refuses credentials in the URL", () => {
    expect(checkEndpointUrl("https://user:pw@push.example.com/x", strict)).toMatchObject({ ok: false });
  });

  it("applies the host allow-list, with suffix entries", () => {
    const policy = { allowPrivate: false, allowedHosts: ["fcm.googleapis.com", ".notify.windows.com"] };
    expect(checkEndpointUrl("https://FCM.googleapis.com/fcm/send/a", policy)).toEqual({
      ok: true,
      host: "fcm.googleapis.com",
    });
    expect(checkEndpointUrl("https://wns2-db5p.notify.windows.com/w/?token=a", policy)).toMatchObject({ ok: true });
    expect(checkEndpointUrl("https://notify.windows.com/", policy)).toMatchObject({ ok: false });
    expect(checkEndpointUrl("https://evil.example/fcm.googleapis.com", policy)).toMatchObject({ ok: false });
  });

  it("normalises numeric host spellings before they are checked", () => {
    expect(checkEndpointUrl("https://0x7f.1/x", strict)).toEqual({ ok: true, host: "127.0.0.1" });
    expect(checkEndpointUrl("https://[::1]/x", strict)).toEqual({ ok: true, host: "::1" });
  });
});

describe("checkPushEndpoint", () => {
  const resolveTo =
    (...addresses: string[]): Resolver =>
    async () =>
      addresses;
  const failing: Resolver = async () => {
    throw new Error("ENOTFOUND");
  };

  it("accepts a host that resolves only to public addresses", async () => {
    const result = await checkPushEndpoint(
      "https://push.example.com/x",
      { allowPrivate: false },
      resolveTo("93.184.216.34"),
    );
    expect(result).toEqual({ ok: true, addresses: ["93.184.216.34"] });
  });

  it("refuses a host with any private address among its records", async () => {
    const result = await checkPushEndpoint(
      "https://push.example.com/x",
      { allowPrivate: false },
      resolveTo("93.184.216.34", "10.0.0.5"),
    );
    expect(result).toEqual({ ok: false, reason: "host resolves to a private address" });
  });

  it("checks IP literals without DNS", async () => {
    expect(await checkPushEndpoint("https://169.254.169.254/latest", { allowPrivate: false }, failing)).toEqual({
      ok: false,
      reason: "host resolves to a link-local address",
    });
    expect(await checkPushEndpoint("https://[::ffff:127.0.0.1]/", { allowPrivate: false }, failing)).toMatchObject({
      ok: false,
    });
    expect(await checkPushEndpoint("https://8.8.8.8/", { allowPrivate: false }, failing)).toMatchObject({ ok: true });
  });

  it("refuses a host that does not resolve", async () => {
    expect(await checkPushEndpoint("https://nowhere.invalid/", { allowPrivate: false }, failing)).toEqual({
      ok: false,
      reason: "host does not resolve",
    });
  });

  it("permits private addresses and http when allowPrivate is set", async () => {
    expect(await checkPushEndpoint("http://127.0.0.1:4443/push", { allowPrivate: true }, failing)).toMatchObject({
      ok: true,
    });
    expect(await checkPushEndpoint("http://127.0.0.1:4443/push", { allowPrivate: false }, failing)).toMatchObject({
      ok: false,
    });
  });
});
