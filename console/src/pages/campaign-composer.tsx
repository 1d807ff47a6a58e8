import {
  Anchor,
  Breadcrumbs,
  Button,
  Card,
  Group,
  NumberInput,
  Radio,
  Select,
  SimpleGrid,
  Stack,
  Text,
  Textarea,
  TextInput,
  Title,
} from "@mantine/core";
import { useEffect, useState } from "react";
import { type operations, unwrap } from "@herald/client";
import { herald } from "../api/herald";
import { useApi } from "../api/use-api";
import { NoApp } from "../components/no-app";
import { FormError, SubmitForm, useSubmit } from "../components/submit-form";
import { useRequiredApp } from "../layout/app-picker";
import { linkProps, navigate } from "../routing";
import { LOCAL_TIME_ZONE, TIME_ZONES } from "../timezones";
import {
  AndroidChannelSelect,
  ContentsEditor,
  DataEditor,
  type DataPair,
  type LanguageContent,
} from "./composer-fields";
import { localInputIn, scheduledAtUtc } from "./schedule";

type Audience = "all" | "users" | "segment";
/** What every send endpoint takes besides its audience (POST /v1/push/send takes just this). */
type SendBody = operations["sendToAll"]["requestBody"]["content"]["application/json"];

/** Composes a campaign and sends it through the push endpoint of its audience. */
export default function CampaignComposer() {
  const { app, noApps } = useRequiredApp();
  const [name, setName] = useState("");
  const [contents, setContents] = useState<LanguageContent[]>([{ language: "en", title: "", body: "" }]);
  const [data, setData] = useState<DataPair[]>([]);
  const [imageUrl, setImageUrl] = useState("");
  const [ttl, setTtl] = useState<number | string>("");
  const [priority, setPriority] = useState<"normal" | "high">("normal");
  const [channelId, setChannelId] = useState<string | null>(null);
  const [audience, setAudience] = useState<Audience>("all");
  const [externalIds, setExternalIds] = useState("");
  const [segmentId, setSegmentId] = useState<string | null>(null);
  const [when, setWhen] = useState<"now" | "later">("now");
  const [zone, setZone] = useState(LOCAL_TIME_ZONE);
  const [at, setAt] = useState(() => localInputIn(LOCAL_TIME_ZONE, 60));
  const { busy, error, setError, run } = useSubmit();
  const segments = useApi(
    "/v1/segments",
    app && audience === "segment" ? { params: { query: { app_id: app.id, per_page: 200 } } } : null,
  );
  // One page always: an app has at most 100 channels.
  const channels = useApi("/v1/apps/{app_id}/android-channels", app ? { params: { path: { app_id: app.id } } } : null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a channel of another app is not this app's
  useEffect(() => setChannelId(null), [app?.id]);

  if (noApps) return <NoApp />;
  if (!app) return null;

  const problems = (): string | undefined => {
    if (!name.trim()) return "Give the campaign a name.";
    const en = contents.find((c) => c.language === "en");
    if (!en || (!en.title.trim() && !en.body.trim())) return "The English (en) text is required: it is the fallback.";
    if (contents.some((c) => !c.title.trim() && !c.body.trim())) return "Every language needs a title or a message.";
    if (data.some((p) => !p.key.trim())) return "Every data pair needs a key.";
    if (imageUrl.trim() && !imageUrl.trim().startsWith("https://")) return "The image URL must start with https://.";
    if (audience === "users" && ids().length === 0) return "List at least one external id.";
    if (audience === "segment" && !segmentId) return "Choose a segment.";
    if (when === "later" && !at) return "Choose the delivery time.";
    return undefined;
  };
  const ids = () => [...new Set(externalIds.split(/[\s,]+/).filter(Boolean))];

  const send = () => {
    const problem = problems();
    if (problem) return setError(problem);
    const body: SendBody = {
      app_id: app.id,
      name: name.trim(),
      contents: Object.fromEntries(
        contents.map((c) => [
          c.language,
          { ...(c.title.trim() ? { title: c.title.trim() } : {}), ...(c.body.trim() ? { body: c.body.trim() } : {}) },
        ]),
      ),
      ...(data.length ? { data: Object.fromEntries(data.map((p) => [p.key.trim(), p.value])) } : {}),
      ...(imageUrl.trim() ? { image_url: imageUrl.trim() } : {}),
      ...(ttl !== "" ? { ttl: Number(ttl) } : {}),
      priority,
      ...(channelId ? { android_channel_id: channelId } : {}),
      ...(when === "later" ? { scheduled_at: scheduledAtUtc(at, zone) } : {}),
    };
    return run(async () => {
      const campaign = unwrap(
        audience === "users"
          ? await herald.POST("/v1/push/send-to-users", { body: { ...body, external_ids: ids() } })
          : audience === "segment"
            ? await herald.POST("/v1/push/send-to-segment", { body: { ...body, segment_id: segmentId! } })
            : await herald.POST("/v1/push/send", { body }),
      );
      navigate(`/campaigns/${campaign.id}`);
    });
  };

  return (
    <SubmitForm onSubmit={send}>
      <Stack maw={900}>
        <Breadcrumbs>
          <Anchor {...linkProps("/campaigns")}>Campaigns</Anchor>
          <Text>New campaign</Text>
        </Breadcrumbs>
        <Title order={2}>New campaign for {app.name}</Title>
        <TextInput label="Campaign name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <Card withBorder component="section" aria-label="Message">
          <Title order={3} size="h4" mb="sm">
            Message
          </Title>
          <ContentsEditor value={contents} onChange={setContents} />
        </Card>
        <Card withBorder component="section" aria-label="Options">
          <Title order={3} size="h4" mb="sm">
            Options
          </Title>
          <Stack>
            <TextInput
              label="Image URL"
              placeholder="https://…"
              type="url"
              value={imageUrl}
              onChange={(e) => setImageUrl(e.currentTarget.value)}
            />
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <NumberInput
                label="Time to live (seconds)"
                description="Empty: the providers' default (28 days)"
                min={0}
                max={2_419_200}
                allowDecimal={false}
                value={ttl}
                onChange={setTtl}
              />
              <Select
                label="Priority"
                data={[
                  { value: "normal", label: "Normal" },
                  { value: "high", label: "High (may wake the device)" },
                ]}
                value={priority}
                onChange={(v) => v && setPriority(v as "normal" | "high")}
                allowDeselect={false}
              />
            </SimpleGrid>
            <AndroidChannelSelect
              appId={app.id}
              channels={channels.data?.data}
              error={channels.error}
              value={channelId}
              onChange={setChannelId}
            />
            <Text fw={500} size="sm">
              Custom data
            </Text>
            <DataEditor value={data} onChange={setData} />
          </Stack>
        </Card>
        <Card withBorder component="section" aria-label="Audience">
          <Radio.Group label="Audience" value={audience} onChange={(v) => setAudience(v as Audience)}>
            <Stack gap="xs" mt="xs">
              <Radio value="all" label="All devices of the app" />
              <Radio value="users" label="Users by external id" />
              <Radio value="segment" label="A segment" />
            </Stack>
          </Radio.Group>
          {audience === "users" && (
            <Textarea
              mt="sm"
              label="External ids"
              description="One per line, or separated by commas"
              autosize
              minRows={3}
              value={externalIds}
              onChange={(e) => setExternalIds(e.currentTarget.value)}
            />
          )}
          {audience === "segment" && (
            <Select
              mt="sm"
              label="Segment"
              placeholder={segments.data?.data.length === 0 ? "No segments yet" : "Choose a segment"}
              data={(segments.data?.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
              value={segmentId}
              onChange={setSegmentId}
              searchable
            />
          )}
        </Card>
        <Card withBorder component="section" aria-label="Delivery">
          <Radio.Group label="Delivery" value={when} onChange={(v) => setWhen(v as "now" | "later")}>
            <Stack gap="xs" mt="xs">
              <Radio value="now" label="Send now" />
              <Radio value="later" label="Schedule" />
            </Stack>
          </Radio.Group>
          {when === "later" && (
            <SimpleGrid cols={{ base: 1, sm: 2 }} mt="sm">
              <TextInput
                label="Delivery time"
                type="datetime-local"
                value={at}
                onChange={(e) => setAt(e.currentTarget.value)}
                required
              />
              <Select
                label="Time zone"
                data={TIME_ZONES}
                searchable
                limit={100}
                value={zone}
                onChange={(v) => v && setZone(v)}
                allowDeselect={false}
              />
            </SimpleGrid>
          )}
        </Card>
        <FormError error={error} />
        <Group>
          <Button type="submit" loading={busy} size="md">
            {when === "now" ? "Send now" : "Schedule campaign"}
          </Button>
          <Button variant="default" onClick={() => navigate("/campaigns")}>
            Cancel
          </Button>
        </Group>
      </Stack>
    </SubmitForm>
  );
}
