import { Button, FileInput, Select, Stack, TextInput } from "@mantine/core";
import { useState, type ReactNode } from "react";
import { type operations, type Schemas, unwrap } from "@herald/client";
import { herald } from "../api/herald";
import { notifySuccess } from "../components/feedback";
import { FormError, SubmitForm, useSubmit } from "../components/submit-form";

type App = Schemas["App"];
type IosConfig = Schemas["IosPlatformConfig"];
type WebConfig = Schemas["WebPlatformConfig"];
/** An APNs key, FCM service account or VAPID subject, as POST …/platform-config takes it. */
type ConfigInput = operations["setPlatformConfig"]["requestBody"]["content"]["application/json"];

/** POST /v1/apps/{id}/platform-config, reporting the API's message on failure. */
function useSave(app: App, onSaved: () => void) {
  const { busy, error, run } = useSubmit();
  const save = (body: ConfigInput, done: string) =>
    run(async () => {
      unwrap(await herald.POST("/v1/apps/{app_id}/platform-config", { params: { path: { app_id: app.id } }, body }));
      notifySuccess(done);
      onSaved();
    });
  return { busy, error, save };
}

function Form(props: { onSubmit: () => void; error?: string; children: ReactNode }) {
  return (
    <SubmitForm onSubmit={props.onSubmit}>
      <Stack gap="sm">
        {props.children}
        <FormError error={props.error} />
      </Stack>
    </SubmitForm>
  );
}

/** Upload an APNs auth key (.p8) with its key id, team id, topic and environment. */
export function ApnsForm({ app, current, onSaved }: { app: App; current: IosConfig | null; onSaved: () => void }) {
  const { busy, error, save } = useSave(app, onSaved);
  const [file, setFile] = useState<File | null>(null);
  const [keyId, setKeyId] = useState(current?.apns_key_id ?? "");
  const [teamId, setTeamId] = useState(current?.apns_team_id ?? "");
  const [topic, setTopic] = useState(current?.apns_topic ?? "");
  const [environment, setEnvironment] = useState(current?.apns_environment ?? "production");
  const [problem, setProblem] = useState<string>();

  const submit = async () => {
    setProblem(undefined);
    if (!file || !keyId.trim() || !teamId.trim())
      return setProblem("Choose the .p8 file and fill in key id and team id.");
    const ok = await save(
      {
        platform: "ios",
        apns_p8_key: await file.text(),
        apns_key_id: keyId.trim(),
        apns_team_id: teamId.trim(),
        ...(topic.trim() ? { apns_topic: topic.trim() } : {}),
        apns_environment: environment,
      },
      "APNs key stored",
    );
    if (ok) setFile(null);
  };

  return (
    <Form onSubmit={() => void submit()} error={problem ?? error}>
      <FileInput
        label="APNs key (.p8)"
        placeholder="Choose AuthKey_XXXXXXXXXX.p8"
        accept=".p8,application/pkcs8,text/plain"
        value={file}
        onChange={setFile}
        clearable
        required
      />
      <TextInput label="Key id" value={keyId} onChange={(e) => setKeyId(e.currentTarget.value)} required />
      <TextInput label="Team id" value={teamId} onChange={(e) => setTeamId(e.currentTarget.value)} required />
      <TextInput
        label="Topic"
        description={`Defaults to the bundle id (${app.bundle_id})`}
        value={topic}
        onChange={(e) => setTopic(e.currentTarget.value)}
      />
      <Select
        label="Environment"
        data={[
          { value: "production", label: "Production" },
          { value: "sandbox", label: "Sandbox (development builds)" },
        ]}
        value={environment}
        onChange={(v) => v && setEnvironment(v as typeof environment)}
        allowDeselect={false}
      />
      <Button type="submit" loading={busy}>
        Upload APNs key
      </Button>
    </Form>
  );
}

/** Upload a Firebase service-account JSON file. */
export function FcmForm({ app, onSaved }: { app: App; onSaved: () => void }) {
  const { busy, error, save } = useSave(app, onSaved);
  const [file, setFile] = useState<File | null>(null);
  const [problem, setProblem] = useState<string>();

  const submit = async () => {
    setProblem(undefined);
    if (!file) return setProblem("Choose the service-account JSON file.");
    if (await save({ platform: "android", fcm_service_account: await file.text() }, "FCM service account stored")) {
      setFile(null);
    }
  };

  return (
    <Form onSubmit={() => void submit()} error={problem ?? error}>
      <FileInput
        label="Service account (JSON)"
        placeholder="Choose the key file from the Firebase console"
        accept=".json,application/json"
        value={file}
        onChange={setFile}
        clearable
        required
      />
      <Button type="submit" loading={busy}>
        Upload service account
      </Button>
    </Form>
  );
}

/** Generate a VAPID key pair on the server (the private key never leaves it). */
export function VapidForm({ app, current, onSaved }: { app: App; current: WebConfig | null; onSaved: () => void }) {
  const { busy, error, save } = useSave(app, onSaved);
  const [subject, setSubject] = useState(current?.vapid_subject ?? "");
  const [problem, setProblem] = useState<string>();

  const submit = async () => {
    setProblem(undefined);
    if (!/^(mailto:|https:)/.test(subject.trim())) return setProblem("The subject is a mailto: or https: URL.");
    await save({ platform: "web", vapid_subject: subject.trim() }, "VAPID keys generated");
  };

  return (
    <Form onSubmit={() => void submit()} error={problem ?? error}>
      <TextInput
        label="VAPID subject"
        description="A contact for push services: mailto: or https: URL"
        placeholder="mailto:ops@example.com"
        value={subject}
        onChange={(e) => setSubject(e.currentTarget.value)}
        required
      />
      <Button type="submit" loading={busy}>
        {current ? "Generate new VAPID keys" : "Generate VAPID keys"}
      </Button>
    </Form>
  );
}
