import type { ReactNode } from 'react';

export function AuthCard({ title, intro, children }: { title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <div className="auth-card">
      <div className="brand auth-brand">
        <span className="brand-mark" aria-hidden="true" />
        <span className="brand-name">Retention</span>
      </div>
      <h1>{title}</h1>
      {intro && <p className="muted">{intro}</p>}
      {children}
    </div>
  );
}
