import { useEffect, useId, useState, type FormEvent } from 'react';
import { CURRENCY_PATTERN, DEFAULT_FX_RATES_PER_USD } from '@retention/core/money';
import { majorUnitsText, minorUnitsOf } from '../amounts.js';
import { formatMoney } from '../format.js';

/**
 * The Campaigns list's Amount filter (docs/dashboard-ui.md, "Amount"): a currency and a minimum
 * and a maximum in its major units, as a person types them (`100`, `99.50`), which the address
 * keeps as the API's `currency`, `min_amount` and `max_amount` (minor units). A form applied as
 * a whole (Enter or Apply, one history entry), as the search box is: each box is checked first,
 * and a bad amount is said at its box and not applied, the list staying the one the address asks
 * for. The fields show what is applied until edited, and again once the address changes.
 */

/** The amount filters as the address and the API name them. */
export interface AmountFilters {
  currency: string;
  min_amount: string;
  max_amount: string;
}

/** The currencies offered: the workspace's display currency first, then those with a shipped rate, A to Z. */
function currencyChoices(display: string, applied: string): string[] {
  const common = Object.keys(DEFAULT_FX_RATES_PER_USD).sort();
  const first = [display, ...(CURRENCY_PATTERN.test(applied) ? [applied] : [])];
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

export function AmountFilter({
  applied,
  displayCurrency,
  onApply,
  problemIds,
}: {
  applied: AmountFilters;
  /** The workspace's display currency: the currency chosen while none is applied. */
  displayCurrency: string;
  onApply: (next: AmountFilters) => void;
  /** Each field's note when the address's value is one the list does not have (FilterStates). */
  problemIds: Partial<Record<keyof AmountFilters, string | undefined>>;
}) {
  const id = useId();
  const [typed, setTyped] = useState<Partial<AmountFilters>>({});
  /** Why the amounts typed last were not applied, and at which box; gone at the next edit. */
  const [refusal, setRefusal] = useState<{ box: Box; message: string } | null>(null);
  // The address changed (applied, Back, Clear filters): the fields show it again.
  const key = `${applied.currency}|${applied.min_amount}|${applied.max_amount}`;
  useEffect(() => {
    setTyped({});
    setRefusal(null);
  }, [key]);
  // A currency the address gives that is no code (hand-edited) is said by the list's note; the
  // select offers the display currency in its place.
  const appliedCurrency = CURRENCY_PATTERN.test(applied.currency) ? applied.currency : displayCurrency;
  const currency = typed.currency ?? appliedCurrency;
  const text = (box: Box) => typed[box] ?? majorUnitsText(applied[box], appliedCurrency);
  const edit = (next: Partial<AmountFilters>) => {
    setRefusal(null);
    setTyped((previous) => ({ ...previous, ...next }));
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const next: AmountFilters = { currency, min_amount: '', max_amount: '' };
    for (const box of ['min_amount', 'max_amount'] as const) {
      if (text(box).trim() === '') continue;
      const amount = minorUnitsOf(text(box), currency);
      if ('problem' in amount) {
        setRefusal({ box, message: amount.problem });
        return;
      }
      next[box] = amount.minor;
    }
    if (next.min_amount && next.max_amount && BigInt(next.min_amount) > BigInt(next.max_amount)) {
      setRefusal({ box: 'min_amount', message: 'The minimum is more than the maximum.' });
      return;
    }
    setRefusal(null);
    onApply(next);
  };

  const summary = appliedAmount(applied);
  const refusalId = `${id}-refusal`;
  const summaryId = `${id}-applied`;
  const describedBy = (box: keyof AmountFilters) =>
    [refusal?.box === box ? refusalId : '', problemIds[box] ?? '', summaryId].filter(Boolean).join(' ') || undefined;
  const invalid = (box: keyof AmountFilters) => (refusal?.box === box || problemIds[box] ? true : undefined);
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
          onChange={(event) => edit({ currency: event.target.value })}
        >
          {currencyChoices(displayCurrency, applied.currency).map((code) => (
            <option key={code} value={code}>
              {code.toUpperCase()}
            </option>
          ))}
        </select>
      </label>
      {amountBox('min_amount', 'Minimum')}
      {amountBox('max_amount', 'Maximum')}
      <button type="submit" className="button small" aria-label="Apply amount">
        Apply
      </button>
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
      <span id={summaryId} className="hint search-hint">
        {summary ??
          'As written in the currency (100 or 99.50), both ends included; empty boxes filter by currency alone.'}
      </span>
      {refusal && (
        <p id={refusalId} className="field-error filters-problem" role="alert">
          {refusal.message}
        </p>
      )}
    </form>
  );
}
