import type { CookieOptions, Request, Response } from 'express';

/**
 * The session cookie (docs/dashboard-api.md): HttpOnly, SameSite=Lax, Path=/; Secure and the
 * `__Host-` prefix when the dashboard is served over https.
 */
export interface CookieSettings {
  name: string;
  options: CookieOptions;
}

export function cookieSettings(baseUrl: string): CookieSettings {
  const secure = new URL(baseUrl).protocol === 'https:';
  return {
    name: secure ? '__Host-retention_session' : 'retention_session',
    options: { httpOnly: true, sameSite: 'lax', path: '/', secure },
  };
}

export function readSessionCookie(req: Request, settings: CookieSettings): string | undefined {
  return readCookie(req, settings.name);
}

/** The value of the request's cookie called `name`, if it sent one. */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim();
  }
  return undefined;
}

export function setSessionCookie(res: Response, settings: CookieSettings, value: string, expiresAt: Date): void {
  res.cookie(settings.name, value, { ...settings.options, expires: expiresAt });
}

export function clearSessionCookie(res: Response, settings: CookieSettings): void {
  res.clearCookie(settings.name, settings.options);
}
