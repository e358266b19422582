import { useState } from 'react';

/** A value shown once (a token, a secret, a link) with a Copy button. */
export function CopyField({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <div className="copy-field">
      <span className="field-label">{label}</span>
      <div className="copy-row">
        <code className="secret" aria-label={label}>
          {value}
        </code>
        <button type="button" className="button small" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <span className="hint" role="status">
        {copied === 'yes' ? 'Copied to the clipboard.' : copied === 'failed' ? 'Select the text and copy it.' : ''}
      </span>
    </div>
  );
}
