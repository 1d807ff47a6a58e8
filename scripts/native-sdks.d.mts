export const SWIFT_ROOT: string;
export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}
export interface RunResult {
  status: number;
  output: string;
}
export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  onOutput?: (chunk: string) => void;
}
export function ensureSwift(): void;
export function ensureJava(): void;
export function runSwift(args: string[], opts?: RunOptions): Promise<RunResult>;
export function runMaven(args: string[], opts?: RunOptions): Promise<RunResult>;
export function xctestCounts(output: string): Counts | undefined;
export function surefireCounts(output: string): Counts | undefined;
