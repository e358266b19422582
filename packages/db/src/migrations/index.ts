import type { Knex } from 'knex';
import * as tenancy from './0001-tenancy.js';
import * as customers from './0002-customers.js';
import * as recoveryCampaigns from './0003-recovery-campaigns.js';
import * as cancelFlow from './0004-cancel-flow.js';
import * as outboxAndWebhooks from './0005-outbox-and-webhooks.js';
import * as statsRollups from './0006-stats-rollups.js';
import * as statsExactness from './0007-stats-exactness.js';
import * as integrity from './0008-integrity.js';
import * as securityLog from './0009-security-log.js';
import * as accounts from './0010-accounts.js';
import * as processor from './0011-processor.js';
import * as insightRollups from './0012-insight-rollups.js';
import * as webhookRetention from './0013-webhook-retention.js';
import * as dashboardListIndexes from './0014-dashboard-list-indexes.js';
import * as deliveryBacklog from './0015-delivery-backlog.js';
import * as processorInboxRow from './0016-processor-inbox-row.js';
import * as deliveryRowChecks from './0017-delivery-row-checks.js';
import * as eventOutbox from './0018-event-outbox.js';
import * as sealedSigningSecrets from './0019-sealed-signing-secrets.js';
import * as outboxRecordedAt from './0020-outbox-recorded-at.js';
import * as resetLinkAction from './0021-reset-link-action.js';
import * as resetLinkCreator from './0022-reset-link-creator.js';
import * as eventsNotSent from './0023-events-not-sent.js';
import * as customerSearch from './0024-customer-search.js';
import * as eventsSessionIndex from './0025-events-session-index.js';
import * as tokenCreatorEmail from './0026-token-creator-email.js';
import * as oneOpenInvitation from './0027-one-open-invitation.js';
import * as processorMode from './0028-processor-mode.js';
import * as processorStatusDetails from './0029-processor-status-details.js';
import * as processorRefusedDeliveries from './0030-processor-refused-deliveries.js';
import * as processorKeyRejectionMail from './0031-processor-key-rejection-mail.js';
import * as processorEventRetention from './0032-processor-event-retention.js';
import * as attemptUrl from './0033-attempt-url.js';
import * as highestFormerRole from './0034-highest-former-role.js';
import * as formerRoleTrigger from './0035-former-role-trigger.js';
import * as resetLinkOperator from './0036-reset-link-operator.js';
import * as demoReceiver from './0037-demo-receiver.js';
import * as securityLogFilters from './0038-security-log-filters.js';
import * as removedMemberSessions from './0039-removed-member-sessions.js';
import * as securityLogActorEmail from './0040-security-log-actor-email.js';
import * as campaignPaymentAttempts from './0041-campaign-payment-attempts.js';
import * as campaignInvoicePrefix from './0042-campaign-invoice-prefix.js';
import * as listSortIndexes from './0043-list-sort-indexes.js';
import * as declineCodeRollups from './0044-decline-code-rollups.js';
import * as campaignCloseRollups from './0045-campaign-close-rollups.js';
import type { MigrationContext } from './context.js';

export interface Migration {
  name: string;
  /** `context` is given by migrateLatest and rollbackAll; a migration that needs it says so when it is missing. */
  up: (knex: Knex, context?: MigrationContext) => Promise<void>;
  down: (knex: Knex, context?: MigrationContext) => Promise<void>;
}

/**
 * Every migration, in order. Listed by hand rather than read from a directory so that the
 * same list works from TypeScript sources, in tests and in the bundled build.
 */
export const MIGRATIONS: readonly Migration[] = [
  { name: '0001-tenancy', ...tenancy },
  { name: '0002-customers', ...customers },
  { name: '0003-recovery-campaigns', ...recoveryCampaigns },
  { name: '0004-cancel-flow', ...cancelFlow },
  { name: '0005-outbox-and-webhooks', ...outboxAndWebhooks },
  { name: '0006-stats-rollups', ...statsRollups },
  { name: '0007-stats-exactness', ...statsExactness },
  { name: '0008-integrity', ...integrity },
  { name: '0009-security-log', ...securityLog },
  { name: '0010-accounts', ...accounts },
  { name: '0011-processor', ...processor },
  { name: '0012-insight-rollups', ...insightRollups },
  { name: '0013-webhook-retention', ...webhookRetention },
  { name: '0014-dashboard-list-indexes', ...dashboardListIndexes },
  { name: '0015-delivery-backlog', ...deliveryBacklog },
  { name: '0016-processor-inbox-row', ...processorInboxRow },
  { name: '0017-delivery-row-checks', ...deliveryRowChecks },
  { name: '0018-event-outbox', ...eventOutbox },
  { name: '0019-sealed-signing-secrets', ...sealedSigningSecrets },
  { name: '0020-outbox-recorded-at', ...outboxRecordedAt },
  { name: '0021-reset-link-action', ...resetLinkAction },
  { name: '0022-reset-link-creator', ...resetLinkCreator },
  { name: '0023-events-not-sent', ...eventsNotSent },
  { name: '0024-customer-search', ...customerSearch },
  { name: '0025-events-session-index', ...eventsSessionIndex },
  { name: '0026-token-creator-email', ...tokenCreatorEmail },
  { name: '0027-one-open-invitation', ...oneOpenInvitation },
  { name: '0028-processor-mode', ...processorMode },
  { name: '0029-processor-status-details', ...processorStatusDetails },
  { name: '0030-processor-refused-deliveries', ...processorRefusedDeliveries },
  { name: '0031-processor-key-rejection-mail', ...processorKeyRejectionMail },
  { name: '0032-processor-event-retention', ...processorEventRetention },
  { name: '0033-attempt-url', ...attemptUrl },
  { name: '0034-highest-former-role', ...highestFormerRole },
  { name: '0035-former-role-trigger', ...formerRoleTrigger },
  { name: '0036-reset-link-operator', ...resetLinkOperator },
  { name: '0037-demo-receiver', ...demoReceiver },
  { name: '0038-security-log-filters', ...securityLogFilters },
  { name: '0039-removed-member-sessions', ...removedMemberSessions },
  { name: '0040-security-log-actor-email', ...securityLogActorEmail },
  { name: '0041-campaign-payment-attempts', ...campaignPaymentAttempts },
  { name: '0042-campaign-invoice-prefix', ...campaignInvoicePrefix },
  { name: '0043-list-sort-indexes', ...listSortIndexes },
  { name: '0044-decline-code-rollups', ...declineCodeRollups },
  { name: '0045-campaign-close-rollups', ...campaignCloseRollups },
];
