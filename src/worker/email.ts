import { type MailMessage, mailRoute, providerSend } from "../shared/messaging/mail-route";
import { sendgridSender } from "./messaging/providers";

/**
 * Outgoing email's real providers behind one small interface (organization invitations, verification
 * emails). Which way email goes is the deployment's one mail rule (src/shared/messaging/mail-route.ts):
 * - `http`: POSTs `{from, to, subject, text, html}` as JSON to EMAIL_HTTP_URL with
 *   `Authorization: Bearer EMAIL_HTTP_TOKEN` (a transactional-mail relay); a non-2xx answer is an error.
 * - `sendgrid`: SendGrid's v3 mail send API with EMAIL_API_KEY (at EMAIL_API_BASE), the provider the MFA and
 *   passwordless emails use too (src/worker/messaging); the plain-text part, and the HTML part when there is one.
 * - `dev`: the development sink, which is the tenant's (src/worker/messaging/senders.ts `sendEmail`,
 *   read at GET /__dev/messages): this module has no mailbox of its own.
 * EMAIL_FROM is the sender address. @default "no-reply@gatehouse.local"
 */
export type EmailMessage = MailMessage;

export interface EmailProvider {
  readonly kind: "http" | "sendgrid";
  send(message: EmailMessage): Promise<void>;
}

/**
 * The configured real provider, or null when email goes to the development sink. A misconfiguration is an
 * error at send time, never a silent drop.
 */
export function emailProvider(env: unknown): EmailProvider | null {
  const kind = (env as { EMAIL_PROVIDER?: string }).EMAIL_PROVIDER || "";
  if (kind !== "" && kind !== "dev" && kind !== "http" && kind !== "sendgrid") throw new Error(`Unknown EMAIL_PROVIDER "${kind}" (dev, http or sendgrid)`);
  if (kind !== "http" && kind !== "sendgrid") return null;
  const route = mailRoute(env);
  if (route.kind === "sendgrid") {
    return {
      kind: "sendgrid",
      async send(message) {
        const sender = sendgridSender({ apiKey: route.apiKey, from: route.from }, route.apiBase);
        await sender.send({ to: message.to, subject: message.subject, body: message.text, ...(message.html ? { html: message.html } : {}), ...(message.from ? { from: message.from } : {}) });
      },
    };
  }
  if (route.kind === "http") return { kind: "http", send: providerSend(route) as (m: MailMessage) => Promise<void> };
  const reason = route.kind === "none" ? route.reason : "misconfigured";
  return {
    kind,
    send: async () => {
      throw new Error(reason);
    },
  };
}
