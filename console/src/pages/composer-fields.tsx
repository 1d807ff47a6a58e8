import { ActionIcon, Anchor, Button, Fieldset, Group, Select, Stack, Text, TextInput, Textarea } from "@mantine/core";
import type { Schemas } from "@herald/client";
import { ErrorAlert } from "../components/feedback";
import { linkProps } from "../routing";

export interface LanguageContent {
  language: string;
  title: string;
  body: string;
}

const LANGUAGE_NAMES = new Intl.DisplayNames(["en"], { type: "language" });
/** ISO 639-1 codes offered in the picker (any two-letter code may be typed as well). */
const COMMON =
  "ar bg cs da de el es et fi fr he hi hr hu id it ja ko lt lv ms nb nl pl pt ro ru sk sl sv th tr uk vi zh".split(" ");
export const languageName = (code: string) => {
  try {
    return LANGUAGE_NAMES.of(code) ?? code;
  } catch {
    return code;
  }
};

/** The localized texts: "en" first and required (devices without their language get it). */
export function ContentsEditor(props: { value: LanguageContent[]; onChange: (v: LanguageContent[]) => void }) {
  const used = new Set(props.value.map((c) => c.language));
  const update = (i: number, patch: Partial<LanguageContent>) =>
    props.onChange(props.value.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  return (
    <Stack gap="sm">
      {props.value.map((c, i) => (
        <Fieldset
          key={c.language}
          legend={`${languageName(c.language)} (${c.language})${c.language === "en" ? " — fallback, required" : ""}`}
        >
          <Stack gap="xs">
            <TextInput
              label={`Title (${c.language})`}
              maxLength={256}
              value={c.title}
              onChange={(e) => update(i, { title: e.currentTarget.value })}
            />
            <Textarea
              label={`Message (${c.language})`}
              maxLength={2048}
              autosize
              minRows={2}
              value={c.body}
              onChange={(e) => update(i, { body: e.currentTarget.value })}
            />
            {c.language !== "en" && (
              <Group justify="flex-end">
                <Button
                  variant="subtle"
                  color="red"
                  size="xs"
                  onClick={() => props.onChange(props.value.filter((_, j) => j !== i))}
                >
                  Remove {languageName(c.language)}
                </Button>
              </Group>
            )}
          </Stack>
        </Fieldset>
      ))}
      <Select
        label="Add a language"
        placeholder="Pick or type a two-letter code"
        searchable
        value={null}
        data={COMMON.filter((l) => !used.has(l)).map((l) => ({ value: l, label: `${languageName(l)} (${l})` }))}
        onChange={(l) => l && props.onChange([...props.value, { language: l, title: "", body: "" }])}
        w={300}
        maw="100%"
      />
    </Stack>
  );
}

export interface DataPair {
  key: string;
  value: string;
}

/** Custom data: key/value pairs passed to the app's notification handler. */
export function DataEditor(props: { value: DataPair[]; onChange: (v: DataPair[]) => void }) {
  const update = (i: number, patch: Partial<DataPair>) =>
    props.onChange(props.value.map((p, j) => (j === i ? { ...p, ...patch } : p)));
  return (
    <Stack gap="xs">
      {props.value.length === 0 && (
        <Text size="sm" c="dimmed">
          No custom data.
        </Text>
      )}
      {props.value.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their position
        <Group key={i} gap="xs" align="flex-end" wrap="nowrap">
          <TextInput label={`Key ${i + 1}`} value={p.key} onChange={(e) => update(i, { key: e.currentTarget.value })} />
          <TextInput
            label={`Value ${i + 1}`}
            value={p.value}
            onChange={(e) => update(i, { value: e.currentTarget.value })}
            style={{ flex: 1 }}
          />
          <ActionIcon
            variant="default"
            size="lg"
            aria-label={`Remove data pair ${i + 1}`}
            onClick={() => props.onChange(props.value.filter((_, j) => j !== i))}
          >
            ×
          </ActionIcon>
        </Group>
      ))}
      <Group>
        <Button variant="default" size="xs" onClick={() => props.onChange([...props.value, { key: "", value: "" }])}>
          Add data
        </Button>
      </Group>
    </Stack>
  );
}

interface AndroidChannelSelectProps {
  appId: string;
  /** The app's channels; undefined while they load. */
  channels: Schemas["AndroidChannel"][] | undefined;
  error: unknown;
  value: string | null;
  onChange: (id: string | null) => void;
}

/** The optional Android channel of a send; none: the app's default channel. */
export function AndroidChannelSelect(props: AndroidChannelSelectProps) {
  const none = props.channels?.length === 0;
  return (
    <Stack gap="xs">
      <Select
        label="Android channel"
        description={
          none ? (
            <>
              The app has no channels yet: create them under{" "}
              <Anchor size="xs" {...linkProps(`/apps/${props.appId}/android-channels`)}>
                Android channels
              </Anchor>
              .
            </>
          ) : (
            "Android 8 and later show the notification in this channel; other platforms ignore it."
          )
        }
        // An explicit "none" stays reachable from the keyboard, unlike Mantine's clear button.
        data={[
          { value: "", label: "None: the app's default channel" },
          ...(props.channels ?? []).map((c) => ({ value: c.id, label: `${c.name} (${c.id})` })),
        ]}
        value={props.value ?? ""}
        onChange={(id) => props.onChange(id || null)}
        allowDeselect={false}
        disabled={none}
        searchable={(props.channels?.length ?? 0) > 8}
      />
      <ErrorAlert error={props.error} title="Could not load the Android channels" />
    </Stack>
  );
}
