import { AppShell, Burger, Button, Group, Menu, NavLink, Text, Title, UnstyledButton } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import type { ReactNode } from "react";
import { useSession } from "../auth/session-context";
import { linkProps, useLocation } from "../routing";
import { AppPicker } from "./app-picker";

/** The sections, named as the API and the docs name them. */
export const SECTIONS = [
  { path: "/apps", label: "Apps", perApp: false },
  { path: "/api-keys", label: "API keys", perApp: true },
  { path: "/devices", label: "Devices", perApp: true },
  { path: "/segments", label: "Segments", perApp: true },
  { path: "/campaigns", label: "Campaigns", perApp: true },
  { path: "/members", label: "Members", perApp: false },
] as const;

export function Shell({ children }: { children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure();
  const { path } = useLocation();
  const { me, signOut } = useSession();
  const section = SECTIONS.find((s) => path === s.path || path.startsWith(`${s.path}/`));

  return (
    <AppShell
      header={{ height: 60 }}
      navbar={{ width: 220, breakpoint: "sm", collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={opened ? "Close navigation" : "Open navigation"}
            />
            <Title order={1} size="h3">
              Herald
            </Title>
          </Group>
          <Group gap="sm" wrap="nowrap">
            {section?.perApp && <AppPicker />}
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <UnstyledButton aria-label={`Account: ${me.user.email}`} p={4}>
                  <Text size="sm" fw={600} visibleFrom="xs">
                    {me.user.email}
                  </Text>
                  <Text size="sm" fw={600} hiddenFrom="xs">
                    Account
                  </Text>
                </UnstyledButton>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Label>
                  {me.org.name} · {me.role}
                </Menu.Label>
                <Menu.Item onClick={() => void signOut()}>Sign out</Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Console sections">
        {SECTIONS.map((s) => (
          <NavLink
            key={s.path}
            component="a"
            label={s.label}
            active={section?.path === s.path}
            aria-current={section?.path === s.path ? "page" : undefined}
            {...linkProps(s.path)}
            onClickCapture={close}
          />
        ))}
        <Button variant="subtle" mt="auto" onClick={() => void signOut()} hiddenFrom="sm">
          Sign out
        </Button>
      </AppShell.Navbar>
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}
