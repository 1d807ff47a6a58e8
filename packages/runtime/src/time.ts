import { timestampFromDate, timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/** Converts between database dates and protobuf timestamps. */
export const toTimestamp = (d: Date): Timestamp => timestampFromDate(d);
export const fromTimestamp = (t: Timestamp): Date => timestampDate(t);
