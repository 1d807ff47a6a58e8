import { randomBytes } from "node:crypto";

export interface FcmDevice {
  /** The Firebase project the app instance registered with; null for a token marked without being issued here. */
  projectId: string | null;
  unregistered: boolean;
}

/** Registration tokens the simulator issued or was told about. */
export class FcmDeviceStore {
  private readonly devices = new Map<string, FcmDevice>();

  /**
   * Like `FirebaseMessaging.getToken()` on `count` app instances: tokens of the FCM
   * alphabet in the usual shape, an instance id, a colon, then `APA91b…` (164 characters).
   */
  create(projectId: string, count: number): string[] {
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      const token = `${randomBytes(16).toString("base64url")}:APA91b${randomBytes(101).toString("base64url")}`;
      this.devices.set(token, { projectId, unregistered: false });
      tokens.push(token);
    }
    return tokens;
  }

  get(token: string): FcmDevice | undefined {
    return this.devices.get(token);
  }

  /** Unregisters (404 UNREGISTERED from now on) or revives a token; a token never issued here is remembered for any project. */
  mark(token: string, unregistered: boolean): FcmDevice {
    const device = this.devices.get(token) ?? { projectId: null, unregistered: false };
    device.unregistered = unregistered;
    this.devices.set(token, device);
    return device;
  }
}
