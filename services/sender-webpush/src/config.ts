import { bool, readEnv, str } from "@herald/runtime";
import { senderEnv, type SenderConfig } from "@herald/sender";

export const configSpec = {
  ...senderEnv(7013),
  allowPrivate: bool("HERALD_WEBPUSH_ALLOW_PRIVATE", false),
  allowedHosts: str("HERALD_WEBPUSH_ALLOWED_HOSTS", ""),
};

export interface Config extends SenderConfig {
  allowPrivate: boolean;
  allowedHosts: string;
}

export const loadConfig = (env: NodeJS.ProcessEnv = process.env): Config => readEnv(configSpec, env);
