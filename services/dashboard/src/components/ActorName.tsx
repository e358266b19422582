import { useMemo } from 'react';
import { api } from '../api/client.js';
import type { TimelineEntry, User } from '../api/types.js';
import { useLoad } from '../hooks.js';

type Actor = Extract<TimelineEntry, { kind: 'action' }>['actor'];

/**
 * The workspace's people by id, read from GET /team (any role may), when `wanted`: a manual
 * action records who took it by id and email only, and "Closed by owner@northwind.example"
 * named an address where the team knows a person.
 */
export function useTeamMembers(wanted: boolean): ReadonlyMap<string, User> {
  const team = useLoad(
    (signal) =>
      wanted ? api<{ members: User[] }>('GET', '/team', { signal }) : Promise.resolve({ members: [] as User[] }),
    `team-names:${wanted}`,
  );
  return useMemo(() => new Map((team.data?.members ?? []).map((member) => [member.id, member])), [team.data]);
}

/**
 * Who took an action: their name, with the email it recorded as secondary (a quieter line, or
 * in brackets `inline`); the email alone for someone no longer on the team; the operator CLI run
 * for someone as "Jane Doe via operator CLI" (their kept email once they have left).
 */
export function ActorName({
  actor,
  members,
  inline = false,
}: {
  actor: Actor;
  members: ReadonlyMap<string, User>;
  inline?: boolean;
}) {
  const person = actor.user_id ? members.get(actor.user_id) : undefined;
  // The operator CLI run for someone (`--actor`): "Jane Doe via operator CLI", as the Security log
  // says it; by the address the entry kept once they have left the team.
  const forWhom = person ? person.name || person.email : actor.email;
  if (actor.type === 'operator' && forWhom) {
    const via = `via ${actor.label}`;
    return inline ? (
      <>
        {forWhom} {via}
      </>
    ) : (
      <>
        {forWhom} <span className="secondary">{via}</span>
      </>
    );
  }
  const name = person?.name;
  if (!name) return <>{actor.label ?? 'a user'}</>;
  if (!actor.label) return <>{name}</>;
  return inline ? (
    <>
      {name} <span className="muted">({actor.label})</span>
    </>
  ) : (
    <>
      {name}
      <span className="secondary">{actor.label}</span>
    </>
  );
}
