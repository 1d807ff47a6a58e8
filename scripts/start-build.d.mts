/** Whether packages/cli/dist (the herald command's bundle) is missing or older than what it is made from. */
export declare function bundleIsStale(): boolean;
/** Builds what `npm start` runs, only what is stale; answers one phrase per step. */
export declare function buildStale(options?: { warn?: (message: string) => void }): Promise<string[]>;
