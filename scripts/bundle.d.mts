import type { BuildOptions, Plugin } from "esbuild";

export declare const BUNDLED: RegExp;
export declare const common: BuildOptions;
export declare function externals(extra?: RegExp): Plugin;
export declare function bundle(): Promise<void>;
