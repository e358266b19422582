import { CURRENCY_PATTERN, isMinorUnits, MAX_STORED_AMOUNT } from '@retention/core/money';
import { majorUnitsText } from './amounts.js';
import { quoted, type FilterCheck } from './components/FilterStates.js';

/**
 * The Campaigns address's amount filters (`currency`, `min_amount`, `max_amount`) checked as the
 * API checks them (amountFilters in packages/db), each refusal said with its own reason, before
 * asking: a generic one ("not an amount") for bounds the wrong way round sent people looking
 * for a typo that was not there (docs/dashboard-ui.md, "Amount").
 */

/** The address's amount filters, as it names them. */
interface AddressAmounts {
  currency: string;
  min_amount: string;
  max_amount: string;
}

/** An address's currency as the page works with it: any case is a code (`JPY`), as the API takes it. */
export function currencyCode(value: string): string {
  return value.toLowerCase();
}

const currencyCheck: FilterCheck = {
  says: 'currency',
  knows: (value) => CURRENCY_PATTERN.test(currencyCode(value)),
  because: 'which is not a currency code like usd',
};

/** An amount as the boxes show it: `5 USD` for `500` usd; the digits as they are without a code. */
function boxAmount(minor: string, currency: string): string {
  return CURRENCY_PATTERN.test(currency) ? `${majorUnitsText(minor, currency)} ${currency.toUpperCase()}` : minor;
}

/** Why the address's `box` is one the API refuses, as the end of a sentence; null when it takes it. */
function amountReason(value: string, currency: string): string | null {
  if (!currency) return 'without a currency: amounts compare only within one currency';
  if (/^\d+$/.test(value) && BigInt(value) > MAX_STORED_AMOUNT) return 'which is more than any campaign can be';
  if (!isMinorUnits(value)) return 'which is not an amount in minor units';
  return null;
}

/** The checks of the three filters, the amounts' depending on the others. */
export function amountChecks(filters: AddressAmounts): Record<keyof AddressAmounts, FilterCheck> {
  const currency = currencyCode(filters.currency);
  const amountCheck = (says: string): FilterCheck => ({
    says,
    sentence: (value) => {
      const reason = amountReason(value, currency);
      return reason && `The address asks for ${says} ${quoted(value)}, ${reason}.`;
    },
  });
  const max = filters.max_amount;
  const minimum = amountCheck('the minimum amount');
  return {
    currency: currencyCheck,
    min_amount: {
      ...minimum,
      // Bounds the wrong way round are said once, at the minimum (where the API says it), in the
      // units the boxes show them.
      sentence: (value) =>
        minimum.sentence!(value) ??
        (max && !amountReason(max, currency) && BigInt(value) > BigInt(max)
          ? `The address asks for amounts from ${boxAmount(value, currency)} to ${boxAmount(max, currency)}: the minimum is more than the maximum.`
          : null),
    },
    max_amount: amountCheck('the maximum amount'),
  };
}
