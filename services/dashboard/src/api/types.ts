/** The shapes of docs/dashboard-api.md, as the page reads them. */

export type Role = 'owner' | 'admin' | 'member';

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
}

interface Permissions {
  manage_campaigns: boolean;
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

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export interface ApiToken {
  id: string;
  object: 'api_token';
  name: string;
  hint: string;
  created_by: { id: string; name: string; email: string } | null;
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
  created_at: string;
  updated_at: string;
  alert: { reason: string; disabled_at: string } | null;
}

export interface CreatedEndpoint extends Endpoint {
  secret: string;
}

export interface RolledSecret {
  id: string;
  secret: string;
  previous_secret_expires_at: string | null;
}

export interface Attempt {
  id: string;
  object: 'webhook_attempt';
  delivery_id: string;
  event_id: string | null;
  event_type: string;
  attempt: number;
  outcome: 'succeeded' | 'failed' | 'skipped' | 'interrupted';
  http_status: number | null;
  error: string | null;
  response_body: string | null;
  duration_ms: number;
  attempted_at: string;
  next_attempt_at: string | null;
  request_body?: string | null;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  invited_by: { id: string; name: string; email: string } | string | null;
  created_at: string;
  expires_at: string;
}

export interface Team {
  members: User[];
  invitations: Invitation[];
}

export interface SecurityEvent {
  id: string;
  object: 'security_event';
  action: string;
  actor: { type: string; user_id: string | null; label: string };
  target: { type: string; id: string; label: string } | null;
  ip_address: string | null;
  user_agent: string | null;
  details: Record<string, unknown> | null;
  created_at: string;
}

export interface SignedIn {
  user: User;
  workspace: Workspace;
}

/** The insight pages' shapes (docs/dashboard-api.md, "Data pages" and "Insights"). */

export type OverviewPeriod = 'last_30_days' | 'last_90_days' | 'last_12_months' | 'all_time';

interface Stats {
  object: 'stats';
  display_currency: string;
  unconverted_currencies: string[];
  recovery: {
    opened: number;
    in_flight: number;
    recovered: number;
    lost: number;
    abandoned: number;
    recovery_rate: number | null;
    recovered_amount_cents: number;
    at_risk_amount_cents: number;
    lost_amount_cents: number;
    recovered_via: Record<string, number>;
    by_decline_category: Record<string, { opened: number; recovered: number }>;
    median_days_to_recover: number | null;
  };
  cancel_flow: {
    sessions: number;
    saved: number;
    save_rate: number | null;
    by_outcome: Record<string, number>;
    saved_mrr_cents: number;
  };
}

export interface Overview {
  object: 'overview';
  period: OverviewPeriod;
  since: string | null;
  stats: Stats;
  campaigns_by_month: Array<{
    month: string;
    opened: number;
    recovered: number;
    failed_amount_cents: number;
    recovered_amount_cents: number;
    recovery_rate: number | null;
  }>;
  cancel_sessions_by_month: Array<{ month: string; by_outcome: Record<string, number> }>;
  cancel_reasons: Array<{ reason_code: string; sessions: number }>;
  unconverted_currencies: string[];
  generated_at: string;
}

export interface Customer {
  id: string;
  object: 'customer';
  psp_customer_id: string;
  email: string;
  name: string | null;
  tags: string[];
  created_at: string;
}

export interface Subscription {
  id: string;
  object: 'subscription';
  psp_subscription_id: string;
  status: string;
  plan_name: string;
  amount_cents: number;
  currency: string;
  interval: string;
  trial_end?: string | null;
  current_period_end?: string | null;
  canceled_at?: string | null;
  created_at?: string;
}

export interface Campaign {
  id: string;
  object: 'recovery_campaign';
  psp_invoice_id: string;
  amount_cents: number;
  currency: string;
  status: 'in_flight' | 'recovered' | 'lost' | 'abandoned';
  decline_code: string;
  decline_category: string;
  recovered_via: string | null;
  first_failed_at: string;
  recovered_at: string | null;
  closed_at: string | null;
  customer_id: string;
  subscription_id: string;
  /** On the dashboard's own lists. */
  customer_email?: string;
}

interface TimelineDelivery {
  id: string;
  endpoint_id: string;
  endpoint_name: string;
  status: string;
  attempt_count: number;
  last_http_status: number | null;
  completed_at: string | null;
}

export type TimelineEntry =
  | { kind: 'event'; at: string; event_id: string; type: string; source: string | null; deliveries: TimelineDelivery[] }
  | { kind: 'action'; at: string; action: string; actor: { user_id: string | null; label: string | null } };

export interface CampaignDetail extends Campaign {
  customer: Customer | null;
  subscription: Subscription | null;
  closed_by_user_id: string | null;
  timeline: TimelineEntry[];
}

export interface CancelSession {
  id: string;
  object: 'cancel_session';
  customer_id: string;
  subscription_id: string | null;
  outcome: string;
  reason_code: string;
  feedback: string | null;
  monthly_mrr_cents: number;
  currency: string;
  created_at: string;
  ended_at: string;
  customer_email?: string;
}

export interface CancelSessionDetail extends CancelSession {
  customer: Customer;
  subscription: Subscription | null;
}

export interface Winback {
  id: string;
  psp_subscription_id: string;
  days_away: number;
  amount_cents: number;
  currency: string;
  recorded_at: string;
}

export interface CustomerDetail extends Customer {
  subscriptions: Subscription[];
  campaigns: Campaign[];
  cancel_sessions: CancelSession[];
  winbacks: Winback[];
}
