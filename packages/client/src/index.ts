import type { components } from "./schema.js";

export { createHeraldClient, type HeraldClient, type HeraldClientOptions, type TokenSource } from "./client.js";
export { type ErrorBody, type FetchResult, HeraldError, unwrap } from "./errors.js";
export { type Item, type ListPath, type Page, type PageInit, pages, paginate } from "./paginate.js";
export type { components, operations, paths } from "./schema.js";

/** The API's named schemas: `Schemas["Device"]`, `Schemas["Campaign"]`, … */
export type Schemas = components["schemas"];
