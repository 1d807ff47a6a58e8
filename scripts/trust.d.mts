export declare function ensureSimulatorCa(root: string): string;
export declare function caBundle(root: string, simCaPath: string, userCaFile?: string): string;
