import { encryptionContext } from "../../shared/crypto/contexts";
import { fieldCipher } from "../../shared/crypto/encryption";
import { randomId } from "../../shared/crypto/random";
import type { TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";
import { type EmailProvider, emailProvider } from "../email";
import { effectiveEmailProvider } from "../management/email-provider";
import { tenantObject } from "../tenant/stubs";
import { devSinkSender, type MessageSender, sendgridSender, twilioSender } from "./providers";

/**
 * Picks the sender of a channel from configuration: SMS follows the tenant's selected guardian provider
 * (`twilio` with its stored credentials; `auth0`, the deployment's own sender, is the development sink when
 * DEV_MESSAGE_SINK=1); email follows EMAIL_PROVIDER (`sendgrid`, or the `http` relay), else the development
 * sink. Null: nothing can send.
 */
export async function smsSender(c: AppContext, config: TenantConfig): Promise<MessageSender | null> {
  if (config.guardian.sms_provider === "twilio") {
    const twilio = await tenantObject(c.env, c.var.tenant.id).guardian().twilio();
    if (!twilio.sid || !twilio.auth_token_enc || (!twilio.from && !twilio.messaging_service_sid)) return null;
    const cipher = await fieldCipher(c.env.ENCRYPTION_KEY);
    const authToken = await cipher.decrypt(twilio.auth_token_enc, encryptionContext.smsProvider("twilio"));
    return twilioSender({ sid: twilio.sid, authToken, from: twilio.from, messagingServiceSid: twilio.messaging_service_sid }, c.var.settings.twilioApiBase);
  }
  return devSink(c, "sms");
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
  if (c.env.EMAIL_PROVIDER === "http") return relaySender(emailProvider(c.env));
  return devSink(c, "email");
}

/** EMAIL_PROVIDER=http: the transactional-mail relay the organization invitations use (src/worker/email.ts). */
function relaySender(relay: EmailProvider): MessageSender {
  return {
    name: "http",
    send: (m) => relay.send({ to: m.to, subject: m.subject ?? "Your verification code", text: m.body }),
  };
}

function devSink(c: AppContext, channel: "sms" | "email"): MessageSender | null {
  if (!c.var.settings.devMessageSink) return null;
  const stub = tenantObject(c.env, c.var.tenant.id);
  return devSinkSender(channel, (m) => stub.devMessages().record({ id: randomId("msg_"), channel, recipient: m.to, subject: m.subject ?? null, body: m.body }));
}

/** GET /__dev/messages[?to=]: what the development sink kept for this tenant, newest first (404 when off). */
export async function devMessagesEndpoint(c: AppContext): Promise<Response> {
  if (!c.var.settings.devMessageSink) return c.json({ error: "not_found", error_description: "The development message sink is off (DEV_MESSAGE_SINK=1 enables it)" }, 404);
  const to = c.req.query("to")?.trim() || null;
  const limit = Number(c.req.query("limit") ?? 50);
  const messages = await tenantObject(c.env, c.var.tenant.id).devMessages().list(to, Number.isInteger(limit) ? limit : 50);
  return c.json({ messages });
}
