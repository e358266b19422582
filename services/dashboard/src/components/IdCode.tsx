/**
 * An id made of a prefix and a random tail (`cus_aD7IQ08yq0kcJW`, `in_…`, `sub_…`, `evt_…`) as
 * code that, where it does not fit its line (a fact's value on a 390 px phone), breaks after its
 * prefix's underscore, the tail whole on the next line: "in_4QhX…w9k" / "R" read as two ids.
 * Anywhere else only when the tail alone is longer than a line, by its box's `overflow-wrap:
 * anywhere`. For facts and notes, not a list's cells: Chromium breaks at a `<wbr>` even in a
 * `nowrap` cell (every row of Customers took two lines at 1280 px), and one hidden there with
 * `display: none` made the link's name "in_ 4Qh…" with a space. An id without such a prefix (a
 * uuid) is code as it is.
 */
export function IdCode({ id }: { id: string }) {
  const parts = /^([A-Za-z]{1,10}_)(.+)$/.exec(id);
  if (!parts) return <code>{id}</code>;
  return (
    <code>
      {parts[1]}
      <wbr />
      {parts[2]}
    </code>
  );
}
