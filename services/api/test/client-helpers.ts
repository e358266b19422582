import { RetentionError } from '@retention/sdk';

/** The RetentionError a client call fails with; fails the test if the call succeeds. */
export async function rejectionOf(call: Promise<unknown>): Promise<RetentionError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof RetentionError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}
