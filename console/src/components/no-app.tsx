import { Anchor, Text } from "@mantine/core";
import { linkProps } from "../routing";

/** Shown by the per-app pages while the organization has no app. */
export function NoApp() {
  return (
    <Text>
      There is no app yet. Create one under <Anchor {...linkProps("/apps")}>Apps</Anchor>.
    </Text>
  );
}
