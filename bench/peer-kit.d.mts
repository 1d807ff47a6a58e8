export interface PeerResult {
  ok: number;
  failed: number;
  firstError?: string;
}
export declare function runPeer<C>(prepare: (config: C) => Promise<() => Promise<PeerResult>>): Promise<void>;
export declare function slidingWindow(
  n: number,
  concurrency: number,
  sendOne: (i: number) => Promise<true | string>,
): Promise<PeerResult>;
export declare function apnsToken(seed: string, i: number): string;
export declare function fcmToken(seed: string, i: number): string;
export declare function webPushPath(seed: string, i: number): string;
export declare function webPushSubscription(
  origin: string,
  seed: string,
  i: number,
  p256dh: string,
): { endpoint: string; keys: { p256dh: string; auth: string } };
