import { connectProcessor, hashPassword, loadFixtures, OPERATOR } from '@retention/domain';
import { testSecretsKeyBytes } from '@retention/testkit';
import { PASSWORD, type DashboardWorld } from './dashboard-world.js';

/**
 * A workspace whose owner (`email`, signing in with PASSWORD) has Stripe connected with
 * `webhookSecret` and `apiKey` (its key accepted), and a worker applying its events: the
 * Stripe URL to POST signed events to, for suites that drive the dashboard from Stripe's side.
 */
export async function connectedStripeWorkspace(
  world: DashboardWorld,
  { name, email, webhookSecret, apiKey }: { name: string; email: string; webhookSecret: string; apiKey: string },
): Promise<{ workspaceId: string; webhookUrl: string }> {
  const { db } = world;
  const loaded = await loadFixtures(db, testSecretsKeyBytes(), {
    workspaces: [{ key: 'w', name, processor: 'disconnected', users: [{ key: 'owner', email, role: 'owner' }] }],
  });
  const workspaceId = loaded.workspaces.w!.id;
  await db('users')
    .where({ email })
    .update({ password_hash: await hashPassword(PASSWORD) });
  const connection = await connectProcessor(
    db,
    testSecretsKeyBytes(),
    { workspace_id: workspaceId, provider: 'stripe', webhook_secret: webhookSecret, api_key: apiKey },
    'accepted',
    OPERATOR,
  );
  await world.startWorker();
  return { workspaceId, webhookUrl: `${world.url}/processor/stripe/${connection.id}` };
}
