import { invitationMessage, passwordResetMessage } from '@retention/domain';
import type { Mailer } from '@retention/runtime';
import type { DashboardMailer } from './context.js';

/** The dashboard's emails over the process's mailer (when SMTP_URL is set). */
export function dashboardMailer(mailer: Mailer | null): DashboardMailer | null {
  if (!mailer) return null;
  return {
    sendInvitation: (to, input) => mailer.send({ to, ...invitationMessage(input) }),
    sendPasswordReset: (to, resetUrl) => mailer.send({ to, ...passwordResetMessage(resetUrl) }),
  };
}
