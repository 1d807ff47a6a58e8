export interface Renderer {
  kind: "helm" | "helm-render";
  bin: string;
}
export interface ChartOptions {
  chartDir: string;
  releaseName?: string;
  namespace?: string;
  valuesFiles?: string[];
  set?: string[];
  setString?: string[];
  apiVersions?: string[];
  kubeVersion?: string;
  /** From ensureRenderer(); by default ensureRenderer() is called. */
  renderer?: Renderer;
}
/** A failed render or lint: the renderer's exit code and output. */
export interface RenderError extends Error {
  exitCode: number;
  stdout: string;
  stderr: string;
}
export declare const APT_PACKAGES: string[];
export declare function ensureRenderer(options?: { install?: boolean; preferHelm?: boolean }): Promise<Renderer>;
export declare function renderChart(options: ChartOptions & { notes?: boolean }): Promise<string>;
export declare function lintChart(options: ChartOptions): Promise<string>;
