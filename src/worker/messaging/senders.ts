import { encryptionContext } from "../../shared/crypto/contexts";
import { fieldCipher } from "../../shared/crypto/encryption";
import { randomId } from "../../shared/crypto/random";
import { type MailMessage, mailRoute } from "../../shared/messaging/mail-route";
import type { DevMessage, TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";
import { type EmailProvider, emailProvider } from "../email";
import { effectiveEmailProvider } from "../management/settings/email-provider";
import { requestHost } from "../routing/resolve-tenant";
import { tenantObject } from "../tenant/stubs";
import { devSinkSender, type MessageSender, sendgridSender, twilioSender } from "./providers";

/**
 * Picks the sender of a channel from configuration: SMS follows the tenant's selected guardian provider
 * (`twilio` with its stored credentials; `auth0`, the deployment's own sender, is the development sink when
 * DEV_MESSAGE_SINK=1); email follows the deployment's one mail rule (src/shared/messaging/mail-route.ts:
 * `sendgrid`, the `http` relay, or the development sink). Null: nothing can send.
 */
export async function smsSender(c: AppContext, config: TenantConfig): Promise<MessageSender | null> {
  if (config.guardian.sms_provider === "twilio") {
    const twilio = await tenantObject(c.env, c.var.tenant.id).guardian().twilio();
    if (!twilio.sid || !twilio.auth_token_enc || (!twilio.from && !twilio.messaging_service_sid)) return null;
    const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
    const authToken = await cipher.decrypt(twilio.auth_token_enc, encryptionContext.smsProvider("twilio"));
    return twilioSender({ sid: twilio.sid, authToken, from: twilio.from, messagingServiceSid: twilio.messaging_service_sid }, c.var.settings.twilioApiBase);
  }
  return c.var.settings.devMessageSink ? devSink(c, "sms") : null;
}

export async function emailSender(c: AppContext): Promise<MessageSender | null> {
  // The tenant's provider (`/api/v2/emails/provider`), or the control plane's it inherits, comes first.
  const configured = await effectiveEmailProvider(c, c.var.tenant.id);
  if (configured?.provider.enabled) {
    const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
    const apiKey = await cipher.decrypt(configured.provider.api_key_enc, encryptionContext.emailProvider(configured.tenantId));
    const env = c.env as unknown as { EMAIL_FROM?: string; EMAIL_API_BASE?: string };
    const from = configured.provider.default_from_address ?? (env.EMAIL_FROM || "no-reply@gatehouse.local");
    return sendgridSender({ apiKey, from }, env.EMAIL_API_BASE || "https://api.sendgrid.com");
  }
  const provider = c.var.settings.emailProvider;
  if (provider) return sendgridSender({ apiKey: provider.apiKey, from: provider.from }, provider.apiBase);
  if (c.env.EMAIL_PROVIDER === "http") return relaySender(emailProvider(c.env) as EmailProvider);
  return mailRoute(c.env).kind === "dev" ? devSink(c, "email") : null;
}

/** EMAIL_PROVIDER=http: the transactional-mail relay the organization invitations use (src/worker/email.ts). */
function relaySender(relay: EmailProvider): MessageSender {
  return {
    name: "http",
    send: (m) => relay.send({ to: m.to, subject: m.subject ?? "Your verification code", text: m.body }),
  };
}

/** Keeps a message in the tenant's development sink (and prints it to the console of `wrangler dev`). */
function keepInSink(c: AppContext, message: Omit<DevMessage, "id" | "created_at">): Promise<void> {
  return tenantObject(c.env, c.var.tenant.id).devMessages().record({ id: randomId("msg_"), ...message });
}

function devSink(c: AppContext, channel: "sms" | "email"): MessageSender {
  return devSinkSender(channel, (m) => keepInSink(c, { channel, recipient: m.to, subject: m.subject ?? null, body: m.body }));
}

/**
 * Sends one email (with its HTML part, when it has one) the configured way: a real provider, or the
 * tenant's development sink. Throws when no way is configured, or the provider refuses.
 */
export async function sendEmail(c: AppContext, message: MailMessage): Promise<void> {
  const route = mailRoute(c.env);
  if (route.kind === "dev") {
    await keepInSink(c, { channel: "email", recipient: message.to, subject: message.subject, body: message.text, sender: message.from ?? route.from, html: message.html ?? null });
    console.log(`[dev-sink] email to ${message.to} [${message.subject}]: ${message.text}`);
    return;
  }
  const provider = emailProvider(c.env);
  if (!provider) throw new Error(route.kind === "none" ? route.reason : "no email provider");
  await provider.send(message);
}

/** Whether the development sink is on for any channel (DEV_MESSAGE_SINK=1, or EMAIL_PROVIDER=dev). */
const sinkIsOn = (c: AppContext) => c.var.settings.devMessageSink || mailRoute(c.env).kind === "dev";

const isLoopback = (hostname: string) => hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "127.0.0.1" || hostname === "[::1]";

/** Both the URL's host and the Host (or X-Forwarded-Host) header the request names must be loopback. */
const isLoopbackRequest = (request: Request) =>
  isLoopback(new URL(request.url).hostname) && isLoopback(new URL(`http://${requestHost(request)}`).hostname);

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** The sink as a page a person reads in a browser: newest first, each message's text as sent. */
function sinkPage(tenantId: string, messages: DevMessage[]): string {
  const items = messages
    .map(
      (m) => `<article><header><b>${escapeHtml(m.channel.toUpperCase())}</b> to <b>${escapeHtml(m.recipient)}</b>
  <time>${escapeHtml(m.created_at)}</time>${m.subject ? `<div class="subject">${escapeHtml(m.subject)}</div>` : ""}</header>
  <pre>${escapeHtml(m.body)}</pre></article>`,
    )
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Development messages: ${escapeHtml(tenantId)}</title>
<style>body{font:14px system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}article{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.75rem}
time{color:#666;margin-left:.5rem}.subject{margin-top:.25rem}pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:.5rem}</style></head>
<body><h1>Development messages</h1><p>Tenant <code>${escapeHtml(tenantId)}</code>: SMS and email kept by the development sink, newest first
(JSON: <code>?format=json</code> or <code>Accept: application/json</code>).</p>${items || "<p>No messages yet.</p>"}</body></html>`;
}

/**
 * GET /__dev/messages[?to=&limit=] (alias GET /__dev/mail): the one development sink of this tenant (SMS
 * and email: MFA and passwordless codes, organization invitations, verification and job completion emails),
 * newest first. JSON, or an HTML page when a browser asks for text/html. Each message carries
 * `{id, channel, to, subject, text, html?, from?, created_at}` and the same values as `recipient` and `body`.
 * 404 unless the sink is on (DEV_MESSAGE_SINK=1 or EMAIL_PROVIDER=dev) and the request came to a loopback
 * host (localhost, *.localhost, 127.0.0.1), so a deployment on a real domain never shows it.
 */
export async function devMessagesEndpoint(c: AppContext): Promise<Response> {
  if (!sinkIsOn(c) || !isLoopbackRequest(c.req.raw)) {
    return c.json({ error: "not_found", error_description: "The development message sink is off (DEV_MESSAGE_SINK=1 enables it; loopback hosts only)" }, 404);
  }
  const to = c.req.query("to")?.trim() || null;
  const limit = Number(c.req.query("limit") ?? 50);
  const messages = await tenantObject(c.env, c.var.tenant.id).devMessages().list(to, Number.isInteger(limit) ? limit : 50);
  c.header("Cache-Control", "no-store");
  const wantsHtml = c.req.query("format") !== "json" && /text\/html/.test(c.req.header("accept") ?? "") && !/application\/json/.test(c.req.header("accept") ?? "");
  if (wantsHtml || c.req.query("format") === "html") return c.html(sinkPage(c.var.tenant.id, messages));
  return c.json({
    messages: messages.map((m) => ({
      id: m.id,
      channel: m.channel,
      to: m.recipient,
      ...(m.sender ? { from: m.sender } : {}),
      subject: m.subject,
      text: m.body,
      ...(m.html ? { html: m.html } : {}),
      created_at: m.created_at,
      recipient: m.recipient,
      body: m.body,
    })),
  });
}
