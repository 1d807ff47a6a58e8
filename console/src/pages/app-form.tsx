import { Modal, Select, Stack, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { errorMessage, herald } from "../api/herald";
import { FormActions, FormError } from "../components/submit-form";
import { type Platform, PLATFORM_OPTIONS } from "./platforms";

type App = Schemas["App"];

interface AppFormProps {
  /** The app to edit; a new one when undefined. */
  app?: App;
  opened: boolean;
  onClose: () => void;
  onSaved: (app: App) => void;
}

/** Create or edit an app: name, primary platform and bundle id, as POST/PUT /v1/apps take them. */
export function AppForm({ app, opened, onClose, onSaved }: AppFormProps) {
  const [error, setError] = useState<string>();
  const form = useForm({
    mode: "controlled",
    initialValues: {
      name: app?.name ?? "",
      platform: (app?.platform ?? "ios") as Platform,
      bundle_id: app?.bundle_id ?? "",
    },
    validate: {
      name: (v) => (v.trim() ? null : "Give the app a name"),
      bundle_id: (v) =>
        /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/.test(v.trim())
          ? null
          : "Letters, digits, dots, dashes and underscores, starting with a letter or digit",
    },
  });

  const submit = form.onSubmit(async (values) => {
    setError(undefined);
    const body = { name: values.name.trim(), platform: values.platform, bundle_id: values.bundle_id.trim() };
    try {
      const saved = unwrap(
        app
          ? await herald.PUT("/v1/apps/{app_id}", { params: { path: { app_id: app.id } }, body })
          : await herald.POST("/v1/apps", { body }),
      );
      form.reset();
      onSaved(saved);
    } catch (err) {
      setError(errorMessage(err));
    }
  });

  return (
    <Modal opened={opened} onClose={onClose} title={app ? `Edit ${app.name}` : "New app"} centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <TextInput label="Name" required data-autofocus {...form.getInputProps("name")} />
          <Select
            label="Platform"
            required
            data={PLATFORM_OPTIONS}
            allowDeselect={false}
            {...form.getInputProps("platform")}
          />
          <TextInput
            label="Bundle id"
            description="iOS bundle id, Android package name, or any stable id for a web app"
            required
            placeholder="com.example.app"
            {...form.getInputProps("bundle_id")}
          />
          <FormError error={error} />
          <FormActions onCancel={onClose} busy={form.submitting} submit={app ? "Save" : "Create app"} />
        </Stack>
      </form>
    </Modal>
  );
}
