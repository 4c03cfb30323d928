/**
 * Which way outgoing email goes, decided once from the deployment's variables, for every sender of the
 * project (organization invitations, MFA and passwordless codes, job completion emails, verification
 * emails): the worker (src/worker/messaging/senders.ts) and the tenant object's relay (job emails) read
 * the same rule, so one setting moves all of them.
 *
 * - `EMAIL_PROVIDER=sendgrid` with `EMAIL_API_KEY` (and `EMAIL_FROM`): SendGrid's v3 API at `EMAIL_API_BASE`;
 * - `EMAIL_PROVIDER=http` with `EMAIL_HTTP_URL`: the transactional-mail relay (JSON POST, bearer `EMAIL_HTTP_TOKEN`);
 * - `EMAIL_PROVIDER=dev`, or no provider and `DEV_MESSAGE_SINK=1`: the development sink, the tenant's
 *   `dev_messages` (read at `GET /__dev/messages`, alias `/__dev/mail`);
 * - otherwise none: a send is refused (never a silent drop).
 */
import { type MessageSender, sendgridSender } from "./providers";

/** One email as the senders take it; `html` is optional (codes are plain text). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** The sender, when a tenant's template names one (else the deployment's EMAIL_FROM). */
  from?: string;
}

export type MailRoute =
  | { kind: "sendgrid"; apiKey: string; from: string; apiBase: string }
  | { kind: "http"; url: string; token: string | undefined; from: string }
  | { kind: "dev"; from: string }
  | { kind: "none"; reason: string };

interface MailEnv {
  EMAIL_PROVIDER?: string;
  EMAIL_FROM?: string;
  EMAIL_HTTP_URL?: string;
  EMAIL_HTTP_TOKEN?: string;
  EMAIL_API_KEY?: string;
  EMAIL_API_BASE?: string;
  DEV_MESSAGE_SINK?: string;
}

/** @default "no-reply@gatehouse.local" */
export const DEFAULT_EMAIL_FROM = "no-reply@gatehouse.local";

/** The configured way out for email (see the module comment). */
export function mailRoute(env: unknown): MailRoute {
  const e = env as MailEnv;
  const from = e.EMAIL_FROM || DEFAULT_EMAIL_FROM;
  const kind = e.EMAIL_PROVIDER || "";
  if (kind === "sendgrid") {
    if (!e.EMAIL_API_KEY) return { kind: "none", reason: "EMAIL_PROVIDER=sendgrid needs EMAIL_API_KEY" };
    return { kind: "sendgrid", apiKey: e.EMAIL_API_KEY, from, apiBase: e.EMAIL_API_BASE || "https://api.sendgrid.com" };
  }
  if (kind === "http") {
    if (!e.EMAIL_HTTP_URL) return { kind: "none", reason: "EMAIL_PROVIDER=http needs EMAIL_HTTP_URL" };
    return { kind: "http", url: e.EMAIL_HTTP_URL, token: e.EMAIL_HTTP_TOKEN || undefined, from };
  }
  if (kind === "dev" || (kind === "" && e.DEV_MESSAGE_SINK === "1")) return { kind: "dev", from };
  if (kind !== "") return { kind: "none", reason: `Unknown EMAIL_PROVIDER "${kind}" (dev, http or sendgrid)` };
  return { kind: "none", reason: "No email provider is configured (EMAIL_PROVIDER, or DEV_MESSAGE_SINK=1 for local development)" };
}

/** The transactional-mail relay: POSTs `{from, to, subject, text, html}` with the bearer token; non-2xx is an error. */
export function httpRelaySend(route: Extract<MailRoute, { kind: "http" }>, message: MailMessage, fetcher: typeof fetch = fetch): Promise<void> {
  return (async () => {
    const res = await fetcher(route.url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(route.token ? { authorization: `Bearer ${route.token}` } : {}) },
      body: JSON.stringify({ from: route.from, ...message }),
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`email relay answered HTTP ${res.status}`);
  })();
}

/** A real provider's send function for a route (`dev` and `none` have none: the caller handles them). */
export function providerSend(route: MailRoute): ((message: MailMessage) => Promise<void>) | null {
  if (route.kind === "sendgrid") {
    const sender: MessageSender = sendgridSender({ apiKey: route.apiKey, from: route.from }, route.apiBase);
    return (m) => sender.send({ to: m.to, subject: m.subject, body: m.text, ...(m.html ? { html: m.html } : {}), ...(m.from ? { from: m.from } : {}) });
  }
  if (route.kind === "http") return (m) => httpRelaySend(route, m);
  return null;
}
