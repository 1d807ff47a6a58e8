// Types for the parts of http_ece (RFC 8188 reference implementation) that Herald uses.
declare module "http_ece" {
  import type { ECDH } from "node:crypto";

  interface EceParams {
    version?: "aes128gcm" | "aesgcm" | "aesgcm128";
    privateKey?: ECDH;
    dh?: Buffer | string;
    authSecret?: Buffer | string;
    key?: Buffer | string;
    keyid?: string;
    salt?: Buffer | string;
    rs?: number;
    keylabel?: string;
    keymap?: Record<string, ECDH>;
  }

  const ece: {
    encrypt(buffer: Buffer, params: EceParams): Buffer;
    decrypt(buffer: Buffer, params: EceParams): Buffer;
  };
  export default ece;
}
