import { Anchor, Stack, Text, Title } from "@mantine/core";
import { linkProps } from "../routing";

export function NotFoundPage() {
  return (
    <Stack>
      <Title order={2}>Not found</Title>
      <Text>This page does not exist.</Text>
      <Anchor {...linkProps("/apps")}>Go to Apps</Anchor>
    </Stack>
  );
}
