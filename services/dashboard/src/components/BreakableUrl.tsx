import { Fragment } from 'react';

/**
 * Each piece of a URL up to and including its next run of separators (`https://`, `hooks.`, `v2/`,
 * `json&`).
 */
const URL_PIECE = /[^/.?&=#_~-]*[/.?&=#_~-]*/g;

/** The scheme, host, port and the path's first slash: `https://127.0.0.1:44901/`. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*\/?/i;
/**
 * The longest origin kept on one line (`https://mail.northwind.example/`, 31): a longer host
 * wraps after its dots and hyphens as the path does, or a phone's narrow cell could not hold it.
 */
const WHOLE_ORIGIN = 32;

/**
 * A URL that wraps after its separators (`/`, `.`, `?`, `&`, `=`, `#`, `_`, `~`, `-`) rather
 * than mid-word: a `<wbr>` follows each run of them, adding no text, so a copy is still the
 * URL. Its origin stays whole when short: "https://127.0.0.<br>1:44901/demo/<br>dunning" broke an
 * address in the endpoints list, where "https://127.0.0.1:44901/<br>demo/dunning" reads as one. A
 * piece too long for its line still breaks anywhere (the `overflow-wrap: anywhere` of
 * `.url-cell`), as the last resort, rather than overflowing.
 */
export function BreakableUrl({ url }: { url: string }) {
  const origin = ORIGIN.exec(url)?.[0];
  if (!origin || origin.length > WHOLE_ORIGIN) return <BreakAfterSeparators text={url} />;
  const rest = url.slice(origin.length);
  return (
    <>
      {origin}
      {rest && (
        <>
          <wbr />
          <BreakAfterSeparators text={rest} />
        </>
      )}
    </>
  );
}

/**
 * Any such name, the same way: an event type in the delivery log (`trial.reminder_sent`) goes
 * onto a second line after its dot rather than overflowing a narrow column.
 */
export function BreakAfterSeparators({ text }: { text: string }) {
  return <BreakAfterPieces text={text} piece={URL_PIECE} />;
}

/**
 * Each piece of an email address up to and including its next run of separators (`ann.`, `lee@`,
 * `north-`).
 */
const EMAIL_PIECE = /[^@.+_-]*[@.+_-]*/g;

/**
 * An email address that wraps after `@`, `.`, `+`, `_` and `-`, as a URL does: on a 390 px
 * phone the campaign's card broke `pepper@stark-customers.test` mid-word (`pepper@stark-custo` /
 * `mers.test`). A part too long for its line still breaks anywhere, the card's last resort.
 */
export function BreakableEmail({ email }: { email: string }) {
  return <BreakAfterPieces text={email} piece={EMAIL_PIECE} />;
}

/**
 * `text` as its pieces (a global pattern that matches every character), a `<wbr>` between each two.
 */
function BreakAfterPieces({ text, piece }: { text: string; piece: RegExp }) {
  const pieces = text.match(piece)?.filter(Boolean) ?? [text];
  return (
    <>
      {pieces.map((piece, index) => (
        <Fragment key={index}>
          {index > 0 && <wbr />}
          {piece}
        </Fragment>
      ))}
    </>
  );
}
