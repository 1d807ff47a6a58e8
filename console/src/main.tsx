import "@mantine/core/styles.css";
import "@mantine/notifications/styles.css";
import { createTheme, MantineProvider } from "@mantine/core";
import { Notifications } from "@mantine/notifications";
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { Routes } from "./routes";
import { SessionProvider } from "./auth/session-context";
import { CurrentAppProvider } from "./layout/current-app";
import { shareStyleNonce, styleNonce } from "./nonce";

// Darker primary shades keep text on buttons and links above WCAG AA contrast.
const theme = createTheme({ primaryColor: "blue", primaryShade: 8, defaultRadius: "sm" });

shareStyleNonce();

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light" getStyleNonce={styleNonce}>
      <Notifications position="top-right" />
      <SessionProvider>
        <CurrentAppProvider>
          <Routes />
        </CurrentAppProvider>
      </SessionProvider>
    </MantineProvider>
  </StrictMode>,
);
