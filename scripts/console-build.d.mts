/** The newest modification time (ms) of a file or of anything in a folder; 0 when it does not exist. */
export function newestMtime(p: string): number;
export function consoleBuildIsStale(): boolean;
/** Builds console/dist when missing or stale; true when it built. */
export function ensureConsoleBuilt(): boolean;
