export declare const ENTRY_WORKSPACE: string;
export declare function productionWorkspaces(): { name: string; dir: string }[];
export declare function stageRelease(target: string, options?: { build?: boolean; preferOffline?: boolean }): string;
