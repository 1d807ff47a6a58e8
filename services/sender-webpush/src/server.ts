import type { Logger } from "@herald/runtime";
import { startSender, type RunningSender } from "@herald/sender";
import type { Config } from "./config.js";
import { keyAgreement } from "./ece.js";
import { createEncryptor } from "./encryptor.js";
import { PushTransport } from "./push-transport.js";
import { VapidSigner } from "./vapid.js";
import { WebPushProvider } from "./webpush-provider.js";

export function start(config: Config, deps: { log: Logger }): Promise<RunningSender> {
  // The encryption threads load the same addon as this thread (key-agreement.ts).
  if (keyAgreement.kind === "native") deps.log.info("web push key agreement: native addon (OpenSSL)");
  else {
    deps.log.warn(
      { reason: keyAgreement.fallbackReason },
      "web push key agreement: node:crypto, ~40 % more CPU per message (npm run build compiles the native addon)",
    );
  }
  const policy = {
    allowPrivate: config.allowPrivate,
    allowedHosts: config.allowedHosts
      .split(",")
      .map((h) => h.trim())
      .filter(Boolean),
  };
  const transport = new PushTransport({
    allowPrivate: config.allowPrivate,
    maxConnectionsPerOrigin: config.maxConnectionsPerOrigin,
    connectTimeoutMs: config.connectTimeoutMs,
    pingIntervalMs: config.pingIntervalMs,
    log: deps.log,
  });
  const provider = new WebPushProvider(transport, new VapidSigner(), policy, createEncryptor(config.encryptThreads));
  // The HTTP/2 connections to the push services size the sends in flight: their streams, not a constant.
  return startSender(config, provider, { ...deps, capacity: transport });
}
