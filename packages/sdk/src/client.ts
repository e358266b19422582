import { paginate, type CursorParams } from './pagination.js';
import type {
  CampaignDetail,
  CampaignStatus,
  CancelOutcome,
  CancelSession,
  Customer,
  CustomerDetail,
  List,
  RecoveryCampaign,
  Stats,
} from './resources.js';
import { pathSegment, Transport, type RateLimitInfo } from './transport.js';

export interface ClientOptions {
  /** An API token (`sk_live_...`), scoped to one workspace. */
  token: string;
  /** Where the service runs, e.g. `https://retention.example.com` (`/api/v1` is added). */
  baseUrl: string;
  /**
   * The longest one call may spend waiting before retries, in all: after a 429 (its
   * Retry-After) and between retries of failures. 0 turns retrying off. Default 60.
   */
  maxRetryWaitSeconds?: number;
  /** Retries of a 500 database_error, a 502/503/504 or a network failure. Default 3. */
  maxRetries?: number;
  /** How long one attempt may take, response body included. Default 30. */
  timeoutSeconds?: number;
  /**
   * The fetch to send requests with, e.g. one that goes through a proxy or records traffic.
   * Default: the global fetch of Node.js.
   */
  fetch?: typeof fetch;
}

export interface CustomerListParams extends CursorParams {
  /** Exact address, case-insensitive. */
  email?: string;
  /** Customers carrying this tag, case-insensitive. */
  tag?: string;
}

export interface CampaignListParams extends CursorParams {
  status?: CampaignStatus;
}

export interface CancelSessionListParams extends CursorParams {
  outcome?: CancelOutcome;
}

/** The parameters of each list, in the API's order: the query parameters it accepts. */
export const CUSTOMER_LIST_PARAMS = ['email', 'tag', 'cursor'] as const satisfies readonly (keyof CustomerListParams)[];
export const CAMPAIGN_LIST_PARAMS = ['status', 'cursor'] as const satisfies readonly (keyof CampaignListParams)[];
export const CANCEL_SESSION_LIST_PARAMS = [
  'outcome',
  'cursor',
] as const satisfies readonly (keyof CancelSessionListParams)[];

/**
 * The REST API (read-only). `list` returns one page; `all` walks every page:
 *
 *     for await (const campaign of client.campaigns.all({ status: 'lost' })) { ... }
 */
export class Client {
  readonly customers: CustomersResource;
  readonly campaigns: CampaignsResource;
  readonly cancelSessions: CancelSessionsResource;
  readonly stats: StatsResource;
  readonly #transport: Transport;

  constructor(options: ClientOptions) {
    this.#transport = new Transport(options);
    this.customers = new CustomersResource(this.#transport);
    this.campaigns = new CampaignsResource(this.#transport);
    this.cancelSessions = new CancelSessionsResource(this.#transport);
    this.stats = new StatsResource(this.#transport);
  }

  /**
   * The X-RateLimit-* headers of the latest response: null before the first call, or when
   * the latest response carried none. With calls in parallel, the last one to finish wins.
   */
  get rateLimit(): RateLimitInfo | null {
    return this.#transport.rateLimit;
  }
}

export class CustomersResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** One page of customers, newest first (by `created_at`). */
  list(params: CustomerListParams = {}): Promise<List<Customer>> {
    return this.#transport.get('/customers', 'list', params);
  }

  /** Every customer matching the filters, newest first, across pages. */
  all(params: CustomerListParams = {}): AsyncGenerator<Customer, void, undefined> {
    return paginate((page) => this.list(page), params);
  }

  /** One customer with its subscriptions and five newest campaigns. */
  async retrieve(id: string): Promise<CustomerDetail> {
    return this.#transport.get(`/customers/${pathSegment(id)}`, 'customer');
  }
}

export class CampaignsResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** One page of recovery campaigns, newest first (by `first_failed_at`). */
  list(params: CampaignListParams = {}): Promise<List<RecoveryCampaign>> {
    return this.#transport.get('/campaigns', 'list', params);
  }

  /** Every campaign matching the filter, newest first, across pages. */
  all(params: CampaignListParams = {}): AsyncGenerator<RecoveryCampaign, void, undefined> {
    return paginate((page) => this.list(page), params);
  }

  /** One campaign with its customer and a summary of its subscription. */
  async retrieve(id: string): Promise<CampaignDetail> {
    return this.#transport.get(`/campaigns/${pathSegment(id)}`, 'recovery_campaign');
  }
}

export class CancelSessionsResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** One page of cancel sessions, newest first (by `created_at`). */
  list(params: CancelSessionListParams = {}): Promise<List<CancelSession>> {
    return this.#transport.get('/cancel_sessions', 'list', params);
  }

  /** Every cancel session matching the filter, newest first, across pages. */
  all(params: CancelSessionListParams = {}): AsyncGenerator<CancelSession, void, undefined> {
    return paginate((page) => this.list(page), params);
  }
}

export class StatsResource {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** The workspace's KPIs, amounts normalised to its display currency. */
  retrieve(): Promise<Stats> {
    return this.#transport.get('/stats', 'stats');
  }
}
