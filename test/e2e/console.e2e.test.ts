import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SimAdminClient } from "@herald/provider-sim/admin-client";
import { ensureConsoleBuilt } from "../../scripts/console-build.mjs";
import { launchChromium, publicAddress, type Browser, type PublicAddress } from "../support/browser.js";
import { makeApnsKey, makeServiceAccount } from "../support/credential-fixtures.js";
import { mapLimit, waitForCampaign } from "../support/herald-client.js";
import { restClient, startStack, type Stack } from "../support/stack.js";

// The admin console in Chromium against the whole stack and the provider simulator: sign
// in with the bootstrap admin through the OAuth code + PKCE flow, then what an operator
// does on a first day, each step through the UI (devices through REST, as apps do).
const SHOTS = path.resolve(import.meta.dirname, "../../test-results/console");
const DEVICES = 12;
const ADMIN_EMAIL = "admin@console-e2e.example";
const ADMIN_PASSWORD = randomBytes(15)
  .toString("base64")
  .replace(/[^A-Za-z0-9]/g, "x")
  .slice(0, 20);

let stack: Stack;
let address: PublicAddress;
let browser: Browser;
let page: Page;
let sim: SimAdminClient;
const cspViolations: string[] = [];
const pageErrors: string[] = [];

const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

/** Picks `option` in the Mantine Select labelled `label`, typing first when it is searchable. */
async function choose(label: string, option: string, type?: string) {
  // A required field's accessible name ends with Mantine's " *".
  const input = page.getByRole("combobox", { name: new RegExp(`^${label.replace(/[()]/g, "\\$&")}( \\*)?$`) });
  await input.click();
  if (type) await input.fill(type);
  await page.getByRole("option", { name: option, exact: true }).click();
}

async function openSection(name: string) {
  await page.getByRole("navigation", { name: "Console sections" }).getByRole("link", { name, exact: true }).click();
  await expect.poll(() => page.getByRole("heading", { level: 2, name, exact: true }).isVisible()).toBe(true);
}

beforeAll(async () => {
  ensureConsoleBuilt();
  mkdirSync(SHOTS, { recursive: true });
  address = await publicAddress();
  stack = await startStack(inject("infra"), {
    env: {
      LOG_LEVEL: "info",
      HERALD_BOOTSTRAP_ADMIN_EMAIL: ADMIN_EMAIL,
      HERALD_BOOTSTRAP_ADMIN_PASSWORD: ADMIN_PASSWORD,
    },
    envFor: {
      gateway: { HERALD_PUBLIC_URL: address.url },
      campaign: { SCHEDULER_INTERVAL_MS: "200" },
    },
  });
  address.forwardTo(stack.gatewayUrls[0]!);
  sim = new SimAdminClient(stack.simAdminUrl);
  browser = await launchChromium();
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: address.url });
  page = await browser.context.newPage();
  page.setDefaultTimeout(15_000);
  page.on("console", (m) => {
    if (/Content[- ]Security[- ]Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  page.on("pageerror", (e) => pageErrors.push(e.message));
});

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await address?.close();
});

describe("console", () => {
  let appId: string;
  let apiKey: string;
  let vapidPublicKey: string;

  it("signs in with the bootstrap admin through the authorization code + PKCE flow", async () => {
    await page.goto(`${address.url}/console`);
    await page.getByLabel("Email").fill(ADMIN_EMAIL);
    await page.getByLabel("Password").fill(ADMIN_PASSWORD);
    await shot("01-sign-in");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${address.url}/console/apps`);
    await expect.poll(() => page.getByRole("heading", { name: "Apps", level: 2 }).isVisible()).toBe(true);
    const nav = page.getByRole("navigation", { name: "Console sections" });
    for (const name of ["Apps", "API keys", "Devices", "Segments", "Campaigns", "Members"]) {
      expect(await nav.getByRole("link", { name, exact: true }).isVisible(), name).toBe(true);
    }
    // Tokens live in sessionStorage, never in localStorage.
    expect(await page.evaluate(() => Object.keys(localStorage))).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.getItem("herald.console.tokens"))).toContain("accessToken");
  });

  it("creates an app with New app and a Name", async () => {
    await page.getByRole("button", { name: "New app" }).click();
    await page.getByLabel("Name").fill("Console web app");
    await choose("Platform", "Web");
    await page.getByLabel("Bundle id").fill("com.example.console");
    await page.getByRole("button", { name: "Create app" }).click();
    await page.waitForURL(/\/console\/apps\/[0-9a-f-]{36}$/);
    appId = page.url().split("/").pop()!;
    await expect.poll(() => page.getByRole("heading", { name: "Console web app", level: 2 }).isVisible()).toBe(true);
  });

  it("uploads APNs and FCM credentials as files, generates VAPID keys and shows fingerprints only", async () => {
    const apns = makeApnsKey();
    const ios = page.getByRole("region", { name: "APNs (iOS)" });
    await ios.locator('input[type="file"]').setInputFiles({
      name: `AuthKey_${apns.keyId}.p8`,
      mimeType: "application/pkcs8",
      buffer: Buffer.from(apns.p8),
    });
    await ios.getByLabel("Key id").fill(apns.keyId);
    await ios.getByLabel("Team id").fill(apns.teamId);
    await ios.getByRole("button", { name: "Upload APNs key" }).click();
    await expect.poll(() => ios.getByTestId("fingerprint").textContent()).toMatch(/^[0-9a-f]{32}$/);

    const account = makeServiceAccount();
    const android = page.getByRole("region", { name: "FCM (Android)" });
    await android.locator('input[type="file"]').setInputFiles({
      name: "service-account.json",
      mimeType: "application/json",
      buffer: Buffer.from(account.json),
    });
    await android.getByRole("button", { name: "Upload service account" }).click();
    await expect.poll(() => android.getByTestId("fingerprint").textContent()).toMatch(/^[0-9a-f]{32}$/);

    const web = page.getByRole("region", { name: "Web Push (VAPID)" });
    await web.getByLabel("VAPID subject").fill("mailto:ops@example.com");
    await web.getByRole("button", { name: "Generate VAPID keys" }).click();
    await expect.poll(() => web.getByTestId("fingerprint").textContent()).toMatch(/^[0-9a-f]{32}$/);
    await shot("02-credentials");

    const html = await page.content();
    expect(html).not.toContain("PRIVATE KEY");
    expect(html).toContain(account.clientEmail);
  });

  it("creates, lists, edits and deletes Android channels from the app's page", async () => {
    await page.getByRole("link", { name: "Android channels", exact: true }).click();
    await page.waitForURL(`${address.url}/console/apps/${appId}/android-channels`);
    await expect.poll(() => page.getByRole("heading", { level: 2, name: "Android channels" }).isVisible()).toBe(true);
    await expect.poll(() => page.getByText("No Android channels for Console web app yet.").isVisible()).toBe(true);

    await page.getByRole("button", { name: "New channel" }).click();
    const form = page.getByRole("dialog", { name: "New Android channel for Console web app" });
    await form.getByLabel("Channel ID").fill("news");
    await form.getByLabel("Name").fill("Breaking news");
    await form.getByLabel("Description").fill("Headlines as they happen.");
    await choose("Importance", "High — sound and heads-up");
    await form.getByLabel("Sound").fill("chime");
    // Switches work from the keyboard.
    const vibration = form.getByRole("switch", { name: "Vibration" });
    await vibration.focus();
    await page.keyboard.press("Space");
    expect(await vibration.isChecked()).toBe(true);
    await form.getByLabel("Vibration pattern (ms)").fill("0, 250, 250, 250");
    await form.getByRole("switch", { name: "Lights" }).focus();
    await page.keyboard.press("Space");
    await form.getByLabel("Light color").fill("#ff6600");
    await form.getByLabel("Group").fill("media");
    expect(await form.getByRole("switch", { name: "Badge" }).isChecked()).toBe(true);
    await shot("02a-android-channel-form");
    await form.getByRole("button", { name: "Create channel" }).click();
    const row = page.getByRole("row").filter({ has: page.getByRole("cell", { name: "news", exact: true }) });
    await expect.poll(() => row.isVisible()).toBe(true);
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells.slice(0, 8)).toEqual([
      "news",
      "Breaking newsHeadlines as they happen.",
      "High",
      "chime",
      "0, 250, 250, 250 ms",
      "#ff6600",
      "Yes",
      "media",
    ]);

    // Editing: the id stays fixed, the note says what devices keep, and only the change is sent.
    await row.getByRole("button", { name: "Edit channel Breaking news" }).click();
    const edit = page.getByRole("dialog", { name: "Edit channel Breaking news" });
    expect(await edit.getByText("Android lets an app change only the name and description").isVisible()).toBe(true);
    expect(await edit.getByLabel("Channel ID").isEditable()).toBe(false);
    await edit.getByLabel("Name").fill("Breaking news daily");
    const patch = page.waitForResponse((r) => r.request().method() === "PATCH");
    await edit.getByRole("button", { name: "Save channel" }).click();
    const patched = await patch;
    expect(patched.request().postDataJSON()).toEqual({ name: "Breaking news daily" });
    expect(patched.status(), await patched.text()).toBe(200);
    await expect
      .poll(() => row.getByRole("cell").nth(1).textContent())
      .toBe("Breaking news dailyHeadlines as they happen.");
    expect(await row.getByRole("cell").nth(5).textContent()).toBe("#ff6600");

    await page.getByRole("button", { name: "New channel" }).click();
    await page.getByLabel("Channel ID").fill("promo");
    await page.getByLabel("Name").fill("Promotions");
    await page.getByRole("button", { name: "Create channel" }).click();
    await expect.poll(() => page.getByRole("cell", { name: "promo", exact: true }).isVisible()).toBe(true);
    await shot("02b-android-channels");
    await page.getByRole("button", { name: "Delete channel Promotions" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete channel" }).click();
    await expect.poll(() => page.getByRole("cell", { name: "promo", exact: true }).count()).toBe(0);
    expect(await page.getByText("1 of 100 channels").isVisible()).toBe(true);
  });

  it("creates an API key and shows its secret exactly once", async () => {
    await openSection("API keys");
    await page.getByRole("button", { name: "New API key" }).click();
    await page.getByLabel("Name").fill("backend");
    await choose("Scope", "The whole organization");
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.getByTestId("secret-value");
    await expect.poll(() => secret.textContent()).toMatch(/^hk_live_/);
    apiKey = (await secret.textContent())!;
    expect(await page.getByText("This is the only time it is shown").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Copy Secret of backend" }).click();
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(apiKey);
    await shot("03-api-key-once");
    await page.getByRole("button", { name: "I have copied it" }).click();
    await expect.poll(() => page.getByRole("cell", { name: "backend", exact: true }).isVisible()).toBe(true);
    expect(await page.content()).not.toContain(apiKey);
    await page.reload();
    await expect.poll(() => page.getByRole("cell", { name: "backend", exact: true }).isVisible()).toBe(true);
    expect(await page.content()).not.toContain(apiKey);
  });

  it("lists and filters devices registered through REST with that key", async () => {
    const api = restClient(address.url, apiKey);
    const configs = await api("GET", `/v1/apps/${appId}/platform-config`);
    expect(configs.status, configs.text).toBe(200);
    vapidPublicKey = configs.body.web.vapid_public_key;
    const subs = await sim.createWebPushSubscriptions(vapidPublicKey, DEVICES);
    await mapLimit(subs, 8, async (sub, i) => {
      const res = await api("POST", "/v1/devices/register", {
        app_id: appId,
        push_token: JSON.stringify(sub.subscription),
        platform: "web",
        language: i % 2 ? "de" : "en",
        external_id: `user-${i}`,
        tags: i % 3 === 0 ? ["vip"] : [],
      });
      expect(res.status, res.text).toBe(200);
    });
    await openSection("Devices");
    await expect.poll(() => page.getByText(`${DEVICES} in total`).isVisible()).toBe(true);
    await page.getByLabel("External id").fill("user-11");
    await expect.poll(() => page.getByText("1 in total").isVisible()).toBe(true);
    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.getByLabel("Language").fill("de");
    await expect.poll(() => page.getByText(`${DEVICES / 2} in total`).isVisible()).toBe(true);
    await shot("04-devices");
    await page.getByRole("button", { name: "Clear filters" }).click();
  });

  it("builds a segment with a live count", async () => {
    await openSection("Segments");
    await page.getByRole("button", { name: "New segment" }).click();
    await page.getByLabel("Name").fill("VIPs");
    const tags = page.getByRole("combobox", { name: "Has any of these tags" });
    await tags.fill("vip");
    await tags.press("Enter");
    await expect.poll(() => page.getByTestId("segment-preview").textContent()).toContain("4 devices match now");
    await shot("05-segment-builder");
    await page.getByRole("button", { name: "Save segment" }).click();
    await expect.poll(() => page.getByRole("cell", { name: "VIPs", exact: true }).isVisible()).toBe(true);
  });

  it("composes a localized campaign, sends it to the simulator and watches it complete on the chart", async () => {
    const marker = randomUUID();
    await openSection("Campaigns");
    await page.getByRole("button", { name: "New campaign" }).click();
    await page.getByLabel("Campaign name").fill("Console launch");
    await page.getByLabel("Title (en)").fill("Hello");
    await page.getByLabel("Message (en)").fill("From the console");
    await choose("Add a language", "German (de)", "Germ");
    await page.getByLabel("Title (de)").fill("Hallo");
    await page.getByLabel("Message (de)").fill("Aus der Konsole");
    await page.getByRole("button", { name: "Add data" }).click();
    await page.getByLabel("Key 1").fill("marker");
    await page.getByLabel("Value 1").fill(marker);
    await choose("Priority", "High (may wake the device)");
    await choose("Android channel", "Breaking news daily (news)");
    await shot("06-composer");
    await page.getByRole("button", { name: "Send now" }).click();
    await page.waitForURL(/\/console\/campaigns\/[0-9a-f-]{36}$/);
    const campaignId = page.url().split("/").pop()!;
    await expect.poll(() => page.getByTestId("campaign-status").textContent(), { timeout: 60_000 }).toBe("completed");
    await expect.poll(() => page.getByTestId("stat-delivered").textContent()).toBe(String(DEVICES));
    const chart = page.getByTestId("delivery-chart");
    await expect.poll(() => chart.locator(".recharts-area").count()).toBeGreaterThan(0);
    expect(await page.getByRole("row", { name: "Android channel news" }).isVisible()).toBe(true);
    await shot("07-campaign-completed");
    const sent = await restClient(address.url, apiKey)("GET", `/v1/campaigns/${campaignId}`);
    expect(sent.body.android_channel_id).toBe("news");

    const deliveries = (await sim.allDeliveries({ platform: "webpush" })).map((d) => JSON.parse(d.payload));
    const ours = deliveries.filter((p) => p.data?.marker === marker);
    expect(ours).toHaveLength(DEVICES);
    expect(ours.filter((p) => p.title === "Hallo")).toHaveLength(DEVICES / 2);
  });

  it("lists the campaign's deliveries with external ids, filters them and exports them", async () => {
    // Still on the completed campaign's page.
    const campaignId = page.url().split("/").pop()!;
    const section = page.getByRole("region", { name: "Deliveries" });
    const table = section.getByRole("table", { name: "Deliveries" });
    await expect.poll(() => section.getByText(`${DEVICES} in total`).isVisible()).toBe(true);
    expect(await table.getByRole("row").count()).toBe(DEVICES + 1);
    const externalIds = await table.locator("tbody tr td:nth-child(2)").allTextContents();
    expect(externalIds.sort()).toEqual(Array.from({ length: DEVICES }, (_, i) => `user-${i}`).sort());
    expect(new Set(await table.locator("tbody tr td:nth-child(4)").allTextContents())).toEqual(new Set(["delivered"]));

    await choose("Outcome", "Failed");
    await expect.poll(() => section.getByText("No delivery matches these filters.").isVisible()).toBe(true);
    await choose("Outcome", "Delivered");
    await choose("Platform", "Web");
    await expect.poll(() => section.getByText(`${DEVICES} in total`).isVisible()).toBe(true);
    await shot("07a-campaign-deliveries");

    const csvDownload = page.waitForEvent("download");
    await section.getByRole("button", { name: "Export CSV" }).click();
    const csv = await csvDownload;
    expect(csv.suggestedFilename()).toBe(`campaign-${campaignId}-deliveries.csv`);
    const rows = (await readFile((await csv.path())!, "utf8")).split("\r\n");
    expect(rows[0]).toBe("device_id,external_id,platform,outcome,reason,attempts,at");
    expect(rows.at(-1)).toBe("");
    expect(
      rows
        .slice(1, -1)
        .map((r) => r.split(",")[1])
        .sort(),
    ).toEqual([...externalIds].sort());

    const ndjsonDownload = page.waitForEvent("download");
    await section.getByRole("button", { name: "Export NDJSON" }).click();
    const ndjson = await ndjsonDownload;
    expect(ndjson.suggestedFilename()).toBe(`campaign-${campaignId}-deliveries.ndjson`);
    const lines = (await readFile((await ndjson.path())!, "utf8")).trimEnd().split("\n");
    expect(lines.map((l) => JSON.parse(l))).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ external_id: "user-3", platform: "web", outcome: "delivered" }),
      ]),
    );
    expect(lines).toHaveLength(DEVICES);
    await choose("Outcome", "Any");
    await choose("Platform", "Any");
  });

  it("schedules a campaign in a chosen time zone and cancels it", async () => {
    await openSection("Campaigns");
    await page.getByRole("button", { name: "New campaign" }).click();
    await page.getByLabel("Campaign name").fill("Tomorrow in Berlin");
    await page.getByLabel("Title (en)").fill("Later");
    await page.getByRole("radio", { name: "Schedule" }).check();
    const day = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    await page.getByLabel("Delivery time").fill(`${day}T09:30`);
    await choose("Time zone", "Europe/Berlin", "Europe/Berl");
    await page.getByRole("button", { name: "Schedule campaign" }).click();
    await page.waitForURL(/\/console\/campaigns\/[0-9a-f-]{36}$/);
    const id = page.url().split("/").pop()!;
    await expect.poll(() => page.getByTestId("campaign-status").textContent()).toBe("scheduled");
    const scheduled = await restClient(address.url, apiKey)("GET", `/v1/campaigns/${id}`);
    const berlin = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      dateStyle: "short",
      timeStyle: "short",
    }).format(new Date(scheduled.body.scheduled_at));
    expect(berlin).toBe(`${day.split("-").reverse().join("/")}, 09:30`);

    await page.getByRole("button", { name: "Cancel campaign" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel campaign" }).click();
    await expect.poll(() => page.getByTestId("campaign-status").textContent()).toBe("cancelled");
    expect((await waitForCampaign(restClient(address.url, apiKey), id, ["cancelled"])).status).toBe("cancelled");

    await openSection("Campaigns");
    await choose("Status", "cancelled");
    await expect.poll(() => page.getByRole("link", { name: "Tomorrow in Berlin" }).isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "Console launch" }).count()).toBe(0);
    await shot("08-campaigns-cancelled");
  });

  it("invites a member and shows the invitation link once", async () => {
    await openSection("Members");
    await expect.poll(() => page.getByRole("cell", { name: `${ADMIN_EMAIL} (you)` }).isVisible()).toBe(true);
    await page.getByRole("button", { name: "Invite member" }).click();
    await page.getByLabel("Email").fill("grace@console-e2e.example");
    await choose("Role", "developer");
    await page.getByRole("button", { name: "Create invitation" }).click();
    const link = page.getByTestId("secret-value");
    await expect.poll(() => link.textContent()).toContain("/invitations/accept?token=");
    await shot("09-invitation-link");
    await page.getByRole("button", { name: "Done" }).click();
    await expect
      .poll(() => page.getByRole("cell", { name: "grace@console-e2e.example", exact: true }).isVisible())
      .toBe(true);
  });

  it("is usable at phone width and signs out", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const nav = page.getByRole("navigation", { name: "Console sections" });
    const navRight = async () => ((b) => (b ? b.x + b.width : 0))(await nav.boundingBox());
    await expect.poll(navRight).toBeLessThanOrEqual(0);
    await page.getByRole("button", { name: "Open navigation" }).click();
    await expect.poll(navRight).toBeGreaterThan(300);
    await shot("10-phone-navigation");
    await nav.getByRole("link", { name: "Campaigns" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 2, name: "Campaigns" }).isVisible()).toBe(true);
    await expect.poll(navRight).toBeLessThanOrEqual(0);
    await shot("11-phone-campaigns");
    await page.goto(`${address.url}/console/apps/${appId}/android-channels`);
    await expect.poll(() => page.getByRole("cell", { name: "news", exact: true }).isVisible()).toBe(true);
    // The table scrolls inside its container; the page itself does not scroll sideways.
    expect(await page.evaluate("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await shot("12-phone-android-channels");
    await page.getByRole("button", { name: /^Account/ }).click();
    await page.getByRole("menuitem", { name: "Sign out" }).click();
    await expect.poll(() => page.getByText("You are signed out.").isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem("herald.console.tokens"))).toBeNull();
  });

  it("ran under the strict CSP without violations or page errors", () => {
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
