import { lazy, Suspense, useEffect } from "react";
import { Loading } from "./components/feedback";
import { Shell } from "./layout/shell";
import { AndroidChannelsPage } from "./pages/android-channels-page";
import { ApiKeysPage } from "./pages/api-keys-page";
import { AppDetailPage } from "./pages/app-detail-page";
import { AppsPage } from "./pages/apps-page";
import { CampaignsPage } from "./pages/campaigns-page";
import { DevicesPage } from "./pages/devices-page";
import { MembersPage } from "./pages/members-page";
import { NotFoundPage } from "./pages/not-found-page";
import { SegmentsPage } from "./pages/segments-page";
import { match, navigate, useLocation } from "./routing";

// The composer and the detail page (with its chart library) load on first use.
const CampaignComposer = lazy(() => import("./pages/campaign-composer"));
const CampaignDetailPage = lazy(() => import("./pages/campaign-detail-page"));

function Page() {
  const { path } = useLocation();
  useEffect(() => {
    if (path === "/") navigate("/apps", { replace: true });
  }, [path]);

  if (path === "/" || path === "/apps") return <AppsPage />;
  let params = match("/apps/:id", path);
  if (params) return <AppDetailPage id={params.id!} />;
  params = match("/apps/:id/android-channels", path);
  if (params) return <AndroidChannelsPage appId={params.id!} />;
  if (path === "/api-keys") return <ApiKeysPage />;
  if (path === "/devices") return <DevicesPage />;
  if (path === "/segments") return <SegmentsPage />;
  if (path === "/campaigns") return <CampaignsPage />;
  if (path === "/campaigns/new") return <CampaignComposer />;
  params = match("/campaigns/:id", path);
  if (params) return <CampaignDetailPage id={params.id!} />;
  if (path === "/members") return <MembersPage />;
  return <NotFoundPage />;
}

export function Routes() {
  const { path } = useLocation();
  useEffect(() => {
    const title = path.split("/")[1] ?? "";
    document.title = title ? `${title.replace("-", " ")} · Herald console` : "Herald console";
  }, [path]);
  return (
    <Shell>
      <Suspense fallback={<Loading />}>
        <Page />
      </Suspense>
    </Shell>
  );
}
