import { useEffect, useId, useState, type FormEvent } from 'react';
import { CURRENCY_PATTERN, DEFAULT_FX_RATES_PER_USD } from '@retention/core/money';
import { majorUnitsText, minorUnitsOf } from '../amounts.js';
import { formatMoney } from '../format.js';

/**
 * The Campaigns list's Amount filter (docs/dashboard-ui.md, "Amount"): a currency ("Any
 * currency" unless one is applied) and a minimum and a maximum in its major units, as a person
 * types them (`100`, `99.50`), which the address keeps as the API's `currency`, `min_amount` and
 * `max_amount` (minor units). With both boxes empty the currency applies as soon as it is chosen,
 * as Status does; with an amount the form is applied as a whole (Enter or Apply, one history
 * entry), as the search box is, since a box's amount means another sum in another currency: each
 * box is checked first, and a bad amount is said at its box and not applied, the list staying the
 * one the address asks for. The fields show what is applied until edited, and again once the
 * address changes.
 */

/** The amount filters as the address and the API name them. */
export interface AmountFilters {
  currency: string;
  min_amount: string;
  max_amount: string;
}

/**
 * The currencies offered: any (`''`), the workspace's display currency, the applied one (a code
 * from the address that has no shipped rate, `xyz`, is still a code: offered as itself), then
 * those with a shipped rate, A to Z.
 */
function currencyChoices(display: string, applied: string): string[] {
  const common = Object.keys(DEFAULT_FX_RATES_PER_USD).sort();
  const first = ['', display, ...(CURRENCY_PATTERN.test(applied) ? [applied] : [])];
  return [...new Set([...first, ...common])];
}

/** An amount for the line saying what is applied: `$100.00`, or its code and digits past a safe number. */
function amountWords(minor: string, currency: string): string {
  const units = Number(minor);
  return Number.isSafeInteger(units)
    ? formatMoney(units, currency)
    : `${currency.toUpperCase()} ${majorUnitsText(minor, currency)}`;
}

/** "Amount: $100.00 to $500.00", "Amount: $100.00 or more", "Currency: USD only"; null when none is applied. */
function appliedAmount({ currency, min_amount: min, max_amount: max }: AmountFilters): string | null {
  if (!CURRENCY_PATTERN.test(currency)) return null;
  if (min && max) return `Amount: ${amountWords(min, currency)} to ${amountWords(max, currency)}`;
  if (min) return `Amount: ${amountWords(min, currency)} or more`;
  if (max) return `Amount: ${amountWords(max, currency)} or less`;
  return `Currency: ${currency.toUpperCase()} only`;
}

type Box = 'min_amount' | 'max_amount';

/** The line under the fields while nothing is applied: what the boxes take (one line at 320 px). */
const HINT = 'Both ends included, as written: 100 or 99.50.';

export function AmountFilter({
  applied,
  displayCurrency,
  onApply,
  problemIds,
}: {
  /** The address's filters, its currency lowercased (`JPY` is `jpy`). */
  applied: AmountFilters;
  /** The workspace's display currency: offered first after "Any currency". */
  displayCurrency: string;
  onApply: (next: AmountFilters) => void;
  /** Each field's note when the address's value is one the list does not have (FilterStates). */
  problemIds: Partial<Record<keyof AmountFilters, string | undefined>>;
}) {
  const id = useId();
  const [typed, setTyped] = useState<Partial<AmountFilters>>({});
  /** Why the amounts typed last were not applied, and at which fields; gone at the next edit. */
  const [refusal, setRefusal] = useState<{ boxes: (keyof AmountFilters)[]; message: string } | null>(null);
  // The address changed (applied, Back, Clear filters): the fields show it again.
  const key = `${applied.currency}|${applied.min_amount}|${applied.max_amount}`;
  useEffect(() => {
    setTyped({});
    setRefusal(null);
  }, [key]);
  // A currency the address gives that is no code (hand-edited) is said by the list's note; the
  // select shows "Any currency" in its place.
  const appliedCurrency = CURRENCY_PATTERN.test(applied.currency) ? applied.currency : '';
  const currency = typed.currency ?? appliedCurrency;
  const text = (box: Box) => typed[box] ?? majorUnitsText(applied[box], appliedCurrency);
  const boxesEmpty = text('min_amount').trim() === '' && text('max_amount').trim() === '';
  const edit = (next: Partial<AmountFilters>) => {
    setRefusal(null);
    setTyped((previous) => ({ ...previous, ...next }));
  };
  const choose = (code: string) => {
    // Nothing in the boxes: the currency is the whole filter, applied at once, as Status is.
    if (boxesEmpty) {
      setRefusal(null);
      onApply({ currency: code, min_amount: '', max_amount: '' });
    } else edit({ currency: code });
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next: AmountFilters = { currency, min_amount: '', max_amount: '' };
    if (!currency && !boxesEmpty) {
      const boxes = (['min_amount', 'max_amount'] as const).filter((box) => text(box).trim() !== '');
      setRefusal({ boxes: ['currency', ...boxes], message: 'Choose a currency: amounts compare only within one.' });
      return;
    }
    for (const box of ['min_amount', 'max_amount'] as const) {
      if (text(box).trim() === '') continue;
      const amount = minorUnitsOf(text(box), currency);
      if ('problem' in amount) {
        setRefusal({ boxes: [box], message: amount.problem });
        return;
      }
      next[box] = amount.minor;
    }
    if (next.min_amount && next.max_amount && BigInt(next.min_amount) > BigInt(next.max_amount)) {
      setRefusal({ boxes: ['min_amount'], message: 'The minimum is more than the maximum.' });
      return;
    }
    setRefusal(null);
    onApply(next);
  };

  // While the address's amounts are refused (its note says why, in place of the list), nothing
  // is applied: no line may say what is.
  const refused = Object.values(problemIds).some(Boolean);
  const summary = refused ? null : appliedAmount(applied);
  // A currency chosen for the amounts in the boxes waits for Apply: the line says so.
  const waiting = currency !== appliedCurrency && !boxesEmpty && currency !== '';
  const refusalId = `${id}-refusal`;
  const summaryId = `${id}-applied`;
  const at = (box: keyof AmountFilters) => refusal?.boxes.includes(box) ?? false;
  const describedBy = (box: keyof AmountFilters) =>
    [at(box) ? refusalId : '', problemIds[box] ?? '', summaryId].filter(Boolean).join(' ') || undefined;
  const invalid = (box: keyof AmountFilters) => (at(box) || problemIds[box] ? true : undefined);
  const amountBox = (box: Box, label: string) => (
    <label>
      <span>{label}</span>
      <input
        type="text"
        inputMode="decimal"
        autoComplete="off"
        value={text(box)}
        aria-invalid={invalid(box)}
        aria-describedby={describedBy(box)}
        onChange={(event) => edit({ [box]: event.target.value })}
      />
    </label>
  );
  return (
    <form className="filter search amount-filter" role="group" aria-label="Amount" onSubmit={submit}>
      <label>
        <span>Currency</span>
        <select
          value={currency}
          aria-invalid={invalid('currency')}
          aria-describedby={describedBy('currency')}
          onChange={(event) => choose(event.target.value)}
        >
          {currencyChoices(displayCurrency, applied.currency).map((code) => (
            <option key={code} value={code}>
              {code ? code.toUpperCase() : 'Any currency'}
            </option>
          ))}
        </select>
      </label>
      {amountBox('min_amount', 'Minimum')}
      {amountBox('max_amount', 'Maximum')}
      <button type="submit" className="button small" aria-label="Apply amount">
        Apply
      </button>
      {/*
        Under the fields, one box for every line (a flex item more, even 0 px wide, added a gap
        to the group's width, and the date fields beside it moved 6 px when a refusal showed):
        what is applied and Clear beside it (Clear in the fields' row moved the group to the next
        row once applied), then why the amounts typed were not applied.
      */}
      <div className="search-hint amount-notes">
        <div className="amount-summary">
          <span id={summaryId} className="hint">
            {waiting ? `Apply to filter in ${currency.toUpperCase()}.` : (summary ?? HINT)}
          </span>
          {summary && (
            <button
              type="button"
              className="button small"
              aria-label="Clear amount"
              onClick={() => onApply({ currency: '', min_amount: '', max_amount: '' })}
            >
              Clear
            </button>
          )}
        </div>
        {refusal && (
          <p id={refusalId} className="field-error" role="alert">
            {refusal.message}
          </p>
        )}
      </div>
    </form>
  );
}
