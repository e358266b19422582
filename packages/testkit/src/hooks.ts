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
