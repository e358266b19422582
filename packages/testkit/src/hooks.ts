import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll } from '@jest/globals';
import { createTestDatabase, type TestDatabase } from './database.js';

/**
 * Gives a test file its own migrated database for the life of the file:
 * `const database = useTestDatabase();` then `database.current.db` inside tests.
 */
export function useTestDatabase(): { readonly current: TestDatabase } {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });
  return {
    get current() {
      if (!database) throw new Error('the test database is created in beforeAll');
      return database;
    },
  };
}

/**
 * A port something already listens on, for the life of the test file: what a service told to
 * listen there finds when another process holds it. `const taken = useTakenPort();` then
 * `taken.port` inside tests.
 */
export function useTakenPort(): { readonly port: number } {
  const server = createServer();
  beforeAll(() => new Promise<void>((resolve) => server.listen(0, resolve)));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    get port() {
      const address = server.address() as AddressInfo | null;
      if (!address) throw new Error('the taken port is listened on in beforeAll');
      return address.port;
    },
  };
}
