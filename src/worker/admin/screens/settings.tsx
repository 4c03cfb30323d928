import { ASYMMETRIC_SIGNING_ALGS } from "../../../shared/schemas/resource-servers";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { numeric, type Outcome, outcomeOf, readStatus, tenantOf } from "../pages/outcome";
import { ApiError, Field, listOf, Notice, str, tenantPath } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";

interface Settings {
  friendly_name?: string;
  picture_url?: string;
  support_email?: string;
  support_url?: string;
  session_lifetime?: number;
  idle_session_lifetime?: number;
  enabled_locales?: string[];
  default_directory?: string;
  default_audience?: string;
  default_signing_alg?: string;
  flags?: Record<string, boolean>;
}

/** Text settings: the form's name is the API's; an empty field removes the value (null). */
const TEXTS = [
  ["friendly_name", "Friendly name", "The name users see on the login pages and in emails."],
  ["picture_url", "Logo URL", "An http(s) URL."],
  ["support_email", "Support email", ""],
  ["support_url", "Support URL", "An http(s) URL."],
  ["default_directory", "Default directory", "The database connection the login pages use when an application names none."],
  ["default_audience", "Default audience", "The API identifier used when a request names no audience."],
] as const;

const text = (v: unknown) => (v === undefined || v === null ? "" : String(v));

/** GET /admin/t/:tenant/settings: the tenant's settings (GET /tenants/settings), a form when the operator may change them. */
export async function settingsScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const read = await c.var.api.get<Settings>(tenant, "/tenants/settings");
  const s: Settings = read.ok ? read.body : {};
  const editable = can(c, "update:tenant_settings");
  const flags = Object.entries(s.flags ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const fields = (
    <fieldset disabled={!editable} class="plain">
      <legend>General</legend>
      {TEXTS.map(([name, label, hint]) => (
        <Field name={name} label={label} value={text(s[name])} {...(hint ? { hint } : {})} />
      ))}
      <Field name="session_lifetime" label="Session lifetime (hours)" type="number" value={text(s.session_lifetime)} hint="How long a login session lasts at most." />
      <Field name="idle_session_lifetime" label="Idle session lifetime (hours)" type="number" value={text(s.idle_session_lifetime)} hint="How long a login session lasts without use." />
      <Field name="enabled_locales" label="Enabled languages" value={(s.enabled_locales ?? []).join(", ")} hint="Locale codes, the first is the default: en, fr, pt-BR." />
      <div class="field">
        <label for="f-default_signing_alg">Default signing algorithm</label>
        <select id="f-default_signing_alg" name="default_signing_alg">
          {ASYMMETRIC_SIGNING_ALGS.map((alg) => (
            <option value={alg} selected={s.default_signing_alg === alg}>
              {alg}
            </option>
          ))}
        </select>
      </div>
      {flags.length ? (
        <fieldset class="plain">
          <legend>Flags</legend>
          <input type="hidden" name="flag_names" value={flags.map(([name]) => name).join(",")} />
          {flags.map(([name, on]) => (
            <div class="field">
              <label>
                <input type="checkbox" name={`flag_${name}`} value="true" checked={on} /> <code>{name}</code>
              </label>
            </div>
          ))}
        </fieldset>
      ) : null}
    </fieldset>
  );
  return sendConsolePage(
    c,
    shellOf(c, "Tenant settings", { tenant, section: "settings" }),
    <>
      <h1>Tenant settings</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? read.error} />
      {editable ? (
        <form method="post" action={tenantPath(tenant, "/settings")} class="card">
          <Csrf token={c.var.operator.csrf} />
          {fields}
          <button type="submit">Save settings</button>
        </form>
      ) : (
        <div class="card">{fields}</div>
      )}
    </>,
    outcome.status ?? readStatus(read),
  );
}

/** POST .../settings: PATCH /tenants/settings with the form (empty text removes the value; numbers as numbers). */
export async function saveSettings(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const body: Record<string, unknown> = {};
  for (const [name] of TEXTS) {
    const value = str(form[name]).trim();
    body[name] = value || null;
  }
  for (const name of ["session_lifetime", "idle_session_lifetime"]) {
    const value = str(form[name]).trim();
    body[name] = value ? numeric(value) : null;
  }
  const locales = listOf(form.enabled_locales);
  if (locales.length) body.enabled_locales = locales;
  if (str(form.default_signing_alg)) body.default_signing_alg = str(form.default_signing_alg);
  const flagNames = listOf(form.flag_names);
  if (flagNames.length) body.flags = Object.fromEntries(flagNames.map((name) => [name, form[`flag_${name}`] === "true"]));
  return settingsScreen(c, outcomeOf(await c.var.api.patch(tenantOf(c), "/tenants/settings", body), "Settings saved."));
}
