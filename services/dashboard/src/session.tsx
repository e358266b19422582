import { createContext, useContext } from 'react';
import type { Me } from './api/types.js';

export interface Session {
  me: Me;
  /** Reloads GET /me (after a name or workspace change). */
  refresh: () => void;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside the signed-in shell');
  return session;
}
