import type { Child } from "hono/jsx";
import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { Csrf } from "../pages/layout";
import { numeric, type Outcome, outcomeOf, readStatus, tenantOf } from "../pages/outcome";
import { ApiError, Field, listOf, Notice, str, tenantPath } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";

type Doc = Record<string, unknown>;
type Stage = { max_attempts?: number | string; rate?: number | string };

const PATHS = {
  brute: "/attack-protection/brute-force-protection",
  ip: "/attack-protection/suspicious-ip-throttling",
  breached: "/attack-protection/breached-password-detection",
  bot: "/attack-protection/bot-detection",
  captcha: "/attack-protection/captcha",
} as const;

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);
const num = (value: unknown) => (typeof value === "number" ? String(value) : "");

/** A checkbox, checked when the stored value says so. */
const Check = (p: { name: string; value?: string; checked: boolean; label: string; disabled: boolean }) => (
  <div class="field">
    <label>
      <input type="checkbox" name={p.name} value={p.value ?? "true"} checked={p.checked} disabled={p.disabled} /> {p.label}
    </label>
  </div>
);

/** A settings section: a form for an operator who may update it, the same fields read-only (no form) otherwise. */
const Section = (p: { title: string; action: string; csrf: string; editable: boolean; children?: Child }) => {
  const fields = (
    <fieldset disabled={!p.editable} class="plain">
      <legend>{p.title}</legend>
      {p.children}
    </fieldset>
  );
  return p.editable ? (
    <form method="post" action={p.action} class="card">
      <Csrf token={p.csrf} />
      {fields}
      <button type="submit">Save {p.title.charAt(0).toLowerCase() + p.title.slice(1)}</button>
    </form>
  ) : (
    <div class="card">{fields}</div>
  );
};

/** GET /admin/t/:tenant/protection: brute force, suspicious IPs, breached passwords; bot detection and CAPTCHA as stored. */
export async function protectionScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const [brute, ip, breached, bot, captcha] = await Promise.all(Object.values(PATHS).map((path) => c.var.api.get<Doc>(tenant, path)));
  const b = (brute?.ok ? brute.body : {}) as Doc;
  const s = (ip?.ok ? ip.body : {}) as Doc;
  const p = (breached?.ok ? breached.body : {}) as Doc;
  const stage = (s.stage ?? {}) as Record<string, Stage>;
  const editable = can(c, "update:attack_protection");
  const csrf = c.var.operator.csrf;
  const base = tenantPath(tenant, "/protection");
  const firstError = [brute, ip, breached, bot, captcha].find((r) => r && !r.ok)?.error;
  const botDoc = (bot?.ok ? bot.body : {}) as Doc;
  const captchaDoc = (captcha?.ok ? captcha.body : {}) as Doc;
  return sendConsolePage(
    c,
    shellOf(c, "Attack protection", { tenant, section: "protection" }),
    <>
      <h1>Attack protection</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? firstError} />
      <Section title="Brute-force protection" action={`${base}/brute-force`} csrf={csrf} editable={editable}>
        <Check name="enabled" checked={b.enabled === true} label="Lock an account after repeated failed logins" disabled={!editable} />
        <Field name="max_attempts" label="Failed attempts before the lockout" type="number" value={num(b.max_attempts)} />
        <div class="field">
          <label for="f-mode">Count failures</label>
          <select id="f-mode" name="mode">
            <option value="count_per_identifier" selected={b.mode === "count_per_identifier"}>
              Per account
            </option>
            <option value="count_per_identifier_and_ip" selected={b.mode === "count_per_identifier_and_ip"}>
              Per account and IP address
            </option>
          </select>
        </div>
        <Check name="shields" value="block" checked={strings(b.shields).includes("block")} label="Block the account" disabled={!editable} />
        <Check name="shields" value="user_notification" checked={strings(b.shields).includes("user_notification")} label="Notify the user" disabled={!editable} />
        <Field name="allowlist" label="Never lock out from (IP addresses or ranges)" value={strings(b.allowlist).join("\n")} multiline hint="One per line." />
      </Section>
      <Section title="Suspicious IP throttling" action={`${base}/suspicious-ip`} csrf={csrf} editable={editable}>
        <Check name="enabled" checked={s.enabled === true} label="Throttle IP addresses with many failed logins or sign-ups" disabled={!editable} />
        <Check name="shields" value="block" checked={strings(s.shields).includes("block")} label="Block the IP address" disabled={!editable} />
        <Check name="shields" value="admin_notification" checked={strings(s.shields).includes("admin_notification")} label="Notify administrators" disabled={!editable} />
        <Field name="login_max" label="Failed logins before throttling (per IP)" type="number" value={num(stage["pre-login"]?.max_attempts)} />
        <Field name="login_rate" label="Then one more login attempt every (milliseconds)" type="number" value={num(stage["pre-login"]?.rate)} />
        <Field name="signup_max" label="Sign-ups before throttling (per IP)" type="number" value={num(stage["pre-user-registration"]?.max_attempts)} />
        <Field name="signup_rate" label="Then one more sign-up every (milliseconds)" type="number" value={num(stage["pre-user-registration"]?.rate)} />
        <Field name="allowlist" label="Never throttle (IP addresses or ranges)" value={strings(s.allowlist).join("\n")} multiline hint="One per line." />
      </Section>
      <Section title="Breached password detection" action={`${base}/breached-password`} csrf={csrf} editable={editable}>
        <Check name="enabled" checked={p.enabled === true} label="Refuse passwords found in known breaches" disabled={!editable} />
        <Check name="shields" value="block" checked={strings(p.shields).includes("block")} label="Block the login until the password is changed" disabled={!editable} />
        <Check name="shields" value="user_notification" checked={strings(p.shields).includes("user_notification")} label="Notify the user" disabled={!editable} />
        <Check name="shields" value="admin_notification" checked={strings(p.shields).includes("admin_notification")} label="Notify administrators" disabled={!editable} />
      </Section>
      <section class="card" aria-labelledby="h-bot">
        <h2 id="h-bot">Bot detection and CAPTCHA (as stored)</h2>
        <p class="muted">Stored and shown as the management API holds them; no CAPTCHA provider is wired to the login pages yet.</p>
        <dl class="pairs">
          <dt>Bot detection level</dt>
          <dd>{str(botDoc.bot_detection_level)}</dd>
          <dt>Challenge on password login</dt>
          <dd>{str(botDoc.challenge_password_policy)}</dd>
          <dt>Challenge on passwordless login</dt>
          <dd>{str(botDoc.challenge_passwordless_policy)}</dd>
          <dt>Challenge on password reset</dt>
          <dd>{str(botDoc.challenge_password_reset_policy)}</dd>
          <dt>Monitoring mode</dt>
          <dd>{botDoc.monitoring_mode_enabled ? "On" : "Off"}</dd>
          <dt>CAPTCHA provider</dt>
          <dd>{str(captchaDoc.active_provider_id)}</dd>
        </dl>
      </section>
    </>,
    outcome.status ?? readStatus(brute, ip, breached),
  );
}

async function formOf(c: ConsoleContext) {
  const form = await c.req.parseBody({ all: true });
  return { enabled: form.enabled === "true", shields: [form.shields ?? []].flat().filter((v): v is string => typeof v === "string"), form };
}

const intOr = (value: unknown) => {
  const text = str(value).trim();
  return text ? numeric(text) : undefined;
};

/** POST .../protection/brute-force: PATCH /attack-protection/brute-force-protection. */
export async function saveBruteForce(c: ConsoleContext): Promise<Response> {
  const { enabled, shields, form } = await formOf(c);
  const max = intOr(form.max_attempts);
  const body = { enabled, shields, mode: str(form.mode), allowlist: listOf(form.allowlist), ...(max !== undefined ? { max_attempts: max } : {}) };
  return protectionScreen(c, outcomeOf(await c.var.api.patch(tenantOf(c), PATHS.brute, body), "Brute-force protection saved."));
}

/** POST .../protection/suspicious-ip: PATCH /attack-protection/suspicious-ip-throttling (stages merged by the API). */
export async function saveSuspiciousIp(c: ConsoleContext): Promise<Response> {
  const { enabled, shields, form } = await formOf(c);
  const stageOf = (max: unknown, rate: unknown) => {
    const out: Stage = {};
    const m = intOr(max);
    const r = intOr(rate);
    if (m !== undefined) out.max_attempts = m;
    if (r !== undefined) out.rate = r;
    return out;
  };
  const body = {
    enabled,
    shields,
    allowlist: listOf(form.allowlist),
    stage: { "pre-login": stageOf(form.login_max, form.login_rate), "pre-user-registration": stageOf(form.signup_max, form.signup_rate) },
  };
  return protectionScreen(c, outcomeOf(await c.var.api.patch(tenantOf(c), PATHS.ip, body), "Suspicious IP throttling saved."));
}

/** POST .../protection/breached-password: PATCH /attack-protection/breached-password-detection. */
export async function saveBreachedPassword(c: ConsoleContext): Promise<Response> {
  const { enabled, shields } = await formOf(c);
  return protectionScreen(c, outcomeOf(await c.var.api.patch(tenantOf(c), PATHS.breached, { enabled, shields }), "Breached password detection saved."));
}
