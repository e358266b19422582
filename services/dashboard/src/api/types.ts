import type { AttemptOutcome, UserRole } from '@retention/core/enums';
import type { ProcessorMode } from '@retention/core/processor-modes';
import type { StripeStatus } from '../pages/settings/processor-story.js';

/**
 * The shapes of docs/dashboard-api.md, as the page reads them. Type-only imports (Vite drops
 * them): nothing of the server reaches the bundle.
 *
 * The data and insight pages' JSON is built by @retention/db and read here with its own types
 * (@retention/db/dashboard-views, which loads only core's enums and resources). The settings,
 * team and account shapes below stay local: their server types live in @retention/domain's
 * modules beside the code that makes them (knex, ajv, node:crypto through @retention/core's
 * index), which this browser compile cannot load; and the dashboard API reshapes several on
 * the way out (views.ts, token-routes.ts: a token loses workspace_id and gains created_by, an
 * endpoint gains alert, a workspace's `processor` becomes `processor_status`).
 */

export type {
  CampaignDetailView as CampaignDetail,
  CampaignListRow as Campaign,
  CancelSessionDetailView as CancelSessionDetail,
  CancelSessionListRow as CancelSession,
  CustomerDetailView as CustomerDetail,
  ExchangeRate,
  Overview,
  OverviewPeriod,
  TimelineEntry,
  WinbackSummary as Winback,
} from '@retention/db/dashboard-views';
export type { Customer, ListEnvelope as List, Subscription } from '@retention/core/resources';

/**
 * What a dashboard list's first page adds when it is the whole list (docs/dashboard-api.md,
 * "Counts"): how many rows its filters match. Any other page has neither; the list's count route
 * answers the same two fields, at most 1,000 counted (`total_capped`: more than `total`).
 */
export interface ListCount {
  total?: number;
  total_capped?: boolean;
}

export type Role = UserRole;

export interface User {
  id: string;
  object: 'user';
  email: string;
  name: string;
  role: Role;
  last_sign_in_at: string | null;
  created_at: string;
}

export interface Workspace {
  id: string;
  name: string;
  display_currency: string;
  processor_status: string;
  /**
   * Stripe refused the stored API key (401): the connection is disconnected and webhooks are
   * paused.
   */
  processor_key_rejected: boolean;
  /**
   * The Stripe connection's mode; null without one, or before its mode is known (View in Stripe).
   */
  stripe_mode: ProcessorMode | null;
}

/**
 * GET /workspace: the workspace with its Stripe connection's status, for every role. Only that
 * route answers it (not /me, sign-in or PATCH /workspace), so `Workspace` itself does not claim it.
 */
export interface WorkspaceWithProcessor extends Workspace {
  processor_connection_status: StripeStatus;
  /** Lower-case ISO 4217 codes with an exchange rate, sorted: what display_currency may be. */
  display_currencies: string[];
}

interface Permissions {
  manage_campaigns: boolean;
  read_tokens: boolean;
  manage_tokens: boolean;
  manage_webhooks: boolean;
  manage_team: boolean;
  assignable_roles: Role[];
  manage_workspace: boolean;
  manage_processor: boolean;
  read_security_log: boolean;
}

export interface Me {
  user: User;
  workspace: Workspace;
  permissions: Permissions;
  event_types: string[];
}

export interface ApiToken {
  id: string;
  object: 'api_token';
  name: string;
  hint: string;
  /**
   * Who made it: a user of the workspace; once they are removed, the email kept at creation
   * (`removed`, no id or name); null for a token no user made (the operator CLI, npm start's demo setup).
   */
  created_by:
    | { id: string; name: string | null; email: string; removed: false }
    | { id: null; name: null; email: string; removed: true }
    | null;
  /**
   * What made it when not the dashboard, as the security log names the maker of its
   * `token.created`: "operator CLI", "Demo setup" (npm start); null for the dashboard's, or with no entry.
   */
  created_via: string | null;
  created_at: string;
  last_used_at: string | null;
  rate_limit_per_minute: number;
  revoked_at: string | null;
}

export interface CreatedToken extends ApiToken {
  token: string;
}

export interface Endpoint {
  id: string;
  object: 'webhook_endpoint';
  name: string;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failure_count: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  /** While a roll's overlap is open, when the secret it replaced stops signing. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  alert: { reason: string; disabled_at: string } | null;
  /** While it is off, since when (null when on, or off since before that was recorded). */
  disabled_at: string | null;
}

export interface CreatedEndpoint extends Endpoint {
  secret: string;
}

export interface RolledSecret {
  id: string;
  secret: string;
  previous_secret_expires_at: string | null;
  /** The secrets deliveries carry from now on, newest first; `until` null: until the next roll. */
  accepted_secrets: { which: 'new' | 'replaced'; until: string | null }[];
}

/** What POST /webhooks/:id/end-overlap answers (docs/dashboard-api.md). */
export interface EndedOverlap {
  id: string;
  /** The overlap is over either way. */
  previous_secret_expires_at: null;
  /** Null when no overlap was open any more: nothing changed, which is not an error. */
  ended_overlap_until: string | null;
}

export interface Attempt {
  id: string;
  object: 'webhook_attempt';
  delivery_id: string;
  event_id: string | null;
  event_type: string;
  attempt: number;
  outcome: AttemptOutcome;
  http_status: number | null;
  error: string | null;
  response_body: string | null;
  duration_ms: number;
  attempted_at: string;
  next_attempt_at: string | null;
  /** The URL it was sent to (the endpoint's URL may have changed since); null when not recorded. */
  url: string | null;
  request_body?: string | null;
  /**
   * The log's entries only: when the delivery's next attempt (this one's number + 1) was made,
   * whatever made it (the scheduled retry, Retry failed since… or a Resend: not recorded), null
   * while it is not; `next_attempt_at` stays the time the retry was given, even long after.
   */
  retried_at?: string | null;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invited_by: { id: string; name: string; email: string } | string | null;
  created_at: string;
  expires_at: string;
}

/**
 * An invitation on the Team page (GET /team): pending, or expired in the last 30 days (then
 * listed to be sent again), with what the viewer may do for it.
 */
export interface ListedInvitation extends Invitation {
  /** `expired`: its link no longer works; New link or Resend makes it one that does. */
  status: 'pending' | 'expired';
  /** Whether the viewer may make it a new link (New link, or Resend with email): offered only then. */
  can_make_new_link: boolean;
}

/** A person on the Team page, with what the viewer may do for them (GET /team). */
export interface TeamMember extends User {
  /**
   * Whether they can sign in. One without a password yet (made by the operator) may be invited:
   * accepting gives that account a password and the invitation's role. Sent only to a viewer who
   * may invite (owners and admins).
   */
  has_password?: boolean;
  /** Whether the viewer may make them a reset link: Reset link is offered only then. */
  can_make_reset_link: boolean;
  /**
   * The role they held before that alone keeps the viewer from making them a reset link (no
   * email): the row says so, and who can make one. Null otherwise.
   */
  reset_link_former_role: 'admin' | 'owner' | null;
}

export interface Team {
  members: TeamMember[];
  invitations: ListedInvitation[];
  /** Whether this service sends email (SMTP_URL): a new invitation link is then emailed (Resend). */
  emails: boolean;
}

export interface SecurityEvent {
  id: string;
  object: 'security_event';
  action: string;
  /** `email`: the address of the person `user_id` named, kept after they leave the team. */
  actor: { type: string; user_id: string | null; label: string; email: string | null };
  /** `exists`: whether the target is still there to open (deleted, used or canceled: false). */
  target: { type: string; id: string; label: string; exists: boolean } | null;
  ip_address: string | null;
  user_agent: string | null;
  details: Record<string, unknown> | null;
  created_at: string;
}

export interface SignedIn {
  user: User;
  workspace: Workspace;
}
