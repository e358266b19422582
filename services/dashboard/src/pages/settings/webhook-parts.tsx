import { useId, useRef, useState, type FormEvent } from 'react';
import { api, ApiError } from '../../api/client.js';
import type { Attempt, CreatedEndpoint, Endpoint } from '../../api/types.js';
import { BreakableUrl } from '../../components/BreakableUrl.js';
import { SignatureHowTo } from '../../components/ApiReference.js';
import { CopyField } from '../../components/CopyField.js';
import { Dialog, DoneActions } from '../../components/Dialog.js';
import { Facts } from '../../components/Facts.js';
import { Field, FormError, NAME_LIMIT } from '../../components/Field.js';
import { EventTypeWithCode } from '../../components/Labels.js';
import { Clipped } from '../../components/ListPage.js';
import { errorBesideStatus } from '../../format.js';
import { attemptOutcomeLabel, EVENT_TYPE_DESCRIPTIONS, eventTypeLabel } from '../../labels.js';
import { Time } from '../../components/Time.js';
import { LiveStatus } from '../../components/states.js';
import { useAction } from '../../use-action.js';
import { BusyButton } from '../../components/BusyButton.js';

/** What the page can tell before asking the server; the server's own refusal shows at the field too. */
function urlProblem(url: string): string | null {
  if (!url) return null;
  if (!/^https:\/\//i.test(url)) return 'The URL must start with https://';
  try {
    const parsed = new URL(url);
    if (!parsed.hostname) return 'The URL needs a host name.';
  } catch {
    return 'This is not a valid URL.';
  }
  return null;
}

/**
 * The events an endpoint subscribes to, in words (labels.ts, as the Security log says them). In a
 * list cell (`clipped`) the one type's words, or "3 events", each with its code in the title; on the endpoint's
 * page each type's words over its code: the engineer setting up a receiver matches the codes.
 */
export function EventsCell({ events, clipped = false }: { events: string[]; clipped?: boolean }) {
  if (events.length === 0) return <span>All events</span>;
  if (clipped) {
    const words = events.map(eventTypeLabel).join(', ');
    const withCodes = events.map((type) => `${eventTypeLabel(type)} (${type})`).join(', ');
    if (events.length === 1) return <Clipped className="event-list" text={words} title={withCodes} />;
    // More than one: how many, which fits the narrow column whole, with every one on hover and
    // for a screen reader; the endpoint's page lists them. One line of their words was cut off
    // mid-name ("Recovery opened, Recov…"), which gave no hint of how many more there were.
    return (
      <span className="event-count" title={withCodes}>
        {events.length} events<span className="visually-hidden">: {words}</span>
      </span>
    );
  }
  return (
    <ul className="event-list">
      {events.map((type) => (
        <li key={type}>
          <EventTypeWithCode type={type} />
        </li>
      ))}
    </ul>
  );
}

/** Why an endpoint is off, when it is: by hand, or by the worker after 10 failures in a row. */
function disabledWhy(endpoint: Endpoint): string | null {
  if (endpoint.enabled) return null;
  return endpoint.disabled_reason === 'consecutive_failures'
    ? 'Turned off after 10 failed deliveries in a row'
    : 'Turned off by hand';
}

/**
 * An endpoint's on/off state and why it is off. Owners and admins get the Enabled switch; a role
 * that may not change it reads the state in words (docs/dashboard-ui.md, "Roles": a control that
 * is not offered rather than one that fails), where a disabled switch looked almost like a
 * working one, said nothing of why, and was skipped by Tab.
 */
export function EnabledState({
  endpoint,
  canManage,
  onChange,
  inList = false,
}: {
  endpoint: Endpoint;
  canManage: boolean;
  onChange: (endpoint: Endpoint) => void;
  /**
   * In a list cell: the reason on a quieter second line, wrapping in a narrow column (one line
   * clipped at 16rem made the endpoints table wider than its box at 1280 px); else on its own
   * line, as on a detail page.
   */
  inList?: boolean;
}) {
  const why = disabledWhy(endpoint);
  return (
    <>
      {canManage ? (
        <EnabledSwitch endpoint={endpoint} onChange={onChange} />
      ) : (
        <span>{endpoint.enabled ? 'Enabled' : 'Disabled'}</span>
      )}
      {why && <span className={inList ? 'secondary off-reason' : 'hint block'}>{why}</span>}
    </>
  );
}

/** The Enabled switch: turns the endpoint on or off on the server, then reports the new state. */
function EnabledSwitch({ endpoint, onChange }: { endpoint: Endpoint; onChange: (endpoint: Endpoint) => void }) {
  const toggling = useAction();
  // Every row's switch is named "Enabled" (the spec's name for it): its description says which
  // endpoint it turns on or off, for a screen reader moving from switch to switch.
  const describedBy = useId();
  const toggle = () =>
    void toggling.run(async () =>
      onChange(await api<Endpoint>('POST', `/webhooks/${endpoint.id}/${endpoint.enabled ? 'disable' : 'enable'}`)),
    );
  return (
    <span className="switch-wrap">
      <BusyButton
        type="button"
        role="switch"
        aria-checked={endpoint.enabled}
        aria-describedby={describedBy}
        className="switch"
        busy={toggling.busy}
        onClick={toggle}
      >
        <span className="visually-hidden">Enabled</span>
        <span className="switch-thumb" aria-hidden="true" />
      </BusyButton>
      <span id={describedBy} hidden>
        {endpoint.name}
      </span>
      {toggling.error && (
        <span className="field-error" role="alert">
          {toggling.error}
        </span>
      )}
    </span>
  );
}

/**
 * What an edit sends: only the fields the person changed from `seen` (the endpoint as the page
 * last read it), each with the value it had then as `expected`, so a save does not undo what
 * another tab changed meanwhile, in these fields (the server refuses: 409 `endpoint_changed`)
 * or in others (not sent). Unchanged, the name alone is sent, as seen: the server writes nothing.
 */
function endpointEdit(seen: Endpoint, fields: { name: string; url: string; events: string[] }) {
  const changed = {
    ...(fields.name !== seen.name && { name: fields.name }),
    ...(fields.url !== seen.url && { url: fields.url }),
    ...(!sameTypes(fields.events, seen.events) && { events: fields.events }),
  };
  const sent = Object.keys(changed).length > 0 ? changed : { name: seen.name };
  const expected = Object.fromEntries(Object.keys(sent).map((field) => [field, seen[field as keyof typeof sent]]));
  return { ...sent, expected };
}

function sameTypes(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((type) => b.includes(type));
}

export function EndpointFormDialog({
  endpoint,
  eventTypes,
  onClose,
  onSaved,
  onStale,
}: {
  endpoint: Endpoint | null;
  eventTypes: string[];
  onClose: () => void;
  onSaved: (saved: Endpoint | CreatedEndpoint) => void;
  /** The endpoint as it is now, read again after an edit was refused as made from stale values. */
  onStale?: (current: Endpoint) => void;
}) {
  const [name, setName] = useState(endpoint?.name ?? '');
  const [url, setUrl] = useState(endpoint?.url ?? '');
  /**
   * All events (an empty `events` list: every type, those added later too), or the types chosen,
   * which may be none while the person picks: Save then says so at the types, sending nothing.
   */
  const [allEvents, setAllEvents] = useState((endpoint?.events.length ?? 0) === 0);
  const [chosen, setChosen] = useState<string[]>(endpoint?.events ?? []);
  const events = allEvents ? [] : chosen;
  /** Whether Save was refused here for no type chosen; said at the types until one is ticked. */
  const [noneChosen, setNoneChosen] = useState(false);
  const firstType = useRef<HTMLInputElement>(null);
  /** The endpoint as last read: what an edit's `expected` says it saw (endpointEdit). */
  const [seen, setSeen] = useState(endpoint);
  /** Whether a save was refused as made from stale values: `seen` is then shown beside what was typed. */
  const [refusedStale, setRefusedStale] = useState(false);
  /** A refusal of the name or the URL shows at that field; any other (an event type) under the form. */
  const save = useAction({ fields: ['name', 'url'] });
  const groupId = useId();
  const problem = urlProblem(url);

  /** The events as they now are: All events, or these types. */
  const setEvents = (next: string[]) => {
    setAllEvents(next.length === 0);
    setChosen(next);
  };

  const toggle = (type: string, checked: boolean) => {
    // As a Field does: a refusal under the form (an event type) was about the events as sent.
    save.edited('events');
    setNoneChosen(false);
    // Ticking a type under All events chooses that type alone.
    const previous = allEvents ? [] : chosen;
    setAllEvents(false);
    setChosen(
      checked
        ? eventTypes.filter((each) => each === type || previous.includes(each))
        : previous.filter((each) => each !== type),
    );
  };

  /**
   * All events ticked clears the types; unticked, it goes on to choosing them, every type left
   * ticked (what All events sent until now, bar types added later), for the person to untick
   * those they do not want (docs/dashboard-ui.md, "Endpoint form").
   */
  const toggleAll = (checked: boolean) => {
    save.edited('events');
    setNoneChosen(false);
    setAllEvents(checked);
    setChosen(checked ? [] : [...eventTypes]);
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (problem) return;
    if (!allEvents && chosen.length === 0) {
      // Sent, an empty list would be All events: not what the person left ticked.
      setNoneChosen(true);
      firstType.current?.focus();
      return;
    }
    void save.run(
      async () => {
        if (!seen) return onSaved(await api<CreatedEndpoint>('POST', '/webhooks', { body: { name, url, events } }));
        try {
          onSaved(
            await api<Endpoint>('PATCH', `/webhooks/${seen.id}`, { body: endpointEdit(seen, { name, url, events }) }),
          );
        } catch (failure) {
          if (failure instanceof ApiError && failure.code === 'endpoint_changed') {
            // The refusal carries the endpoint as it is now (read under the update's lock); a
            // server of the release before sent it without, so it is read then.
            const sent = failure.body.endpoint as Endpoint | undefined;
            const current = sent?.id === seen.id ? sent : await api<Endpoint>('GET', `/webhooks/${seen.id}`);
            // What the person changed stays as typed; a field they left as it was takes the value
            // it has now, so Save again does not put back what the other tab changed there.
            setName((typed) => (typed === seen.name ? current.name : typed));
            setUrl((typed) => (typed === seen.url ? current.url : typed));
            if (sameTypes(events, seen.events)) setEvents(current.events);
            // The next Save says it saw this.
            setSeen(current);
            setRefusedStale(true);
            onStale?.(current);
          }
          throw failure;
        }
      },
      { staysBusy: true },
    );
  };

  return (
    <Dialog title={endpoint ? 'Edit endpoint' : 'Add endpoint'} onClose={onClose} wide>
      {/* Validated by the browser, as the other forms are: Save, enabled while a field is empty,
          says which at the field rather than staying disabled with no reason given. */}
      <form className="stack" onSubmit={submit}>
        <Field
          label="Name"
          required
          limit={NAME_LIMIT}
          value={name}
          action={save}
          param="name"
          onChange={(event) => setName(event.target.value)}
        />
        {/* The check made as you type, else the server's refusal (credentials, a private address):
            only the latter is announced when it appears. */}
        <Field
          label="URL"
          type="url"
          inputMode="url"
          required
          placeholder="https://example.com/webhooks"
          hint="Must start with https://. Deliveries are POSTed here, signed."
          error={problem}
          action={save}
          param="url"
          value={url}
          onChange={(event) => setUrl(event.target.value.trim())}
        />
        <fieldset
          className="checkboxes"
          aria-describedby={noneChosen ? `${groupId}-none ${groupId}-hint` : `${groupId}-hint`}
        >
          <legend>Events to send</legend>
          <label className="checkbox all-events">
            <input type="checkbox" checked={allEvents} onChange={(event) => toggleAll(event.target.checked)} />
            All events
          </label>
          {/* Each type shows its words (labels.ts), under them its code, small, for the engineer
              who matches it in a receiver, and what it means in a sentence. The checkbox is named
              by the code (dashboard.md: the browser tests find it by it); its words and the
              sentence are its description. */}
          {eventTypes.map((type, index) => (
            <label className="checkbox event-choice" key={type}>
              <input
                ref={index === 0 ? firstType : undefined}
                type="checkbox"
                aria-labelledby={`${groupId}-${type}`}
                aria-describedby={
                  EVENT_TYPE_DESCRIPTIONS[type]
                    ? `${groupId}-${type}-words ${groupId}-${type}-means`
                    : `${groupId}-${type}-words`
                }
                aria-invalid={noneChosen || undefined}
                checked={!allEvents && chosen.includes(type)}
                onChange={(event) => toggle(type, event.target.checked)}
              />
              <span>
                <span id={`${groupId}-${type}-words`}>{eventTypeLabel(type)}</span>
                <code className="secondary" id={`${groupId}-${type}`}>
                  {type}
                </code>
                {EVENT_TYPE_DESCRIPTIONS[type] && (
                  <span className="hint block" id={`${groupId}-${type}-means`}>
                    {EVENT_TYPE_DESCRIPTIONS[type]}
                  </span>
                )}
              </span>
            </label>
          ))}
          {noneChosen && (
            <span className="field-error" role="alert" id={`${groupId}-none`}>
              Choose at least one event type, or tick All events.
            </span>
          )}
          <span className="hint" id={`${groupId}-hint`}>
            All events includes types added later. Unticking it ticks every type: then untick those you do not want.
          </span>
        </fieldset>
        <FormError action={save} />
        {refusedStale && seen && (
          <div className="notice stack" role="note" aria-label="The endpoint as it is now">
            <div>
              The endpoint as it is now. The fields you had not changed show it too; Save again saves what is above:
            </div>
            <Facts
              facts={[
                ['Name', seen.name],
                ['URL', <BreakableUrl url={seen.url} />],
                ['Events', <EventsCell events={seen.events} />],
              ]}
            />
          </div>
        )}
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <BusyButton type="submit" className="button primary" busy={save.busy} disabled={!!problem}>
            Save
          </BusyButton>
        </div>
      </form>
    </Dialog>
  );
}

export function SecretDialog({
  title,
  secret,
  note,
  onClose,
}: {
  title: string;
  secret: string;
  note?: string;
  onClose: () => void;
}) {
  return (
    <Dialog title={title} onClose={onClose} wide>
      <div className="stack">
        <p className="notice">Copy the signing secret now: it is shown only once.</p>
        <CopyField label="Signing secret" value={secret} />
        <SignatureHowTo />
        {note && <p className="muted">{note}</p>}
        <DoneActions onDone={onClose} />
      </div>
    </Dialog>
  );
}

/**
 * The outcome of Send test or Resend: HTTP status, duration and error. The error is shown
 * only when it says more than the status ("HTTP 404" alone would be said twice). `note`: a
 * sentence after it (a test does not count toward the endpoint's failures).
 */
export function AttemptResult({
  attempt,
  label,
  note,
}: {
  /** Null until there is one: the live region is on the page before it (LiveStatus). */
  attempt: Attempt | null;
  label: string;
  note?: string;
}) {
  if (!attempt) return <LiveStatus>{null}</LiveStatus>;
  const ok = attempt.outcome === 'succeeded';
  const status = attempt.http_status !== null ? `HTTP ${attempt.http_status}` : 'No HTTP status';
  const error = errorBesideStatus(attempt.error, attempt.http_status);
  return (
    <LiveStatus className={ok ? 'result ok' : 'result failed'}>
      <strong>{label}</strong>{' '}
      <span>
        {status} · {attempt.duration_ms} ms · {attemptOutcomeLabel(attempt.outcome)}
      </span>
      {error && <span className="result-error">{error}</span>}
      {note && <span className="muted"> {note}</span>}
      <span className="muted">
        {' '}
        <Time value={attempt.attempted_at} />
      </span>
    </LiveStatus>
  );
}
