import { api, query } from '../../api/client.js';
import type { List, SecurityEvent } from '../../api/types.js';
import { Clipped, PagedTable, type Column } from '../../components/ListPage.js';
import { PageHeader } from '../../components/states.js';
import { Time } from '../../components/Time.js';
import { usePaged } from '../../hooks.js';
import { SecurityActionName } from '../../components/Labels.js';
import { clientAddressLabel, securityTargetText } from '../../labels.js';

const COLUMNS: Column<SecurityEvent>[] = [
  { header: 'When', cell: (row) => <Time value={row.created_at} short withTime /> },
  { header: 'Action', cell: (row) => <SecurityActionName action={row.action} /> },
  { header: 'Who', cell: (row) => row.actor.label },
  {
    header: 'What',
    cell: (row) => <Clipped text={row.target && securityTargetText(row.target)} />,
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
  return (
    <>
      <PageHeader title="Security log" />
      <p className="muted">Every change to tokens, endpoints, secrets, the team and the workspace, newest first.</p>
      <PagedTable caption="Security log" columns={COLUMNS} list={list} empty="Nothing recorded yet." stacks />
    </>
  );
}
