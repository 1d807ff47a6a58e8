import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { AndroidChannelService } from "@herald/proto/android_channel";

/** Whether an app has an Android notification channel; the device registry owns them. */
export interface AndroidChannels {
  exists(appId: string, channelId: string): Promise<boolean>;
}

export class RegistryAndroidChannels implements AndroidChannels {
  constructor(private readonly client: Client<typeof AndroidChannelService>) {}

  async exists(appId: string, channelId: string): Promise<boolean> {
    try {
      await this.client.getAndroidChannel({ appId, id: channelId });
      return true;
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.NotFound) return false;
      throw err;
    }
  }
}
