import { type ApiConfig, request } from "./api.js";
import { devicePath } from "./registration.js";

/** An in-app message as the device-facing fetch answers it, in the device's language (else `en`). */
export interface InAppMessage {
  id: string;
  language: string;
  title: string;
  body: string;
  image_url: string | null;
  action_url: string | null;
  priority: number;
  ends_at: string | null;
}

export type InAppEventType = "impression" | "click" | "dismiss";

/** What a renderer calls when the user acts on the message it shows. */
export interface InAppActions {
  /** Counts the click, then opens the message's action URL (http/https only) unless told not to. */
  click(opts?: { navigate?: boolean }): Promise<void>;
  dismiss(): Promise<void>;
}

export type InAppRenderer = (message: InAppMessage, actions: InAppActions) => void | Promise<void>;

/** The device's registration, once there is one. */
export type DeviceProof = () => { config: ApiConfig; deviceId: string; pushToken: string };

/**
 * In-app messages of the device: fetch the ones that apply now, and report what the user
 * did (the server counts them and enforces each message's impression limit). Rendering is
 * the app's: `show` hands the first message to its renderer and reports the impression.
 */
export class InAppMessages {
  constructor(private readonly proof: DeviceProof) {}

  async fetch(): Promise<InAppMessage[]> {
    const { config, deviceId, pushToken } = this.proof();
    const res = await request<{ data: InAppMessage[] }>(config, "GET", devicePath(deviceId, "/in-app-messages"), {
      pushToken,
    });
    return res.data;
  }

  async report(messageId: string, type: InAppEventType): Promise<void> {
    const { config, deviceId, pushToken } = this.proof();
    const path = devicePath(deviceId, `/in-app-messages/${encodeURIComponent(messageId)}/events`);
    await request(config, "POST", path, { body: { type }, pushToken });
  }

  /** Shows the most important message now due, if any, through `render`; answers it. */
  async show(render: InAppRenderer): Promise<InAppMessage | undefined> {
    const [message] = await this.fetch();
    if (!message) return undefined;
    await this.report(message.id, "impression");
    await render(message, {
      click: async (opts) => {
        await this.report(message.id, "click");
        const url = message.action_url && new URL(message.action_url, location.href);
        if (opts?.navigate !== false && url && (url.protocol === "https:" || url.protocol === "http:")) {
          location.assign(url.href);
        }
      },
      dismiss: () => this.report(message.id, "dismiss"),
    });
    return message;
  }
}
