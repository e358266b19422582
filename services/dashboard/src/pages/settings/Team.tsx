import { useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api/client.js';
import type {
  ApiToken,
  Invitation,
  List,
  ListedInvitation,
  Role,
  Team as TeamData,
  TeamMember,
  User,
} from '../../api/types.js';
import { CopyField } from '../../components/CopyField.js';
import { ConfirmDialog, Dialog, DoneActions } from '../../components/Dialog.js';
import { Field, FormError } from '../../components/Field.js';
import { Clipped, DataTable, type Column, type RowNote } from '../../components/ListPage.js';
import { ErrorNote, LiveStatus, Loading, PageHeader } from '../../components/states.js';
import { Time } from '../../components/Time.js';
import { useLoad } from '../../hooks.js';
import { useSession } from '../../session.js';
import { useAction } from '../../use-action.js';
import { ROLE_NAMES, ROLE_SENTENCES, RoleChoice, withArticle } from './roles.js';
import { BusyButton } from '../../components/BusyButton.js';
import { BreakableEmail } from '../../components/BreakableUrl.js';

/**
 * A one-time link made for someone else: emailed to them when the server can send email, and
 * then not shown (docs/dashboard-api.md, Team); `url` is the link to copy when it was not.
 */
interface SentLink {
  emailed: boolean;
  url: string | undefined;
}

/**
 * What a result says of an invitation link made for `email` (Invitation created, New invitation
 * link, Invitation resent), in one wording and one format for all three: emailed, or to send on
 * (with the link to copy, and first, when this service `emails` but this one could not be sent,
 * that it was not), and until when it works, in the viewer's zone (Time). `emailedWhat`: "the
 * invitation", "a new invitation link". Invitation created said "for 7 days" with no end.
 */
function InvitationLinkSaying({
  link,
  email,
  expiresAt,
  emails,
  emailedWhat,
}: {
  link: SentLink;
  email: string;
  expiresAt: string;
  emails: boolean;
  emailedWhat: string;
}) {
  const until = (
    <>
      it works once, for 7 days (until <Time value={expiresAt} short withTime />)
    </>
  );
  if (link.emailed) {
    return (
      <p>
        We emailed {emailedWhat} to {email}: {until}.
      </p>
    );
  }
  return (
    <>
      <p>
        {emails && `The email to ${email} could not be sent. `}Send this link to {email}; {until}.
      </p>
      {link.url !== undefined && <CopyField label="Invitation link" value={link.url} />}
    </>
  );
}

/**
 * What Invite says, before sending, of the listed invitation to the address typed: the server
 * replaces it (revokes it), pending or expired; a pending one's link then stops working. In the
 * words of the button: a service that sends no email creates a link, it sends nothing.
 */
function replacesSaying(invitation: ListedInvitation, emails: boolean): string {
  const role = ROLE_NAMES[invitation.role];
  const already = `${invitation.email} already has ${invitation.status === 'expired' ? 'an expired' : 'a pending'} ${role} invitation`;
  if (!emails) {
    return invitation.status === 'expired'
      ? `${already}: creating a new link replaces it.`
      : `${already}: creating a new link replaces it, and the old link stops working.`;
  }
  return invitation.status === 'expired'
    ? `${already}: sending this one replaces it.`
    : `${already}: sending this one replaces it, and its link stops working.`;
}

/** "a Member", "an Admin": a role as the page names it, after "a" or "an". */
const aRole = (role: Role) => `${role === 'member' ? 'a' : 'an'} ${ROLE_NAMES[role]}`;

/**
 * What Invite says of an account the address already names that has no password yet (made by the
 * operator): accepting gives it a password and the invitation's `role`, which may move it up or
 * down. Said before sending from the listed people, and after from the server's answer (its role
 * then: the list may be older than another tab's change).
 */
function existingAccountSaying(email: string, held: Role, role: Role): string {
  const account = `${email} is already on the team as ${ROLE_NAMES[held]} and has no password yet`;
  return held === role
    ? `${account}: this invitation only lets them set a password.`
    : `${account}: accepting this invitation makes them ${aRole(role)}.`;
}

/**
 * What Invite says, before sending, of a listed person the address typed names: the viewer's own
 * address is theirs (not "they" who cannot be invited again); one who signs in already cannot be
 * invited (the server refuses it); one without a password yet may be.
 */
function memberSaying(member: TeamMember, role: Role, viewerId: string): string {
  if (member.id === viewerId) {
    return `That is your own address: you are already on the team as ${ROLE_NAMES[member.role]}, and cannot invite yourself.`;
  }
  return member.has_password
    ? `${member.email} is already on the team as ${ROLE_NAMES[member.role]}: they cannot be invited again.`
    : existingAccountSaying(member.email, member.role, role);
}

function InviteDialog({
  roles,
  viewerId,
  members,
  listed,
  emails,
  onClose,
  onInvited,
}: {
  roles: Role[];
  /** The signed-in person: their own address is said to be theirs. */
  viewerId: string;
  /** The people the page lists: inviting one of their addresses is refused, or takes that account over. */
  members: TeamMember[];
  /** The invitations the page lists, pending or expired: inviting one of their addresses replaces it. */
  listed: ListedInvitation[];
  /** Whether this service sends email (GET /team's `emails`). */
  emails: boolean;
  onClose: () => void;
  onInvited: () => void;
}) {
  const [email, setEmail] = useState('');
  // The server replaces a pending invitation to the same address (its old link then reads "not
  // valid"); said here before sending, not found out by the invitee.
  const typed = email.trim().toLowerCase();
  const replaced = listed.find((invitation) => invitation.email.toLowerCase() === typed);
  // Someone listed in People: said before sending, whatever the server then answers (below).
  const member = members.find((person) => person.email.toLowerCase() === typed);
  const [role, setRole] = useState<Role>(roles.includes('member') ? 'member' : roles[0]!);
  /** A refusal of the address or the role shows at it; any other (already a member) under them. */
  const invite = useAction({ fields: ['email', 'role'] });
  /**
   * `replacedSentAt`: when the pending invitation this one replaced was sent, as the server said;
   * `existingRole`: the role now of the account without a password the address names, if any.
   */
  const [result, setResult] = useState<
    (SentLink & { invitation: Invitation; replacedSentAt: string | undefined; existingRole: Role | undefined }) | null
  >(null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void invite.run(async () => {
      const answer = await api<{
        invitation: Invitation;
        emailed: boolean;
        invite_url?: string;
        replaced: { created_at: string } | null;
        existing_account: { role: Role } | null;
      }>('POST', '/team/invitations', { body: { email, role } });
      setResult({
        invitation: answer.invitation,
        emailed: answer.emailed,
        url: answer.invite_url,
        replacedSentAt: answer.replaced?.created_at,
        existingRole: answer.existing_account?.role,
      });
      onInvited();
    });
  };

  if (result) {
    return (
      <Dialog title="Invitation created" onClose={onClose} wide>
        <div className="stack">
          <InvitationLinkSaying
            link={result}
            email={result.invitation.email}
            expiresAt={result.invitation.expires_at}
            emails={emails}
            emailedWhat="the invitation"
          />
          {result.replacedSentAt && (
            <p className="notice">
              This replaces the invitation sent on <Time value={result.replacedSentAt} short withTime />; its link no
              longer works.
            </p>
          )}
          {result.existingRole && (
            <p className="notice">
              {existingAccountSaying(result.invitation.email, result.existingRole, result.invitation.role)}
            </p>
          )}
          <DoneActions onDone={onClose} />
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title="Invite someone" onClose={onClose}>
      <form className="stack" onSubmit={submit}>
        <Field
          label="Email"
          type="email"
          required
          value={email}
          action={invite}
          param="email"
          onChange={(event) => setEmail(event.target.value)}
        />
        {/* Once sent, the server's refusal under the form says it, word for word, in place of this. */}
        {member && !invite.formError && <p className="notice">{memberSaying(member, role, viewerId)}</p>}
        {replaced && <p className="notice">{replacesSaying(replaced, emails)}</p>}
        <RoleChoice
          roles={roles}
          value={role}
          onChange={(next) => {
            // As a Field does: what the last submit said goes once another role is chosen.
            invite.edited('role');
            setRole(next);
          }}
          error={invite.fieldError('role')}
        />
        <FormError action={invite} />
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          {/* Named for what it does: with no email set up the link is only shown to copy, and
              "Send invitation" promised a sending that never happened. */}
          <BusyButton type="submit" className="button primary" busy={invite.busy}>
            {emails ? 'Send invitation' : 'Create invitation link'}
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * What a pending invitation's New link (no email) or Resend (email) came to: the new link to copy,
 * or where it was emailed; either way the link before it no longer works (docs/dashboard-ui.md,
 * "A pending invitation's new link").
 */
function NewLinkDialog({
  result,
  onClose,
}: {
  result: SentLink & { invitation: Invitation; emails: boolean };
  onClose: () => void;
}) {
  const { invitation } = result;
  return (
    <Dialog title={result.emailed ? 'Invitation resent' : 'New invitation link'} onClose={onClose} wide>
      <div className="stack">
        <InvitationLinkSaying
          link={result}
          email={invitation.email}
          expiresAt={invitation.expires_at}
          emails={result.emails}
          emailedWhat="a new invitation link"
        />
        <p className="notice">The invitation’s earlier link no longer works.</p>
        <DoneActions onDone={onClose} />
      </div>
    </Dialog>
  );
}

function RoleSelect({
  label,
  roles,
  value,
  onChange,
  disabled,
  hideLabel,
}: {
  label: string;
  roles: Role[];
  value: Role;
  /** The role picked, and the select it was picked in (to give the focus back to). */
  onChange: (role: Role, select: HTMLSelectElement) => void;
  disabled?: boolean;
  /** In a table row the column header says it; the label stays for screen readers. */
  hideLabel?: boolean;
}) {
  return (
    <label className="field">
      <span className={hideLabel ? 'visually-hidden' : undefined}>{label}</span>
      <select
        value={value}
        disabled={disabled}
        onChange={(event) => onChange(event.target.value as Role, event.target)}
      >
        {roles.map((role) => (
          <option key={role} value={role}>
            {ROLE_NAMES[role]}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * What a raise means for a forgotten password when this service sends no email: a reset link to
 * copy needs a maker who outranks every role the account has held here, and the role held is
 * remembered when it is lowered again (docs/dashboard-api.md, "A reset link to copy, and a role
 * held before"). Said before the raise, not discovered on the day the password is lost.
 */
const RESET_LINK_AFTER_RAISE: Record<'owner' | 'admin', string> = {
  owner:
    'Password resets: this service sends no email, so if they forget their password, only the person who runs ' +
    'this service can make them a password reset link. This stays so even if they are later made an admin or a ' +
    'member again.',
  admin:
    'Password resets: this service sends no email, so if they forget their password, only an owner can make them ' +
    'a password reset link. This stays so even if they are later made a member again.',
};

/**
 * The same rule said after the fact, in the row of someone whose Reset link is not offered only
 * because of a role they held before (GET /team's `reset_link_former_role`): the row showed a
 * lower role and no Reset link, with no word of why nor of whom to ask. Short, to fit the row's
 * actions at 390 px.
 */
const RESET_LINK_AFTER_FORMER_ROLE: Record<'owner' | 'admin', string> = {
  owner: "Was an owner: only this service's operator can reset their password.",
  admin: 'Was an admin: only an owner can reset their password.',
};

/**
 * The active API tokens someone made, for the Remove and Change role confirmations: tokens
 * belong to the workspace and keep working when their creator leaves or loses the right to
 * manage them, so the confirmation names them (docs/dashboard-ui.md, "Team").
 */
function useTokensMadeBy(user: User | null) {
  const tokens = useLoad(
    (signal) =>
      user
        ? api<List<ApiToken>>('GET', '/tokens', { signal })
        : Promise.resolve({ data: [] } as unknown as List<ApiToken>),
    `tokens-of-${user?.id ?? ''}`,
  );
  const made = (tokens.data?.data ?? []).filter((token) => !token.revoked_at && token.created_by?.id === user?.id);
  return { made, loading: tokens.loading, error: tokens.error };
}

function TokenNames({ user, tokens }: { user: User; tokens: ApiToken[] }) {
  return (
    <ul className="token-names" aria-label={`API tokens ${user.name || user.email} created`}>
      {tokens.map((token) => (
        <li key={token.id}>
          <strong>{token.name}</strong>
        </li>
      ))}
    </ul>
  );
}

/** What Remove says of the tokens the person leaves behind, with the choice to revoke them. */
function TokensLeftBehind({
  user,
  tokens,
  revoke,
  onRevokeChange,
}: {
  user: User;
  tokens: ReturnType<typeof useTokensMadeBy>;
  revoke: boolean;
  onRevokeChange: (revoke: boolean) => void;
}) {
  if (tokens.loading) return <p className="muted">Checking the API tokens they created…</p>;
  if (tokens.error) return <p className="muted">Their API tokens could not be listed: {tokens.error}</p>;
  const count = tokens.made.length;
  if (count === 0) return <p className="muted">They created no active API tokens.</p>;
  const these = count === 1 ? 'this token' : `these ${count} tokens`;
  return (
    <>
      <p>
        {count === 1
          ? 'They created an active API token, which belongs to the workspace and keeps working after they leave:'
          : `They created ${count} active API tokens, which belong to the workspace and keep working after they leave:`}
      </p>
      <TokenNames user={user} tokens={tokens.made} />
      <label className="checkbox">
        <input
          type="checkbox"
          checked={revoke}
          aria-describedby="revoke-tokens-hint"
          onChange={(event) => onRevokeChange(event.target.checked)}
        />
        Also revoke {these}
      </label>
      <p className="hint" id="revoke-tokens-hint">
        {revoke
          ? `Revoked with the removal: the next request with ${count === 1 ? 'it' : 'any of them'} is refused. This cannot be undone.`
          : `Not ticked (the default): ${count === 1 ? 'it keeps' : 'they keep'} working after the removal.`}
      </p>
    </>
  );
}

/**
 * The status line after Remove: who left and, when they left active API tokens behind, whether
 * those were revoked with them or keep working (docs/dashboard-ui.md, "Team").
 */
function removedSentence(user: User, tokenCount: number, revoked: boolean): string {
  const who = user.name || user.email;
  if (tokenCount === 0) return `${who} was removed.`;
  const tokens = tokenCount === 1 ? '1 API token' : `${tokenCount} API tokens`;
  if (revoked) return `${who} was removed and their ${tokens} ${tokenCount === 1 ? 'was' : 'were'} revoked.`;
  return `${who} was removed. Their ${tokens} ${tokenCount === 1 ? 'keeps' : 'keep'} working.`;
}

/**
 * A person's Name cell: the name, and "(you)" after the viewer's own (it has no actions, and "why
 * can I not change my role?" is answered). Someone without a name reads "—", as an empty cell
 * does, their address beside it under Email; the viewer without one reads "You", where "— (you)"
 * was a dash and a bracket.
 */
function NameCell({ user, isViewer }: { user: User; isViewer: boolean }) {
  if (!isViewer) return <Clipped text={user.name} />;
  if (!user.name) return <>You</>;
  return (
    <>
      <Clipped text={user.name} />
      <span className="muted"> (you)</span>
    </>
  );
}

/** Where an invitation's link ends: its time, or, once it has, "Expired" and when (as a revoked token's). */
function InvitationExpiry({ invitation }: { invitation: ListedInvitation }) {
  const time = <Time value={invitation.expires_at} short withTime />;
  return invitation.status === 'expired' ? <span className="badge">Expired {time}</span> : time;
}

/** Which table a row action's note is in. */
type RowTable = 'people' | 'invitations';

/** The id of the row before `id` in `rows`; null for the first: where a row that goes leaves its note. */
function rowBefore(rows: ReadonlyArray<{ id: string }>, id: string): string | null {
  return rows[rows.findIndex((row) => row.id === id) - 1]?.id ?? null;
}

function inviterLabel(invitation: Invitation): string {
  const by = invitation.invited_by;
  if (!by) return '—';
  return typeof by === 'string' ? by : by.name || by.email;
}

/**
 * An email address in a Team column: one clipped line in a table; in a stacked row (a phone), on
 * as many lines as it takes, each ending after its `@`, a dot, `+`, `_` or `-` (BreakableEmail),
 * where it broke anywhere ("ops@northwind.exampl" / "e" at 320 px). Other text as it is.
 */
function EmailText({ text }: { text: string }) {
  return <Clipped text={text}>{text.includes('@') ? <BreakableEmail email={text} /> : text}</Clipped>;
}

export default function Team() {
  const { me, refresh } = useSession();
  const { manage_team: canManage, assignable_roles: roles } = me.permissions;
  const team = useLoad((signal) => api<TeamData>('GET', '/team', { signal }), 'team');
  const [inviting, setInviting] = useState(false);
  const [removing, setRemoving] = useState<User | null>(null);
  /** Remove's choice to revoke the API tokens the person made: not ticked unless asked. */
  const [revokeTokens, setRevokeTokens] = useState(false);
  /** An invitation whose Cancel invitation awaits its confirmation (it cannot be undone). */
  const [cancelling, setCancelling] = useState<ListedInvitation | null>(null);
  /** Reset link, which asks nothing first: its refusal shows under the person's row. */
  const resetting = useAction();
  /**
   * What a confirmation confirms (role change, remove, cancel invitation; one open at a time):
   * a refusal shows in that confirmation (ConfirmDialog), never again on the page.
   */
  const confirmed = useAction();
  const [resetLink, setResetLink] = useState<(SentLink & { user: User }) | null>(null);
  /**
   * An invitation's New link or Resend, which asks nothing first (the invitation stays, its old
   * link ends): its refusal shows under the invitation's row (the row note), its result in
   * NewLinkDialog.
   */
  const renewing = useAction();
  const [newLink, setNewLink] = useState<(SentLink & { invitation: Invitation; emails: boolean }) | null>(null);
  /**
   * Where the page says what the last action on a row came to (its note: "Saved: …", "… was
   * removed.", "Invitation to … canceled.", a refused Reset link or New link): in that row's
   * table, under the row, or, for a row that is gone, where it was (after the row before it). It
   * was a line above the table, out of sight on a phone when the row was further down
   * (docs/dashboard-ui.md, "A row action's message"). One note at a time, the last action's.
   */
  const [rowNote, setRowNote] = useState<{ table: RowTable; after: string | null } | null>(null);
  /**
   * An action on a row begins (a click on Reset link or New link, a confirmation opening): what
   * the last one said goes, so "Saved: …" never stands beside a later refusal nor under another
   * row, and the note's live region moves to this row, empty, before it has anything to say.
   */
  const startRowAction = (table: RowTable, after: string | null) => {
    resetting.clear();
    confirmed.clear();
    renewing.clear();
    setRowNote({ table, after });
  };
  /** The note of `table`'s rows, when the last row action was there. */
  const noteIn = (table: RowTable): RowNote | null =>
    rowNote?.table === table
      ? {
          after: rowNote.after,
          saying: Boolean(confirmed.done || resetting.error || renewing.error),
          content: (
            <>
              <LiveStatus>{confirmed.done}</LiveStatus>
              {resetting.error && <ErrorNote message={resetting.error} />}
              {renewing.error && <ErrorNote message={renewing.error} />}
            </>
          ),
        }
      : null;

  const makeResetLink = (user: User) => {
    startRowAction('people', user.id);
    void resetting.run(async () => {
      try {
        const answer = await api<{ emailed: boolean; reset_url?: string }>(
          'POST',
          `/team/members/${user.id}/reset-link`,
        );
        setResetLink({ user, emailed: answer.emailed, url: answer.reset_url });
      } catch (failure) {
        // Refused for their role (403), most often changed in another tab: the team is read
        // again, so the row shows the role beside the refusal's words. Someone removed (404)
        // keeps their row, whose refusal says they are gone.
        if (failure instanceof ApiError && failure.status === 403) team.reload();
        throw failure;
      }
    });
  };
  const makeNewLink = (invitation: ListedInvitation) => {
    startRowAction('invitations', invitation.id);
    const emails = team.data?.emails ?? false;
    void renewing.run(async () => {
      try {
        const answer = await api<{ invitation: Invitation; emailed: boolean; invite_url?: string }>(
          'POST',
          `/team/invitations/${invitation.id}/new-link`,
        );
        setNewLink({ invitation: answer.invitation, emailed: answer.emailed, url: answer.invite_url, emails });
        // Its row shows the new expiry and who made the link (now its inviter) at once; an
        // expired invitation is pending again, its new link working.
        if (team.data) {
          team.set({
            ...team.data,
            invitations: team.data.invitations.map((listed) =>
              listed.id === invitation.id ? { ...listed, ...answer.invitation, status: 'pending' } : listed,
            ),
          });
        }
        team.reload();
      } catch (failure) {
        // Refused for its role (403), most often after a change in another tab: the team is read
        // again, so the row offers only what the server allows. Gone (404): the row stays, with
        // the refusal's words under it.
        if (failure instanceof ApiError && failure.status === 403) team.reload();
        throw failure;
      }
    });
  };
  /**
   * A role picked in a row's select, not yet saved: the select shows it while the confirmation
   * asks (a closed select changes on a single arrow key in Chromium, so picking never saves).
   * `select`: where the focus goes back once the confirmation has closed.
   */
  const [changing, setChanging] = useState<{ user: User; role: Role; select: HTMLSelectElement } | null>(null);
  // Only a demotion to member takes away the managing of tokens: that confirmation names theirs.
  const demoting = changing && changing.role === 'member' && changing.user.role !== 'member' ? changing.user : null;
  const tokensOfRemoved = useTokensMadeBy(removing);
  const tokensOfDemoted = useTokensMadeBy(demoting);
  const changeRole = async (user: User, role: Role) => {
    const saved = await confirmed.run(
      async () => {
        await api('PATCH', `/team/members/${user.id}`, { body: { role } });
        if (team.data) {
          team.set({
            ...team.data,
            members: team.data.members.map((member) => (member.id === user.id ? { ...member, role } : member)),
          });
        }
        // Asked again, not taken from the answer (their user only): a role change also cancels
        // the pending invitations they sent for a role the new one may not give.
        team.reload();
        if (user.id === me.user.id) refresh();
      },
      { done: `Saved: ${user.name || user.email} is now ${withArticle(role)}.` },
    );
    // Saved, the confirmation closes and the select shows the new role. Refused, it stays open
    // with the server's words; closing it then puts the select back to the role the server has.
    // Either way the confirmation gives the focus back to the select as it closes (Dialog).
    if (saved) setChanging(null);
  };
  const remove = (user: User, tokenCount: number, revoke: boolean) => {
    void confirmed.run(
      async () => {
        await api('DELETE', `/team/members/${user.id}`, revoke ? { body: { revoke_tokens: true } } : {});
        setRemoving(null);
        // Gone from the table as the confirmation closes, the note saying so in its place.
        if (team.data) {
          team.set({ ...team.data, members: team.data.members.filter((member) => member.id !== user.id) });
        }
        team.reload();
      },
      { done: removedSentence(user, tokenCount, revoke) },
    );
  };
  /**
   * As Remove does: the row leaves its table as the confirmation closes, so the confirmation,
   * whose opener is gone, gives the focus to the page's content (Dialog) rather than to the
   * button, which the reload then took away, dropping the focus to the body; and the note where
   * the row was says so. It said nothing before.
   */
  const cancelInvitation = (invitation: ListedInvitation) => {
    void confirmed.run(
      async () => {
        await api('DELETE', `/team/invitations/${invitation.id}`);
        setCancelling(null);
        if (team.data) {
          team.set({
            ...team.data,
            invitations: team.data.invitations.filter((listed) => listed.id !== invitation.id),
          });
        }
        team.reload();
      },
      { done: `Invitation to ${invitation.email} canceled.` },
    );
  };
  /** An admin manages admins and members only; nobody removes themselves here. */
  const manageable = (user: User) => canManage && user.id !== me.user.id && roles.includes(user.role);

  const memberColumns: Column<TeamMember>[] = [
    { header: 'Name', cell: (user) => <NameCell user={user} isViewer={user.id === me.user.id} /> },
    { header: 'Email', cell: (user) => <EmailText text={user.email} />, fill: true },
    {
      header: 'Role',
      cell: (user) =>
        manageable(user) ? (
          <RoleSelect
            label={`Role of ${user.email}`}
            hideLabel
            roles={roles}
            value={changing?.user.id === user.id ? changing.role : user.role}
            onChange={(role, select) => {
              if (role === user.role) return;
              startRowAction('people', user.id);
              setChanging({ user, role, select });
            }}
          />
        ) : (
          ROLE_NAMES[user.role]
        ),
    },
    { header: 'Last sign-in', cell: (user) => <Time value={user.last_sign_in_at} empty="Never" short withTime /> },
  ];
  const invitationColumns: Column<ListedInvitation>[] = [
    { header: 'Email', cell: (invitation) => <EmailText text={invitation.email} />, fill: true },
    { header: 'Role', cell: (invitation) => ROLE_NAMES[invitation.role] },
    { header: 'Invited by', cell: (invitation) => <EmailText text={inviterLabel(invitation)} /> },
    { header: 'Expires', cell: (invitation) => <InvitationExpiry invitation={invitation} /> },
  ];
  if (canManage) {
    memberColumns.push({
      header: 'Actions',
      actions: true,
      cell: (user) =>
        manageable(user) && (
          <>
            {/* Only where the server would make one: not for someone who held a role at or
                above the viewer's, when the link would be shown to copy (GET /team). */}
            {user.can_make_reset_link && (
              <>
                <button type="button" className="button small" onClick={() => makeResetLink(user)}>
                  Password reset link
                </button>{' '}
              </>
            )}
            {/* Where Reset link would be, why it is not, when only a role held before keeps it. */}
            {user.reset_link_former_role && (
              <span className="hint reset-link-absent">
                {RESET_LINK_AFTER_FORMER_ROLE[user.reset_link_former_role]}
              </span>
            )}
            <button
              type="button"
              className="button small danger-outline"
              onClick={() => {
                // The note goes where the row will have been: after the row before it.
                startRowAction('people', rowBefore(team.data?.members ?? [], user.id));
                setRevokeTokens(false);
                setRemoving(user);
              }}
            >
              Remove
            </button>
          </>
        ),
    });
    invitationColumns.push({
      header: 'Actions',
      actions: true,
      cell: (invitation) => (
        <>
          {/* Only where the server would make one (GET /team's can_make_new_link): Resend when
              this service sends email, New link (shown to copy) when it does not. */}
          {invitation.can_make_new_link && (
            <>
              <BusyButton
                type="button"
                className="button small"
                busy={renewing.busy && rowNote?.after === invitation.id}
                onClick={() => makeNewLink(invitation)}
              >
                {team.data?.emails ? 'Resend' : 'New link'}
              </BusyButton>{' '}
            </>
          )}
          {roles.includes(invitation.role) && (
            <button
              type="button"
              className="button small"
              onClick={() => {
                // As for Remove: the note goes where the row will have been.
                startRowAction('invitations', rowBefore(team.data?.invitations ?? [], invitation.id));
                setCancelling(invitation);
              }}
            >
              Cancel invitation
            </button>
          )}
        </>
      ),
    });
  }

  return (
    <>
      <PageHeader title="Team">
        {canManage && (
          <button type="button" className="button primary" onClick={() => setInviting(true)}>
            Invite
          </button>
        )}
      </PageHeader>
      {team.loading && !team.data && <Loading />}
      {team.error && <ErrorNote message={team.error} onRetry={team.reload} />}
      {team.data && (
        <>
          <DataTable caption="People" columns={memberColumns} rows={team.data.members} stacks note={noteIn('people')} />
          {/* Kept while its note is there, the last invitation canceled: the note says so where
              the row was, in the live region it had before. */}
          {(team.data.invitations.length > 0 || rowNote?.table === 'invitations') && (
            <>
              <h2>Invitations</h2>
              <DataTable
                caption="Invitations"
                columns={invitationColumns}
                rows={team.data.invitations}
                stacks
                note={noteIn('invitations')}
              />
            </>
          )}
        </>
      )}
      {inviting && (
        <InviteDialog
          roles={roles}
          viewerId={me.user.id}
          members={team.data?.members ?? []}
          listed={team.data?.invitations ?? []}
          emails={team.data?.emails ?? false}
          onClose={() => setInviting(false)}
          onInvited={team.reload}
        />
      )}
      {newLink && <NewLinkDialog result={newLink} onClose={() => setNewLink(null)} />}
      {resetLink && (
        <Dialog title="Password reset link" onClose={() => setResetLink(null)} wide>
          <div className="stack">
            {resetLink.emailed ? (
              <p>
                We emailed a reset link to {resetLink.user.email}: it sets a new password, works once, for one hour, and
                ends their other sessions.
              </p>
            ) : resetLink.url === undefined ? (
              <p role="alert">
                The email to {resetLink.user.email} could not be sent, and a reset link for their role is not shown to
                copy. Try again in a while.
              </p>
            ) : (
              <>
                <p>
                  Send this link to {resetLink.user.email}: it sets a new password, works once, for one hour, and ends
                  their other sessions.
                </p>
                <CopyField label="Reset link" value={resetLink.url} />
              </>
            )}
            <DoneActions onDone={() => setResetLink(null)} />
          </div>
        </Dialog>
      )}
      {changing && (
        <ConfirmDialog
          title="Change role"
          message={
            <>
              <p>
                Make <strong>{changing.user.name || changing.user.email}</strong> {withArticle(changing.role)}?{' '}
                {ROLE_SENTENCES[changing.role]}
              </p>
              {team.data?.emails === false && changing.role !== 'member' && changing.role !== changing.user.role && (
                <p>{RESET_LINK_AFTER_RAISE[changing.role]}</p>
              )}
              {demoting && tokensOfDemoted.made.length > 0 && (
                <>
                  <p>
                    The API tokens they created keep working; revoke them in Settings › API tokens if they should not:
                  </p>
                  <TokenNames user={demoting} tokens={tokensOfDemoted.made} />
                </>
              )}
            </>
          }
          confirmLabel="Change role"
          action={confirmed}
          onConfirm={() => void changeRole(changing.user, changing.role)}
          onClose={() => setChanging(null)}
          returnFocusTo={changing.select}
        />
      )}
      {removing && (
        <ConfirmDialog
          title="Remove from the workspace"
          message={
            <div className="stack tight">
              <p>
                Remove <strong>{removing.name || removing.email}</strong>? Their sessions end at once.
              </p>
              <TokensLeftBehind
                user={removing}
                tokens={tokensOfRemoved}
                revoke={revokeTokens}
                onRevokeChange={setRevokeTokens}
              />
            </div>
          }
          confirmLabel={
            revokeTokens && tokensOfRemoved.made.length > 0
              ? `Remove and revoke ${tokensOfRemoved.made.length === 1 ? 'token' : 'tokens'}`
              : 'Remove'
          }
          action={confirmed}
          onConfirm={() =>
            remove(removing, tokensOfRemoved.made.length, revokeTokens && tokensOfRemoved.made.length > 0)
          }
          onClose={() => setRemoving(null)}
        />
      )}
      {cancelling && (
        <ConfirmDialog
          title="Cancel invitation"
          message={
            <p>
              Cancel the invitation of <strong>{cancelling.email}</strong>? Its link stops working; you can invite them
              again.
            </p>
          }
          confirmLabel="Cancel invitation"
          cancelLabel="Keep invitation"
          action={confirmed}
          onConfirm={() => cancelInvitation(cancelling)}
          onClose={() => setCancelling(null)}
        />
      )}
    </>
  );
}
