import { Anchor, Breadcrumbs, Button, ColorSwatch, Group, Stack, Text } from "@mantine/core";
import { useState } from "react";
import type { FetchResult, Schemas } from "@herald/client";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ApiList } from "../components/api-list";
import { ConfirmButton } from "../components/confirm";
import { DataTable } from "../components/data-table";
import { ErrorAlert, Loading } from "../components/feedback";
import { PageHeader } from "../components/page-header";
import { useAppOfPage } from "../layout/current-app";
import { canManageApps } from "../roles";
import { linkProps } from "../routing";
import { AndroidChannelForm } from "./android-channel-form";
import { describeVibration, IMPORTANCE_LABELS } from "./android-channel-values";

type AndroidChannel = Schemas["AndroidChannel"];

/** The notification channels an app's Android devices create when they sync. */
export function AndroidChannelsPage({ appId }: { appId: string }) {
  const { me } = useSession();
  const app = useAppOfPage(appId);
  // One page always: an app has at most 100 channels.
  const channels = useApi("/v1/apps/{app_id}/android-channels", { params: { path: { app_id: appId } } });
  const [editing, setEditing] = useState<AndroidChannel | "new">();
  const manage = canManageApps(me.role);

  if (app.error) return <ErrorAlert error={app.error} title="Could not load the app" />;
  if (!app.data) return <Loading />;
  const list = channels.data;

  return (
    <Stack gap={0}>
      <Breadcrumbs mb="sm">
        <Anchor {...linkProps("/apps")}>Apps</Anchor>
        <Anchor {...linkProps(`/apps/${app.data.id}`)}>{app.data.name}</Anchor>
        <Text>Android channels</Text>
      </Breadcrumbs>
      <PageHeader title="Android channels">
        {manage && <Button onClick={() => setEditing("new")}>New channel</Button>}
      </PageHeader>
      <Text size="sm" mb="md" maw={720}>
        Android 8 and later show every notification in a channel that users tune in the app's settings. Herald's client
        libraries create these channels on devices when they sync; a campaign names one as its Android channel.
        {manage ? "" : " Your role can view channels; an admin changes them."}
      </Text>
      <ApiList
        list={channels}
        empty={`No Android channels for ${app.data.name} yet.`}
        errorTitle="Could not load the channels"
      >
        {(rows) => (
          <ChannelTable
            channels={rows}
            manage={manage}
            onEdit={setEditing}
            deleteCall={(c) => () =>
              herald.DELETE("/v1/apps/{app_id}/android-channels/{channel_id}", {
                params: { path: { app_id: appId, channel_id: c.id } },
              })
            }
            onDeleted={channels.reload}
          />
        )}
      </ApiList>
      {list && (
        <Text size="sm" mt="sm">
          {list.total} of {list.per_page} channels
        </Text>
      )}
      {editing && (
        <AndroidChannelForm
          app={app.data}
          channel={editing === "new" ? undefined : editing}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            channels.reload();
          }}
        />
      )}
    </Stack>
  );
}

interface ChannelTableProps {
  channels: AndroidChannel[];
  manage: boolean;
  onEdit: (c: AndroidChannel) => void;
  /** The API call that deletes the channel. */
  deleteCall: (c: AndroidChannel) => () => Promise<FetchResult<unknown>>;
  onDeleted: () => void;
}

function ChannelTable({ channels, manage, onEdit, deleteCall, onDeleted }: ChannelTableProps) {
  return (
    <DataTable
      label="Android channels"
      minWidth={900}
      rows={channels}
      rowKey={(c) => c.id}
      columns={[
        {
          header: "Channel ID",
          cell: (c) => (
            <Text ff="monospace" size="sm">
              {c.id}
            </Text>
          ),
        },
        {
          header: "Name",
          cell: (c) => (
            <>
              {c.name}
              {c.description && (
                <Text size="xs" c="dimmed">
                  {c.description}
                </Text>
              )}
            </>
          ),
        },
        { header: "Importance", cell: (c) => IMPORTANCE_LABELS[c.importance] },
        { header: "Sound", cell: (c) => c.sound ?? "System default" },
        { header: "Vibration", cell: (c) => describeVibration(c.vibration) },
        { header: "Lights", cell: (c) => <Lights value={c.lights} /> },
        { header: "Badge", cell: (c) => (c.badge ? "Yes" : "No") },
        { header: "Group", cell: (c) => c.group ?? "—" },
        {
          header: "Actions",
          hidden: true,
          cell: (c) =>
            manage && (
              <Group gap="xs" wrap="nowrap" justify="flex-end">
                <Button size="xs" variant="default" aria-label={`Edit channel ${c.name}`} onClick={() => onEdit(c)}>
                  Edit
                </Button>
                <ConfirmButton
                  label="Delete"
                  ariaLabel={`Delete channel ${c.name}`}
                  title={`Delete channel ${c.name}?`}
                  confirmLabel="Delete channel"
                  call={deleteCall(c)}
                  success={`Channel ${c.name} deleted`}
                  onDone={onDeleted}
                >
                  Devices remove it at their next sync, and sends that name it are refused from now on.
                </ConfirmButton>
              </Group>
            ),
        },
      ]}
    />
  );
}

function Lights({ value }: { value: AndroidChannel["lights"] }) {
  if (typeof value !== "string") return value ? "On" : "Off";
  return (
    <Group gap={6} wrap="nowrap">
      <ColorSwatch color={value} size={14} aria-hidden />
      <Text size="sm" ff="monospace">
        {value}
      </Text>
    </Group>
  );
}
