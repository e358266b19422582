/**
 * The host names that are this machine: a URL made with one points nowhere for anyone else
 * (the operator's BASE_URL warning, the dashboard's note under Stripe's webhook URL).
 */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a URL's hostname (as `new URL(…).hostname` gives it) is this machine. */
export function isLocalHost(hostname: string): boolean {
  return LOCAL_HOSTS.has(hostname.toLowerCase().replace(/\.$/, ''));
}
