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

/**
 * The request's session cookie, unless it sent more than one of that name: then none. Over
 * plain http (no `__Host-` prefix) a sibling subdomain can set a cookie of the same name that
 * the browser sends first; taking the first would sign the person in to whatever session the
 * sibling planted. Which of several is ours cannot be told, so none is used.
 */
export function readSessionCookie(req: Request, settings: CookieSettings): string | undefined {
  const values = readCookies(req, settings.name);
  return values.length === 1 ? values[0] : undefined;
}

/** Every value the request sent for the cookie called `name`, in the order sent. */
export function readCookies(req: Request, name: string): string[] {
  const header = req.headers.cookie;
  if (!header) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) values.push(part.slice(index + 1).trim());
  }
  return values;
}

export function setSessionCookie(res: Response, settings: CookieSettings, value: string, expiresAt: Date): void {
  res.cookie(settings.name, value, { ...settings.options, expires: expiresAt });
}

export function clearSessionCookie(res: Response, settings: CookieSettings): void {
  res.clearCookie(settings.name, settings.options);
}
