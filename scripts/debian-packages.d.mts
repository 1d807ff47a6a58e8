export declare function which(bin: string, extraDirs?: string[]): string | undefined;
export declare function aptInstall(packages: string[]): void;
