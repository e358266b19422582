import type { CampaignRow } from '@retention/db';

/** The fields every recovery event carries (docs/webhooks.md, "Event types"), from a campaign and its customer. */
export function campaignEventFields(campaign: Pick<CampaignRow, 'id' | 'amount_cents' | 'currency'>, email: string) {
  return {
    campaign_id: campaign.id,
    customer_email: email,
    amount_cents: campaign.amount_cents,
    currency: campaign.currency,
  };
}
