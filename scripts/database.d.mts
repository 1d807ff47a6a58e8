export declare function ensureDatabase(url: string): Promise<void>;
