import { describe, expect, it } from '@jest/globals';
import { useApi } from '../harness.js';
import { dashboardClient, team } from './support.js';

/**
 * Names people read to know whom or what they deal with (a user's, a workspace's, an API
 * token's, an endpoint's) refuse the characters that can make one read as another: C1
 * controls, bidi controls, separators, invisible format characters (every Cf, not a list) and
 * the other characters shown as nothing (Default_Ignorable_Code_Point: Hangul fillers, the
 * combining grapheme joiner). ZWNJ, ZWJ and variation selectors stay between visible
 * characters: Persian, Indic scripts and emoji sequences need them; a name of nothing else is blank.
 */
const api = useApi();
const call = (...args: Parameters<ReturnType<typeof dashboardClient>>) => dashboardClient(api.current.url)(...args);

const SPOOFING = {
  'right-to-left override': 'Mallory\u202e\u2066ecilA\u2069',
  'left-to-right isolate': 'a\u2066b\u2069',
  'left-to-right embedding': 'a\u202ab',
  'right-to-left mark': 'Eve\u200f',
  'C1 control (NEL)': 'a\u0085b',
  'line separator': 'one\u2028two',
  'paragraph separator': 'one\u2029two',
  'zero width space': 'ad\u200bmin',
  'word joiner': 'ad\u2060min',
  'invisible times': 'a\u2062b',
  'byte order mark': '\ufeffAlice',
  'soft hyphen': 'ad\u00admin',
  'Mongolian vowel separator': 'ad\u180emin',
  'musical formatting (begin beam)': 'ad\u{1d173}min',
  'language tag': '\u{e0001}Alice',
  'tag latin capital letter A': 'Alice\u{e0041}',
  'arabic number sign': '\u0600Alice',
  'Hangul filler alone': '\u3164\u3164',
  'Hangul choseong filler alone': '\u115f',
  'Hangul jungseong filler': 'a\u1160b',
  'halfwidth Hangul filler': '\uffa0Alice',
  'combining grapheme joiner alone': '\u034f',
  'combining grapheme joiner inside': 'ad\u034fmin',
  'Khmer inherent vowel': 'ad\u17b4min',
  'zero width joiner alone': '\u200d',
  'joiners and a variation selector alone': '\u200c\u200d\ufe0f',
  'spaces and a variation selector': ' \ufe0f ',
};
/**
 * ZWNJ in Persian ("I want"), ZWJ in emoji sequences, between two letters and in Devanagari,
 * an emoji variation selector (a red heart).
 */
const KEPT = [
  '\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645',
  '\u{1f468}\u200d\u{1f469}\u200d\u{1f467}',
  '\u{1f469}\u200d\u{1f4bb} team',
  'a\u200db',
  'I \u2764\ufe0f names',
  '\u0915\u094d\u200d\u0937',
];

describe('names', () => {
  it('refuse bidi controls and invisible format characters, naming what is wrong, and keep ZWNJ and ZWJ', async () => {
    const { owner, admin } = await team(api.current.db, call, 'Names');
    const endpoint = await call('POST', '/webhooks', {
      cookie: admin.cookie,
      body: { name: 'Receiver', url: 'https://receiver.invalid/hook', events: ['recovery.opened'] },
    });
    expect(endpoint.status).toBe(201);
    const changes = {
      'user name': (name: string) => call('PATCH', '/account', { cookie: owner.cookie, body: { name } }),
      'workspace name': (name: string) => call('PATCH', '/workspace', { cookie: owner.cookie, body: { name } }),
      'token name': (name: string) => call('POST', '/tokens', { cookie: admin.cookie, body: { name } }),
      'endpoint name': (name: string) =>
        call('PATCH', `/webhooks/${endpoint.body.id}`, { cookie: admin.cookie, body: { name } }),
    };
    for (const [field, change] of Object.entries(changes)) {
      for (const [what, name] of Object.entries(SPOOFING)) {
        const refused = await change(name);
        expect([field, what, refused.status]).toEqual([field, what, 400]);
        expect(refused.body.error).toMatchObject({
          type: 'invalid_param',
          param: 'name',
          message: expect.stringMatching(
            /^name: must be 1 to 200 characters, not (all spaces|blank), without control characters or invisible formatting characters$/,
          ),
        });
      }
      for (const name of KEPT) {
        const kept = await change(name);
        expect([field, name, kept.status < 300]).toEqual([field, name, true]);
      }
    }
    expect((await call('GET', '/me', { cookie: owner.cookie })).body.user.name).toBe(KEPT.at(-1));
  });
});
