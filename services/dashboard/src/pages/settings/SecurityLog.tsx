import { api, query } from '../../api/client.js';
import { useMemo } from 'react';
import type { List, SecurityEvent, User } from '../../api/types.js';
import { useTeamMembers } from '../../components/ActorName.js';
import { Clipped, PagedTable, type Column } from '../../components/ListPage.js';
import { PageHeader } from '../../components/states.js';
import { Time } from '../../components/Time.js';
import { usePaged } from '../../hooks.js';
import { SecurityActionName } from '../../components/Labels.js';
import { clientAddressLabel, securityTargetText } from '../../labels.js';
import { securityDetailsText } from '../../security-details.js';

/**
 * What an entry changed: its target on one line (clipped, whole on hover), and under it what the
 * change was ("Member → Admin", "Display currency: USD → EUR"), wrapping rather than clipped: it
 * is the part read whole. Plain text, never markup (names and URLs are what people typed).
 */
function WhatChanged({ event }: { event: SecurityEvent }) {
  const details = securityDetailsText(event.action, event.details, event.target);
  return (
    <>
      <Clipped text={event.target && securityTargetText(event.target)} />
      {details.length > 0 && <span className="security-details">{details.join(' · ')}</span>}
    </>
  );
}

/**
 * Who made a change: the entry's label, and for the operator CLI run with `--actor` the user it
 * names ("Jane Doe via operator CLI"), by their name on the team now; the label alone once they
 * are no longer on it (the record keeps their id only).
 */
function securityActorText(actor: SecurityEvent['actor'], members: ReadonlyMap<string, User>): string {
  const name = actor.type === 'operator' && actor.user_id ? members.get(actor.user_id)?.name : undefined;
  return name ? `${name} via ${actor.label}` : actor.label;
}

const columns = (members: ReadonlyMap<string, User>): Column<SecurityEvent>[] => [
  { header: 'When', cell: (row) => <Time value={row.created_at} short withTime /> },
  { header: 'Action', cell: (row) => <SecurityActionName action={row.action} /> },
  { header: 'Who', cell: (row) => securityActorText(row.actor, members) },
  {
    header: 'What',
    cell: (row) => <WhatChanged event={row} />,
    fill: true,
  },
  {
    header: 'From',
    // On two lines rather than one: "This machine or a proxy on it (127.0.0.1)" on one line took
    // the room of the What column, which was clipped to a few words.
    cell: (row) => (row.ip_address ? <span className="wraps">{clientAddressLabel(row.ip_address)}</span> : '—'),
  },
];

export default function SecurityLog() {
  const list = usePaged(
    (cursor) => api<List<SecurityEvent>>('GET', `/security-log${query({ cursor })}`),
    'security-log',
  );
  const members = useTeamMembers(true);
  const tableColumns = useMemo(() => columns(members), [members]);
  return (
    <>
      <PageHeader title="Security log" />
      <p className="muted">Every change to tokens, endpoints, secrets, the team and the workspace, newest first.</p>
      <PagedTable
        caption="Security log"
        columns={tableColumns}
        list={list}
        empty="Nothing recorded yet."
        rowNames={{ one: 'entry', other: 'entries' }}
        stacks
      />
    </>
  );
}
