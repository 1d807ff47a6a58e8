import {
  Button,
  Group,
  Modal,
  MultiSelect,
  Select,
  SimpleGrid,
  Stack,
  TagsInput,
  Text,
  TextInput,
} from "@mantine/core";
import { useEffect, useMemo, useState } from "react";
import { DEVICE_SCAN_LIMIT, scanDevices } from "../api/all-devices";
import { api, errorMessage } from "../api/client";
import type { App, Device, Platform, Segment, SegmentRule } from "../api/types";
import { notifySuccess } from "../components/feedback";
import { TIME_ZONES } from "../timezones";
import { PLATFORM_OPTIONS } from "./platforms";
import { compactRule, matchesRule } from "./segment-rule";

/** The rule builder with a live count of the devices the rule selects now. */
export function SegmentBuilder({ app, onClose, onSaved }: { app: App; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState("");
  const [rule, setRule] = useState<SegmentRule>({});
  const [scan, setScan] = useState<{ devices: Device[]; total: number }>();
  const [scanError, setScanError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  useEffect(() => {
    const abort = new AbortController();
    scanDevices(app.id, abort.signal).then(setScan, setScanError);
    return () => abort.abort();
  }, [app.id]);

  const compact = useMemo(() => compactRule(rule), [rule]);
  const empty = Object.keys(compact).length === 0;
  const count = useMemo(() => scan?.devices.filter((d) => matchesRule(d, compact)).length, [scan, compact]);
  const partial = scan !== undefined && scan.total > scan.devices.length;
  const set = <K extends keyof SegmentRule>(k: K, v: SegmentRule[K]) => setRule((r) => ({ ...r, [k]: v }));

  const save = async () => {
    setError(undefined);
    if (!name.trim()) return setError("Give the segment a name.");
    if (empty) return setError("Set at least one condition.");
    setBusy(true);
    try {
      const saved = await api<Segment>("POST", "/v1/segments", { app_id: app.id, name: name.trim(), rule: compact });
      notifySuccess(`Segment ${saved.name} saved: ${saved.preview_count ?? 0} devices match now`);
      onSaved();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal opened onClose={onClose} title={`New segment of ${app.name}`} size="xl" centered>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
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
            {scanError
              ? `Preview unavailable: ${errorMessage(scanError)}`
              : count === undefined
                ? "Counting devices…"
                : empty
                  ? "Set a condition to see how many devices match."
                  : `${count.toLocaleString()} ${count === 1 ? "device matches" : "devices match"} now${
                      partial ? ` (of the first ${DEVICE_SCAN_LIMIT.toLocaleString()} devices)` : ""
                    }`}
          </Text>
          <Text size="xs" c="dimmed">
            Only opted-in devices with a valid token count. The exact count is taken again when a send starts.
          </Text>
          {error && (
            <Text role="alert" c="red.8" size="sm">
              {error}
            </Text>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={busy}>
              Save segment
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
