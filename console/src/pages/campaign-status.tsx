import { Badge } from "@mantine/core";
import type { Schemas } from "@herald/client";

export type CampaignStatus = Schemas["Campaign"]["status"];

export const STATUSES: CampaignStatus[] = ["scheduled", "queued", "sending", "completed", "cancelled", "failed"];

const COLORS: Record<CampaignStatus, string> = {
  scheduled: "violet",
  queued: "blue",
  sending: "blue",
  completed: "green",
  cancelled: "gray",
  failed: "red",
};

export const isRunning = (s: CampaignStatus) => s === "queued" || s === "sending";
export const isCancellable = (s: CampaignStatus) => s === "scheduled" || s === "queued";

export function StatusBadge({ status }: { status: CampaignStatus }) {
  return (
    <Badge color={COLORS[status]} variant="light" data-testid="campaign-status">
      {status}
    </Badge>
  );
}
