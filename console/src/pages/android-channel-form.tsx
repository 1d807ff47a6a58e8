import { Alert, ColorInput, Modal, Select, SimpleGrid, Stack, Switch, Textarea, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { type Schemas, unwrap } from "@herald/client";
import { herald } from "../api/herald";
import { ErrorAlert, notifySuccess } from "../components/feedback";
import { FormActions } from "../components/submit-form";
import {
  type ChannelValues,
  changedSettings,
  channelRules,
  DESCRIPTION_MAX,
  IMPORTANCE_OPTIONS,
  NAME_MAX,
  NEW_CHANNEL,
  settingsOf,
  valuesOf,
} from "./android-channel-values";

interface ChannelFormProps {
  app: Schemas["App"];
  /** The channel to edit; a new one when undefined. */
  channel?: Schemas["AndroidChannel"];
  onClose: () => void;
  onSaved: () => void;
}

/** Create or edit an Android notification channel of an app. */
export function AndroidChannelForm({ app, channel, onClose, onSaved }: ChannelFormProps) {
  const [error, setError] = useState<unknown>();
  const form = useForm<ChannelValues>({
    mode: "controlled",
    initialValues: channel ? valuesOf(channel) : NEW_CHANNEL,
    validate: channelRules,
  });
  const { vibration, lights } = form.getValues();

  const submit = form.onSubmit(async (values) => {
    setError(undefined);
    const settings = settingsOf(values);
    try {
      if (!channel) {
        const created = unwrap(
          await herald.POST("/v1/apps/{app_id}/android-channels", {
            params: { path: { app_id: app.id } },
            body: { id: values.id.trim(), ...settings },
          }),
        );
        notifySuccess(`Channel ${created.name} created`);
      } else {
        const changes = changedSettings(channel, settings);
        // PATCH needs at least one field; an unchanged form has nothing to send.
        if (Object.keys(changes).length > 0) {
          unwrap(
            await herald.PATCH("/v1/apps/{app_id}/android-channels/{channel_id}", {
              params: { path: { app_id: app.id, channel_id: channel.id } },
              body: changes,
            }),
          );
          notifySuccess(`Channel ${settings.name} saved`);
        }
      }
      onSaved();
    } catch (err) {
      setError(err);
    }
  });

  return (
    <Modal
      opened
      onClose={onClose}
      title={channel ? `Edit channel ${channel.name}` : `New Android channel for ${app.name}`}
      size="lg"
      centered
    >
      <form onSubmit={submit} noValidate>
        <Stack>
          {channel && (
            <Alert color="blue" variant="light" role="note" title="Devices that already have this channel">
              Android lets an app change only the name and description of a channel it has created: the user owns its
              other settings from then on. Other changes reach only devices that create the channel afterwards, such as
              new installs.
            </Alert>
          )}
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <TextInput
              label="Channel ID"
              required={!channel}
              readOnly={!!channel}
              variant={channel ? "filled" : "default"}
              description={channel ? "Fixed once created" : "Letters, digits, _ . or -; cannot be changed later"}
              maxLength={64}
              data-autofocus={channel ? undefined : true}
              {...form.getInputProps("id")}
            />
            <TextInput
              label="Name"
              required
              description="Shown in the app's notification settings"
              maxLength={NAME_MAX}
              data-autofocus={channel ? true : undefined}
              {...form.getInputProps("name")}
            />
          </SimpleGrid>
          <Textarea
            label="Description"
            autosize
            minRows={2}
            maxLength={DESCRIPTION_MAX}
            {...form.getInputProps("description")}
          />
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Select
              label="Importance"
              description="How much its notifications may interrupt"
              data={IMPORTANCE_OPTIONS}
              allowDeselect={false}
              {...form.getInputProps("importance")}
            />
            <TextInput
              label="Sound"
              description='A res/raw sound of the app, or "default"'
              placeholder="System default"
              maxLength={64}
              {...form.getInputProps("sound")}
            />
          </SimpleGrid>
          <Switch
            label="Vibration"
            description="Notifications vibrate the device"
            {...form.getInputProps("vibration", { type: "checkbox" })}
          />
          {vibration && (
            <TextInput
              label="Vibration pattern (ms)"
              description="Optional: off, on, off, on, … in milliseconds; empty: the device's pattern"
              placeholder="0, 250, 250, 250"
              {...form.getInputProps("pattern")}
            />
          )}
          <Switch
            label="Lights"
            description="The notification light blinks"
            {...form.getInputProps("lights", { type: "checkbox" })}
          />
          {lights && (
            <ColorInput
              label="Light color"
              description="Optional; empty: the device's color"
              placeholder="#RRGGBB"
              format="hex"
              withEyeDropper={false}
              {...form.getInputProps("color")}
            />
          )}
          <Switch
            label="Badge"
            description="Notifications show a badge on the app's launcher icon"
            {...form.getInputProps("badge", { type: "checkbox" })}
          />
          <TextInput
            label="Group"
            description="Id of the channel group the app shows this channel in"
            placeholder="None"
            maxLength={64}
            {...form.getInputProps("group")}
          />
          <ErrorAlert error={error} title={channel ? "The channel was not saved" : "The channel was not created"} />
          <FormActions onCancel={onClose} busy={form.submitting} submit={channel ? "Save channel" : "Create channel"} />
        </Stack>
      </form>
    </Modal>
  );
}
