import { redactUrl } from '@retention/core';
import { isConnectionError } from './connection.js';

/**
 * A one-paragraph explanation of a failure to reach a backing service, for people starting
 * the service on a laptop: which service, at which address, and how to start it.
 */
export function describeConnectionFailure(
  service: 'PostgreSQL' | 'Redis',
  url: string | undefined,
  error: unknown,
): string {
  const reason = error instanceof Error ? error.message : String(error);
  const address = url
    ? redactUrl(url)
    : service === 'PostgreSQL'
      ? 'postgres://localhost:5432/retention'
      : 'redis://127.0.0.1:6379';
  if (!isConnectionError(error) && service === 'PostgreSQL') return reason;
  // The compose file keeps both off the host network; its dev override publishes them on loopback.
  const compose = 'docker compose -f docker-compose.yml -f infra/docker/compose.dev.yml up -d postgres redis';
  const how =
    service === 'PostgreSQL'
      ? `start it with \`${compose}\` (then DATABASE_URL=postgres://retention:retention@localhost:5432/retention), or install your distribution's postgresql package`
      : `start it with \`${compose}\`, or install your distribution's redis-server package`;
  return `cannot reach ${service} at ${address} (${reason}); ${how}.`;
}
