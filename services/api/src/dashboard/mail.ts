import { invitationMessage, passwordResetMessage } from '@retention/domain';
import type { Mailer } from '@retention/runtime';
import type { DashboardMailer } from './context.js';

/** The dashboard's e-mails over the process's mailer (when SMTP_URL is set). */
export function dashboardMailer(mailer: Mailer | null): DashboardMailer | null {
  if (!mailer) return null;
  return {
    sendInvitation: (to, input) => mailer.send({ to, ...invitationMessage(input) }),
    sendPasswordReset(to, resetUrl) {
      // Not awaited: the answer to a reset request must not take longer when the address exists.
      void mailer.send({ to, ...passwordResetMessage(resetUrl) });
    },
  };
}
