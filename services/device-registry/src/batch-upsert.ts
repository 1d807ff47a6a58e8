import { tokenHash } from "./push-token.js";
import type { DeviceChanges, Registration } from "./device-store.js";

// The batch upserts of registerMany() and importDevices(): one INSERT … ON CONFLICT DO
// UPDATE per call and per shape (which optional fields the registrations set), prepared.
//
// A registration that leaves a field unset keeps its stored value, as register() does.
// One statement for all shapes needs the stored row to merge them with: it was a join of
// the input against devices (for the import, also to skip writes that change nothing).
// That join was planned once per connection, from the prepared statement's cache; planned
// on a table that was small or never analysed, PostgreSQL chose a hash join over a bitmap
// scan of all the app's devices and kept it: an import of 200,000 rows ran 34,000/s into
// a table of 50,000 devices and 14,000/s into one of 450,000, PostgreSQL spending 0.5 then
// 1.3 s of CPU per 10,000 rows (0.25 s, flat, planned per call). With one statement per
// shape, DO UPDATE sets only the fields the shape sets, and there is no join to plan: the
// conflict check is the unique index's lookup, whatever the table's size or statistics.

/** The optional fields, each one bit of a shape. */
const OPTIONAL_FIELDS: readonly { column: string; field: keyof DeviceChanges }[] = [
  { column: "external_id", field: "externalId" },
  { column: "language", field: "language" },
  { column: "timezone", field: "timezone" },
  { column: "app_version", field: "appVersion" },
  { column: "tags", field: "tags" },
];

/** Which optional fields a registration sets, as a bit mask over OPTIONAL_FIELDS. */
const shapeOf = (r: Registration) =>
  OPTIONAL_FIELDS.reduce((shape, { field }, bit) => (r[field] !== undefined ? shape | (1 << bit) : shape), 0);

/** Groups the indexes of registrations by shape, in input order within each group. */
export function byShape(registrations: readonly Registration[], indexes: Iterable<number>): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  for (const i of indexes) {
    const shape = shapeOf(registrations[i]!);
    const group = groups.get(shape);
    if (group) group.push(i);
    else groups.set(shape, [i]);
  }
  return groups;
}

/** One registration as a row of the statement's jsonb_to_recordset($1::jsonb). */
export const upsertRecord = (r: Registration) => ({
  a: r.appId,
  h: tokenHash(r.pushToken).toString("hex"),
  t: r.pushToken,
  p: r.platform,
  e: r.externalId ?? null,
  l: r.language ?? null,
  z: r.timezone ?? null,
  v: r.appVersion ?? null,
  tg: r.tags ?? null,
});

/**
 * One device of one app as a key (the token, or its hash): the app id in lower case, as
 * PostgreSQL writes a uuid, so that an id in capitals is the same app.
 */
export const rowKey = (appId: string, token: string) => `${appId.toLowerCase()}:${token}`;

/** What a batch upsert is for; its statements are named after it. */
export interface UpsertKind {
  name: string;
  /** The columns RETURNING gives before token_hash and created; they must hold d.app_id. */
  returning: string;
  /** Writes only the rows whose values would change, and returns only those. */
  skipUnchanged: boolean;
}

const statements = new Map<string, { name: string; text: string }>();

/**
 * The statement for registrations of one shape; their tokens must be distinct (DO UPDATE
 * may touch a row once). The rows are written in (app, token hash) order, so that two
 * concurrent batches lock the rows they share in the same order. RETURNING gives each
 * written row's `kind.returning` columns, then its token_hash in hex and created (xmax = 0
 * only on the row version an INSERT created).
 */
export function batchUpsert(kind: UpsertKind, shape: number): { name: string; text: string } {
  const name = `device_registry.${kind.name}.${shape}`;
  let statement = statements.get(name);
  if (statement) return statement;
  const written = [
    "push_token",
    "platform",
    ...OPTIONAL_FIELDS.filter((_, bit) => shape & (1 << bit)).map((f) => f.column),
  ];
  const unchanged = kind.skipUnchanged
    ? `WHERE (${written.map((c) => `d.${c}`).join(", ")}, d.invalid)
             IS DISTINCT FROM (${written.map((c) => `EXCLUDED.${c}`).join(", ")}, false)`
    : "";
  statement = {
    name,
    text: `INSERT INTO devices AS d (app_id, token_hash, push_token, platform, external_id, language, timezone,
                               app_version, tags)
   SELECT x.a, decode(x.h, 'hex'), x.t, x.p, x.e, x.l, x.z, x.v, ARRAY(SELECT jsonb_array_elements_text(x.tg))
   FROM jsonb_to_recordset($1::jsonb) AS x(a uuid, h text, t text, p text, e text, l text, z text, v text, tg jsonb)
   ORDER BY x.a, x.h
   ON CONFLICT (app_id, token_hash) DO UPDATE SET
     ${written.map((c) => `${c} = EXCLUDED.${c}`).join(", ")},
     invalid = false, invalid_reason = NULL, invalidated_at = NULL, registered_at = now(), updated_at = now()
   ${unchanged}
   RETURNING ${kind.returning}, encode(d.token_hash, 'hex') AS token_hash, (d.xmax = 0) AS created`,
  };
  statements.set(name, statement);
  return statement;
}
