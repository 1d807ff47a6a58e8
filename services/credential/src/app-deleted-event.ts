import { create, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppDeletedSchema } from "@herald/proto/delivery";
import type { OutboxEvent, OutboxKind, StreamNames } from "@herald/runtime";

/** The outbox row announcing an app's deletion (written in the deletion's transaction). */
export function appDeletedEvent(appId: string, deletedAt: Date): OutboxEvent {
  return {
    kind: "app.deleted",
    msgId: `app.deleted.${appId}`,
    payload: { app_id: appId, deleted_at: deletedAt.toISOString() },
  };
}

/** app.deleted rows are published as protobuf (AppDeleted) on their own subject. */
export function appDeletedKind(names: StreamNames): OutboxKind {
  return {
    subject: names.appDeleted,
    encode: (payload) => {
      const { app_id, deleted_at } = payload as { app_id: string; deleted_at: string };
      return toBinary(
        AppDeletedSchema,
        create(AppDeletedSchema, { appId: app_id, deletedAt: timestampFromDate(new Date(deleted_at)) }),
      );
    },
  };
}
