export function consoleBuildIsStale(): boolean;
/** Builds console/dist when missing or stale; true when it built. */
export function ensureConsoleBuilt(): boolean;
