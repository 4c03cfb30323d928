/**
 * Which language a universal-login page speaks (issue 29 point 3): the first `ui_locales` entry the tenant
 * offers, else the browser's `Accept-Language` by preference (q-values; ties in the tenant's order), else
 * the tenant's default: its first enabled locale. A tenant that never set `enabled_locales` offers every
 * language Gatehouse ships, English first.
 */
import { catalogueFor, primary, SHIPPED_LANGUAGES } from "./locales";

export interface LocaleInputs {
  /** The authorization request's `ui_locales` (space-separated, in order of preference). */
  uiLocales?: string | null | undefined;
  acceptLanguage?: string | null | undefined;
  /** The tenant settings' `enabled_locales` as stored (anything a writer stored: read defensively). */
  enabledLocales?: unknown;
}

/** The locales a tenant offers that Gatehouse can render, in the tenant's order. */
export function offeredLocales(enabled: unknown): string[] {
  if (!Array.isArray(enabled) || enabled.length === 0) return [...SHIPPED_LANGUAGES];
  const offered = enabled.filter((code): code is string => typeof code === "string" && catalogueFor(code) !== null);
  return offered.length ? offered : ["en"];
}

/** The offered locale a requested tag picks: the same tag, else the first offered one of the same language. */
function match(tag: string, offered: readonly string[]): string | null {
  const lower = tag.toLowerCase();
  const exact = offered.find((code) => code.toLowerCase() === lower);
  if (exact) return exact;
  const base = primary(lower);
  return offered.find((code) => primary(code) === base) ?? null;
}

/** Accept-Language's tags by preference: q descending, the header's order among equals; q=0 dropped. */
export function acceptedLanguages(header: string): string[] {
  const entries: { tag: string; q: number; at: number }[] = [];
  for (const [at, part] of header.slice(0, 1000).split(",").slice(0, 30).entries()) {
    const [tagPart, ...params] = part.split(";");
    const tag = tagPart?.trim() ?? "";
    if (!/^(\*|[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*)$/.test(tag)) continue;
    let q = 1;
    for (const param of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(param);
      if (m) q = Number(m[1]);
    }
    if (q > 0 && q <= 1) entries.push({ tag, q, at });
  }
  return entries.sort((a, b) => b.q - a.q || a.at - b.at).map((e) => e.tag);
}

/** The page's language: a code from the tenant's offered locales (so `pt-BR` stays `pt-BR`). */
export function negotiateLocale(inputs: LocaleInputs): string {
  const offered = offeredLocales(inputs.enabledLocales);
  for (const tag of (inputs.uiLocales ?? "").slice(0, 500).split(/\s+/)) {
    if (!tag) continue;
    const found = match(tag, offered);
    if (found) return found;
  }
  for (const tag of acceptedLanguages(inputs.acceptLanguage ?? "")) {
    if (tag === "*") break;
    const found = match(tag, offered);
    if (found) return found;
  }
  return offered[0] ?? "en";
}

/** The user's own language, as a profile may carry it: `user_metadata.language`, `.lang` or `.locale`, else the `locale` claim. */
export function userLanguage(user: { user_metadata?: unknown; locale?: unknown } | null | undefined): string | null {
  const metadata = user?.user_metadata !== null && typeof user?.user_metadata === "object" ? (user.user_metadata as Record<string, unknown>) : {};
  for (const value of [metadata.language, metadata.lang, metadata.locale, user?.locale]) {
    if (typeof value === "string" && value.trim()) return value.trim().replace(/_/g, "-");
  }
  return null;
}

/**
 * The language of an email (issue 29 point 2): the login's when the email is sent during one (its
 * `ui_locales`, then the browser's Accept-Language: the language its pages speak), else the user's own
 * ({@link userLanguage}) when the tenant offers it, else the tenant's default.
 */
export function emailLanguage(inputs: {
  login?: { uiLocales?: string | null | undefined; acceptLanguage?: string | null | undefined } | null;
  user?: { user_metadata?: unknown; locale?: unknown } | null;
  enabledLocales?: unknown;
}): string {
  if (inputs.login) return negotiateLocale({ ...inputs.login, enabledLocales: inputs.enabledLocales });
  return negotiateLocale({ uiLocales: userLanguage(inputs.user), enabledLocales: inputs.enabledLocales });
}
