import { Component, type ReactNode } from 'react';

/**
 * Catches what a page throws while rendering (an API answer without a field the page reads, as
 * an older server's during a rolling deploy), inside the shell: the navigation and the account
 * menu stay, and the page says in words that it could not be shown, with a reload. Without it
 * React unmounted the whole app and left a white window. Nothing technical is shown (the
 * browser's console has the error). A new address (`resetKey`) shows the page again, so the
 * navigation leads on from here.
 */
export class PageErrorBoundary extends Component<{ resetKey: string; children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override componentDidUpdate(previous: { resetKey: string }): void {
    if (this.state.failed && previous.resetKey !== this.props.resetKey) this.setState({ failed: false });
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    return (
      <div className="card">
        <h1>This page could not be shown</h1>
        <p>Something on it went wrong. Reload to try again, or go to another page.</p>
        <button type="button" className="button" onClick={() => window.location.reload()}>
          Reload
        </button>
      </div>
    );
  }
}
