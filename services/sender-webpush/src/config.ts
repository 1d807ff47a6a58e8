import os from "node:os";
import { bool, int, readEnv, str } from "@herald/runtime";
import { senderEnv, type SenderConfig } from "@herald/sender";

export const configSpec = {
  ...senderEnv(7013),
  allowPrivate: bool("HERALD_WEBPUSH_ALLOW_PRIVATE", false),
  allowedHosts: str("HERALD_WEBPUSH_ALLOWED_HOSTS", ""),
  /** Worker threads that encrypt messages (0: on the event loop); default one per core, at most 4. */
  encryptThreads: int("WEBPUSH_ENCRYPT_THREADS", Math.min(4, os.availableParallelism()), 0, 64),
  /** HTTP/2 connections per push service origin at most; more open only while the others' streams are all in use. */
  maxConnectionsPerOrigin: int("WEBPUSH_MAX_CONNECTIONS", 4, 1, 100),
};

export interface Config extends SenderConfig {
  allowPrivate: boolean;
  allowedHosts: string;
  encryptThreads: number;
  maxConnectionsPerOrigin: number;
}

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => readEnv(configSpec, env);
