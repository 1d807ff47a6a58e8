export interface BuiltFile {
  bytes: number;
  gzip: number;
}
/** Builds @herald/web into `outDir` (default dist/); answers each file's size and gzip size. */
export function buildWebSdk(outDir?: string, opts?: { types?: boolean }): Promise<Record<string, BuiltFile>>;
