import { Modal, MultiSelect, Select, SimpleGrid, Stack, TagsInput, Text, TextInput } from "@mantine/core";
import { useDebouncedValue } from "@mantine/hooks";
import { useEffect, useMemo, useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { errorMessage, herald } from "../api/herald";
import { notifySuccess } from "../components/feedback";
import { FormActions, FormError, SubmitForm, useSubmit } from "../components/submit-form";
import { TIME_ZONES } from "../timezones";
import { type Platform, PLATFORM_OPTIONS } from "./platforms";
import { compactRule, type SegmentRule } from "./segment-rule";

type App = Schemas["App"];

/** The rule builder with a live count of the devices the rule selects now. */
export function SegmentBuilder({ app, onClose, onSaved }: { app: App; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState("");
  const [rule, setRule] = useState<SegmentRule>({});
  const { busy, error, setError, run } = useSubmit();

  const compact = useMemo(() => compactRule(rule), [rule]);
  const empty = Object.keys(compact).length === 0;
  const preview = usePreviewCount(app.id, compact);
  const set = <K extends keyof SegmentRule>(k: K, v: SegmentRule[K]) => setRule((r) => ({ ...r, [k]: v }));

  const save = () => {
    if (!name.trim()) return setError("Give the segment a name.");
    if (empty) return setError("Set at least one condition.");
    return run(async () => {
      const saved = unwrap(
        await herald.POST("/v1/segments", { body: { app_id: app.id, name: name.trim(), rule: compact } }),
      );
      notifySuccess(`Segment ${saved.name} saved: ${saved.preview_count ?? 0} devices match now`);
      onSaved();
    });
  };

  return (
    <Modal opened onClose={onClose} title={`New segment of ${app.name}`} size="xl" centered>
      <SubmitForm onSubmit={save}>
        <Stack>
          <TextInput
            label="Name"
            required
            data-autofocus
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
          />
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TagsInput label="Has any of these tags" value={rule.tags_any ?? []} onChange={(v) => set("tags_any", v)} />
            <TagsInput label="Has all of these tags" value={rule.tags_all ?? []} onChange={(v) => set("tags_all", v)} />
            <TagsInput
              label="Has none of these tags"
              value={rule.tags_none ?? []}
              onChange={(v) => set("tags_none", v)}
            />
            <MultiSelect
              label="Platforms"
              data={PLATFORM_OPTIONS}
              value={rule.platforms ?? []}
              onChange={(v) => set("platforms", v as Platform[])}
            />
            <TagsInput
              label="Languages"
              description="ISO 639-1 codes, e.g. en, de"
              value={rule.languages ?? []}
              onChange={(v) => set("languages", v)}
            />
            <TagsInput label="App versions" value={rule.app_versions ?? []} onChange={(v) => set("app_versions", v)} />
            <MultiSelect
              label="Time zones"
              data={TIME_ZONES}
              searchable
              limit={50}
              value={rule.timezones ?? []}
              onChange={(v) => set("timezones", v)}
            />
            <Select
              label="External id"
              data={[
                { value: "", label: "Any" },
                { value: "yes", label: "Has an external id" },
                { value: "no", label: "Has no external id" },
              ]}
              value={rule.has_external_id === undefined ? "" : rule.has_external_id ? "yes" : "no"}
              onChange={(v) => set("has_external_id", v === "yes" ? true : v === "no" ? false : undefined)}
              allowDeselect={false}
            />
          </SimpleGrid>
          <Text aria-live="polite" fw={600} data-testid="segment-preview">
            {empty
              ? "Set a condition to see how many devices match."
              : preview === undefined
                ? "Counting devices…"
                : "error" in preview
                  ? `Preview unavailable: ${errorMessage(preview.error)}`
                  : `${preview.count.toLocaleString()} ${preview.count === 1 ? "device matches" : "devices match"} now`}
          </Text>
          <Text size="xs" c="dimmed">
            Only opted-in devices with a valid token count. The exact count is taken again when a send starts.
          </Text>
          <FormError error={error} />
          <FormActions onCancel={onClose} busy={busy} submit="Save segment" />
        </Stack>
      </SubmitForm>
    </Modal>
  );
}

type Preview = { count: number } | { error: unknown };

/**
 * The API's count of the devices a rule selects now (POST /v1/segments/preview), asked
 * again once the rule has stopped changing for a moment; undefined while counting.
 */
function usePreviewCount(appId: string, rule: SegmentRule): Preview | undefined {
  const [asked] = useDebouncedValue(JSON.stringify(rule), 300);
  const [preview, setPreview] = useState<{ for: string; value: Preview }>();
  useEffect(() => {
    if (asked === "{}") return;
    let stale = false;
    herald
      .POST("/v1/segments/preview", { body: { app_id: appId, rule: JSON.parse(asked) as SegmentRule } })
      .then(unwrap)
      .then(
        ({ count }) => !stale && setPreview({ for: asked, value: { count } }),
        (error: unknown) => !stale && setPreview({ for: asked, value: { error } }),
      );
    return () => {
      stale = true;
    };
  }, [appId, asked]);
  // A count of an older rule is not shown as the count of this one.
  return preview?.for === JSON.stringify(rule) ? preview.value : undefined;
}
