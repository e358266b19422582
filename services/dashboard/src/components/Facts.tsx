import type { ReactNode } from 'react';

export type Fact = [label: string, value: ReactNode];

/** A detail page's label/value pairs, as a description list. */
export function Facts({ facts }: { facts: Fact[] }) {
  return (
    <dl className="facts">
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
