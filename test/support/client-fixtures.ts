import { readFileSync } from "node:fs";
import path from "node:path";

/** A JSON file of sdks/fixtures: the cases every client library's suite and the server's tests check. */
export function clientFixture<T = any>(name: string): T {
  return JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../../sdks/fixtures", name), "utf8")) as T;
}
