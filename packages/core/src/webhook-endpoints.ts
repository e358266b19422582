/**
 * The most webhook endpoints one workspace may have (docs/decisions.md, "Outbound webhooks",
 * "Endpoints"), shared with the dashboard, which says so in place of its Add endpoint button
 * (its own import: no server code in the browser's bundle). Every event goes to each
 * subscribed endpoint, and one worker pool delivers for every workspace: without a cap, one
 * workspace's thousand endpoints would turn each of its events into a thousand deliveries
 * ahead of everyone else's. Stripe holds an account to 16 endpoints; so do we.
 */
export const MAX_WEBHOOK_ENDPOINTS = 16;

/** The refusal of one more. */
export const TOO_MANY_WEBHOOK_ENDPOINTS = `A workspace can have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints. Delete one to add another.`;
