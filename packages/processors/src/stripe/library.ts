import type Stripe from 'stripe';
import { firstUse } from '@retention/core';

/**
 * The official `stripe` library, loaded at its first use rather than at start. It is the largest
 * import of every process (about a quarter of a CLI run's or a service's start, 218 modules), and
 * most starts never call Stripe: the CLI's other commands, an API or a worker with no connected
 * processor, and each process the test run starts (docs/performance.md, "Test run"). The first
 * call in a process waits for the load, once (a fifth of a second).
 */
type StripeLibrary = typeof Stripe;

export const loadStripe: () => Promise<StripeLibrary> = firstUse(() =>
  import('stripe').then((module) => module.default),
);
