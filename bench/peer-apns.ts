import apn from "@parse/node-apn";
import { runPeer, slidingWindow } from "./peer-kit.mjs";

// The APNs peer of bench/senders.ts: @parse/node-apn's Provider (token auth, one HTTP/2
// session, its own JWT), pointed at the sink with its documented `address` and `port`
// options. One notification object, sent device by device with at most `concurrency` in
// flight (Provider.send with a whole array would put every device in flight at once).

interface ApnsPeerConfig {
  host: string;
  port: number;
  p8: string;
  keyId: string;
  teamId: string;
  topic: string;
  token: string;
  title: string;
  body: string;
  n: number;
  concurrency: number;
}

await runPeer<ApnsPeerConfig>(async (config) => {
  const provider = new apn.Provider({
    token: { key: config.p8, keyId: config.keyId, teamId: config.teamId },
    address: config.host,
    port: config.port,
    production: true,
  });
  const note = new apn.Notification();
  note.alert = { title: config.title, body: config.body };
  note.sound = "default";
  note.topic = config.topic;
  note.pushType = "alert";
  note.priority = 10;
  return async () => {
    const result = await slidingWindow(config.n, config.concurrency, async () => {
      const r = await provider.send(note, config.token);
      if (r.sent.length === 1) return true;
      const f = r.failed[0];
      return `${f?.status ?? ""} ${JSON.stringify(f?.response ?? f?.error?.message ?? "")}`;
    });
    await provider.shutdown();
    return result;
  };
});
