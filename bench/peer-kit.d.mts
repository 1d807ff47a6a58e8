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
