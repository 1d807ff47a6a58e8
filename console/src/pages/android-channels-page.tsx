import { Anchor, Breadcrumbs, Button, ColorSwatch, Group, Stack, Table, Text } from "@mantine/core";
import { useEffect, useState } from "react";
import type { Schemas } from "@herald/client";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { useSession } from "../auth/session-context";
import { ConfirmButton } from "../components/confirm";
import { attempt, ErrorAlert, Loading } from "../components/feedback";
import { PageHeader } from "../components/page-header";
import { useCurrentApp } from "../layout/current-app";
import { canManageApps } from "../roles";
import { linkProps } from "../routing";
import { AndroidChannelForm } from "./android-channel-form";
import { describeVibration, IMPORTANCE_LABELS } from "./android-channel-values";

type AndroidChannel = Schemas["AndroidChannel"];

/** The notification channels an app's Android devices create when they sync. */
export function AndroidChannelsPage({ appId }: { appId: string }) {
  const { me } = useSession();
  const { selectApp } = useCurrentApp();
  const app = useApi("/v1/apps/{app_id}", { params: { path: { app_id: appId } } });
  // One page always: an app has at most 100 channels.
  const channels = useApi("/v1/apps/{app_id}/android-channels", { params: { path: { app_id: appId } } });
  const [editing, setEditing] = useState<AndroidChannel | "new">();
  const manage = canManageApps(me.role);

  useEffect(() => {
    if (app.data) selectApp(app.data.id);
  }, [app.data, selectApp]);

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
      <ErrorAlert error={channels.error} title="Could not load the channels" />
      {!list ? (
        !channels.error && <Loading />
      ) : list.data.length === 0 ? (
        <Text>No Android channels for {app.data.name} yet.</Text>
      ) : (
        <ChannelTable
          channels={list.data}
          manage={manage}
          onEdit={setEditing}
          onDelete={(c) =>
            attempt(
              () =>
                herald.DELETE("/v1/apps/{app_id}/android-channels/{channel_id}", {
                  params: { path: { app_id: appId, channel_id: c.id } },
                }),
              `Channel ${c.name} deleted`,
            ).then(channels.reload)
          }
        />
      )}
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
  onDelete: (c: AndroidChannel) => Promise<unknown>;
}

function ChannelTable({ channels, manage, onEdit, onDelete }: ChannelTableProps) {
  return (
    <Table.ScrollContainer minWidth={900}>
      <Table striped verticalSpacing="sm" aria-label="Android channels">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Channel ID</Table.Th>
            <Table.Th>Name</Table.Th>
            <Table.Th>Importance</Table.Th>
            <Table.Th>Sound</Table.Th>
            <Table.Th>Vibration</Table.Th>
            <Table.Th>Lights</Table.Th>
            <Table.Th>Badge</Table.Th>
            <Table.Th>Group</Table.Th>
            <Table.Th aria-label="Actions" />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {channels.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>
                <Text ff="monospace" size="sm">
                  {c.id}
                </Text>
              </Table.Td>
              <Table.Td>
                {c.name}
                {c.description && (
                  <Text size="xs" c="dimmed">
                    {c.description}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{IMPORTANCE_LABELS[c.importance]}</Table.Td>
              <Table.Td>{c.sound ?? "System default"}</Table.Td>
              <Table.Td>{describeVibration(c.vibration)}</Table.Td>
              <Table.Td>
                <Lights value={c.lights} />
              </Table.Td>
              <Table.Td>{c.badge ? "Yes" : "No"}</Table.Td>
              <Table.Td>{c.group ?? "—"}</Table.Td>
              <Table.Td>
                {manage && (
                  <Group gap="xs" wrap="nowrap" justify="flex-end">
                    <Button size="xs" variant="default" aria-label={`Edit channel ${c.name}`} onClick={() => onEdit(c)}>
                      Edit
                    </Button>
                    <ConfirmButton
                      label="Delete"
                      ariaLabel={`Delete channel ${c.name}`}
                      title={`Delete channel ${c.name}?`}
                      confirmLabel="Delete channel"
                      onConfirm={() => onDelete(c)}
                    >
                      Devices remove it at their next sync, and sends that name it are refused from now on.
                    </ConfirmButton>
                  </Group>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
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
