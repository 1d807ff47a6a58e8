/** A UUID in its canonical text form, either case: the JSON Schema `pattern` of ids. */
export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

const UUID = new RegExp(UUID_PATTERN);

/**
 * Ids are UUIDs; anything else cannot name a row, and is checked before it reaches
 * Postgres (a bad cast there is an error, not "not found").
 */
export const isUuid = (value: string): boolean => UUID.test(value);
