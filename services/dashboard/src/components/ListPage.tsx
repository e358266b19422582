import type { ReactNode } from 'react';
import type { Paged } from '../hooks.js';
import { Empty, ErrorNote, Loading } from './states.js';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  numeric?: boolean;
}

/** A real <table> over a keyset-paged list, with its loading, empty and error states and Load more. */
export function PagedTable<T extends { id: string }>({
  caption,
  columns,
  list,
  empty,
}: {
  caption: string;
  columns: Column<T>[];
  list: Paged<T>;
  empty: string;
}) {
  if (list.error && list.items.length === 0) return <ErrorNote message={list.error} onRetry={list.reload} />;
  if (list.loading && list.items.length === 0) return <Loading />;
  if (list.items.length === 0) return <Empty>{empty}</Empty>;
  return (
    <>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column.header} scope="col" className={column.numeric ? 'numeric' : undefined}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {list.items.map((row) => (
              <tr key={row.id}>
                {columns.map((column) => (
                  <td key={column.header} className={column.numeric ? 'numeric' : undefined}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.error && <ErrorNote message={list.error} onRetry={list.loadMore} />}
      {list.hasMore && (
        <div className="load-more">
          <button type="button" className="button" onClick={list.loadMore} disabled={list.loading}>
            {list.loading ? 'Loading…' : 'Load more'}
          </button>
        </div>
      )}
    </>
  );
}

/** A labelled <select> filter. */
export function Filter({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: readonly string[];
  onChange: (value: string) => void;
}) {
  return (
    <label className="filter">
      <span>{label}</span>
      <select value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">All</option>
        {options.map((option) => (
          <option key={option} value={option}>
            {option.replaceAll('_', ' ')}
          </option>
        ))}
      </select>
    </label>
  );
}

export function Badge({ value }: { value: string }) {
  return <span className={`badge badge-${value}`}>{value.replaceAll('_', ' ')}</span>;
}
