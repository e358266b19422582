import type { Request, Response } from 'express';
import { readCookie, type CookieSettings } from './session-cookie.js';
import { DEVICE_LIFETIME_MS } from './trusted-devices.js';

/**
 * The device cookie (trusted-devices.ts): the session cookie's flags (HttpOnly, SameSite=Lax,
 * Path=/; Secure and the `__Host-` prefix over https), but lasting DEVICE_LIFETIME_MS and
 * naming an account, never a session: signing out leaves it, so the browser stays known.
 */
export function deviceCookieSettings(session: CookieSettings): CookieSettings {
  const secure = session.options.secure === true;
  return {
    name: secure ? '__Host-retention_device' : 'retention_device',
    options: { ...session.options, maxAge: DEVICE_LIFETIME_MS },
  };
}

export function readDeviceCookie(req: Request, settings: CookieSettings): string | undefined {
  return readCookie(req, settings.name);
}

export function setDeviceCookie(res: Response, settings: CookieSettings, value: string): void {
  res.cookie(settings.name, value, settings.options);
}
