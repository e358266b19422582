import type { Request, Response } from 'express';
import { readCookies, type CookieSettings } from './session-cookie.js';
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

/**
 * The device cookie values the request sent, each to be checked (TrustedDevices.trustedFor).
 * Usually one; over plain http (no `__Host-` prefix) a sibling subdomain can set another of the
 * same name, which the browser may send first: taking only the first would let it hide the
 * owner's device. At most four are looked at: more is no browser's doing.
 */
export function readDeviceCookies(req: Request, settings: CookieSettings): string[] {
  return readCookies(req, settings.name).slice(0, MAX_DEVICE_VALUES);
}

const MAX_DEVICE_VALUES = 4;

export function setDeviceCookie(res: Response, settings: CookieSettings, value: string): void {
  res.cookie(settings.name, value, settings.options);
}
