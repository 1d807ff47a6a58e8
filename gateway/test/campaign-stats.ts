/** A campaign's stats (the CampaignStats view) before any outcome or report. */
export const noCounts = (campaignId: string) => ({
  campaign_id: campaignId,
  sent: 0,
  delivered: 0,
  failed: 0,
  bounced: 0,
  throttled: 0,
  received: 0,
  clicked: 0,
});
