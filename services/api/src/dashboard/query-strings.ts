import { invalidField } from '@retention/core';

/**
 * The dashboard API's query strings, read raw (the app's query parser is off): known keys
 * only, each given once; anything else is 400 invalid_param naming the key.
 */
export function queryStrings<K extends string>(url: string, allowed: readonly K[]): Partial<Record<K, string>> {
  const params = new URL(url, 'http://x').searchParams;
  const result: Partial<Record<K, string>> = {};
  for (const [key, value] of params) {
    if (!(allowed as readonly string[]).includes(key)) throw invalidField(key, 'is not a parameter of this list');
    if (key in result) throw invalidField(key, 'give it once');
    result[key as K] = value;
  }
  return result;
}
