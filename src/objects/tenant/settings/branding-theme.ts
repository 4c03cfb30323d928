/**
 * The universal-login theme and page template (issue 29 point 5), each one `_settings` record in the
 * configuration (the login pages read both from the snapshot). The reference platform keeps one theme per
 * tenant: a second create is a 409 and the theme's id is fixed until it is deleted. The worker validates the
 * theme's values and the template's Liquid before a write reaches the object.
 */
import { fail, ok, type Result } from "../../../shared/errors";
import type { BrandingTheme, ThemeInput } from "../../../shared/schemas/branding";
import type { Sql } from "../../sql";
import type { AuditContext } from "../../../shared/types";
import { audited, type WriteTx as CommitTx } from "../core/events";
import { getSetting, putSetting } from "../core/settings";

/** Settings keys (configuration: read by the login pages from the snapshot). */
export const THEME_KEY = "branding_theme";
export const LOGIN_TEMPLATE_KEY = "branding_login_template";

export function getTheme(sql: Sql): BrandingTheme | null {
  return getSetting<BrandingTheme | null>(sql, THEME_KEY, null);
}

export function getLoginTemplate(sql: Sql): string | null {
  return getSetting<string | null>(sql, LOGIN_TEMPLATE_KEY, null);
}

const toTheme = (themeId: string, input: ThemeInput): BrandingTheme => ({
  borders: input.borders,
  colors: input.colors,
  displayName: input.displayName ?? "",
  fonts: input.fonts,
  page_background: input.page_background,
  themeId,
  widget: input.widget,
});

/** POST: 409 when the tenant already has its theme. */
export function createTheme(tx: CommitTx, audit: AuditContext, themeId: string, input: ThemeInput): Result<BrandingTheme> {
  const existing = getTheme(tx.sql);
  const result = existing ? fail("theme_exists") : ok(toTheme(themeId, input));
  if (result.ok) putSetting(tx.sql, THEME_KEY, result.value);
  return audited(tx, audit, result, { entity: "branding_theme", action: "created", id: themeId, after: (t) => t });
}

/** PATCH: the whole theme replaced; 404 for another id. */
export function updateTheme(tx: CommitTx, audit: AuditContext, themeId: string, input: ThemeInput): Result<BrandingTheme> {
  const before = getTheme(tx.sql);
  const result = before?.themeId === themeId ? ok(toTheme(themeId, input)) : fail("inexistent_theme");
  if (result.ok) putSetting(tx.sql, THEME_KEY, result.value);
  return audited(tx, audit, result, { entity: "branding_theme", action: "updated", id: themeId, before: before ?? undefined, after: (t) => t });
}

export function deleteTheme(tx: CommitTx, audit: AuditContext, themeId: string): Result<null> {
  const before = getTheme(tx.sql);
  const result = before?.themeId === themeId ? ok(null) : fail("inexistent_theme");
  if (result.ok) tx.sql.run`DELETE FROM _settings WHERE key = ${THEME_KEY}`;
  return audited(tx, audit, result, { entity: "branding_theme", action: "deleted", id: themeId, before: before ?? undefined });
}

/** PUT: the template stored; whether it was created (201) or replaced (200). */
export function putLoginTemplate(tx: CommitTx, audit: AuditContext, template: string): { created: boolean } {
  const before = getLoginTemplate(tx.sql);
  putSetting(tx.sql, LOGIN_TEMPLATE_KEY, template);
  audited(tx, audit, ok(template), { entity: "branding_template", action: before === null ? "created" : "updated", id: "universal-login" });
  return { created: before === null };
}

export function deleteLoginTemplate(tx: CommitTx, audit: AuditContext): void {
  const before = getLoginTemplate(tx.sql);
  if (before === null) return;
  tx.sql.run`DELETE FROM _settings WHERE key = ${LOGIN_TEMPLATE_KEY}`;
  audited(tx, audit, ok(null), { entity: "branding_template", action: "deleted", id: "universal-login" });
}
