export interface HeraldProcess {
  name: string;
  /** Node arguments from source, after SOURCE_NODE_ARGS. */
  args: string[];
  /** Node arguments of the production build (paths relative to the repository or a staged release). */
  built: string[];
  stage: number;
  /** Port of its /healthz. */
  health: number;
  /** Path on the health port that answers 200 once it serves: /readyz, the simulator's /healthz. */
  ready: string;
  env: Record<string, string>;
}
export type HeraldPorts = Record<
  | "providerSim"
  | "providerSimAdmin"
  | "credential"
  | "credentialAdmin"
  | "deviceRegistry"
  | "deviceRegistryAdmin"
  | "campaign"
  | "campaignAdmin"
  | "senderApns"
  | "senderFcm"
  | "senderWebpush"
  | "webhooks"
  | "webhooksAdmin"
  | "gateway",
  number
>;
export declare const SOURCE_NODE_ARGS: string[];
/** The herald command as built: the bundle the image runs, and tsc's output it is made from. */
export declare const CLI_BUNDLE: string;
export declare const CLI_COMPILED: string;
export declare const HERALD_NODE_OPTIONS: string;
/** A role's Node options; undefined: the image's, for every role. */
export declare function nodeOptionsOf(role: string | undefined): string;
/** A role's V8 flags on node's command line, before the script. */
export declare function nodeFlagsOf(role: string): string[];
export declare const DEFAULT_PORTS: HeraldPorts;
export declare function providerUrls(ports?: HeraldPorts, env?: NodeJS.ProcessEnv): Record<string, string>;
export declare function heraldProcesses(ports?: HeraldPorts, providers?: Record<string, string>): HeraldProcess[];
