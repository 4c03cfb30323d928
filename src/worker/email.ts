import type { Context } from "hono";
import { randomId } from "../shared/crypto/random";
import { now } from "../shared/clock";
import { sendgridSender } from "./messaging/providers";
import { requestHost } from "./routing/resolve-tenant";

/**
 * Outgoing email behind one small interface (organization invitations today). Selected by EMAIL_PROVIDER:
 * - `dev` (the default): a development sink. Every message is printed to the console and kept (the latest
 *   DEV_MAILBOX_SIZE, in this isolate) for `GET /__dev/mail`, which answers only on loopback hosts
 *   (localhost, *.localhost, 127.0.0.1), so a deployment on a real domain never exposes it.
 * - `http`: POSTs `{from, to, subject, text, html}` as JSON to EMAIL_HTTP_URL with
 *   `Authorization: Bearer EMAIL_HTTP_TOKEN` (a transactional-mail relay); a non-2xx answer is an error.
 * - `sendgrid`: SendGrid's v3 mail send API with EMAIL_API_KEY (at EMAIL_API_BASE), the provider the MFA and
 *   passwordless emails use too (src/worker/messaging); the plain-text part is sent.
 * EMAIL_FROM is the sender address. @default "no-reply@gatehouse.local"
 */
export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
  /** Omitted for plain-text messages (the MFA and passwordless codes). */
  html?: string;
}

export interface EmailProvider {
  readonly kind: "dev" | "http" | "sendgrid";
  send(message: EmailMessage): Promise<void>;
}

/** A message as the development sink keeps it. */
export interface SentEmail extends EmailMessage {
  id: string;
  from: string;
  sent_at: string;
}

/** How many messages the development sink keeps. @default 200 */
export const DEV_MAILBOX_SIZE = 200;
const mailbox: SentEmail[] = [];

interface EmailEnv {
  EMAIL_PROVIDER?: string;
  EMAIL_FROM?: string;
  EMAIL_HTTP_URL?: string;
  EMAIL_HTTP_TOKEN?: string;
  EMAIL_API_KEY?: string;
  EMAIL_API_BASE?: string;
}

const settings = (env: unknown) => env as EmailEnv;

/** The configured provider (a misconfiguration is an error at send time, never a silent drop). */
export function emailProvider(env: unknown): EmailProvider {
  const e = settings(env);
  const from = e.EMAIL_FROM || "no-reply@gatehouse.local";
  const kind = e.EMAIL_PROVIDER || "dev";
  if (kind === "http") {
    return {
      kind: "http",
      async send(message) {
        if (!e.EMAIL_HTTP_URL) throw new Error("EMAIL_PROVIDER=http needs EMAIL_HTTP_URL");
        const res = await fetch(e.EMAIL_HTTP_URL, {
          method: "POST",
          headers: { "content-type": "application/json", ...(e.EMAIL_HTTP_TOKEN ? { authorization: `Bearer ${e.EMAIL_HTTP_TOKEN}` } : {}) },
          body: JSON.stringify({ from, ...message }),
          signal: AbortSignal.timeout(10_000),
        });
        if (!res.ok) throw new Error(`email relay answered HTTP ${res.status}`);
      },
    };
  }
  if (kind === "sendgrid") {
    return {
      kind: "sendgrid",
      async send(message) {
        if (!e.EMAIL_API_KEY) throw new Error("EMAIL_PROVIDER=sendgrid needs EMAIL_API_KEY");
        const sender = sendgridSender({ apiKey: e.EMAIL_API_KEY, from }, e.EMAIL_API_BASE || undefined);
        await sender.send({ to: message.to, subject: message.subject, body: message.text });
      },
    };
  }
  if (kind !== "dev") throw new Error(`Unknown EMAIL_PROVIDER "${kind}" (dev, http or sendgrid)`);
  return {
    kind: "dev",
    async send(message) {
      const sent: SentEmail = { id: randomId("msg_", 16), from, ...message, sent_at: new Date(now()).toISOString() };
      mailbox.push(sent);
      if (mailbox.length > DEV_MAILBOX_SIZE) mailbox.shift();
      console.log(`[dev mail] to=${sent.to} subject=${JSON.stringify(sent.subject)}\n${sent.text}`);
    },
  };
}

const isLoopback = (hostname: string) => hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "127.0.0.1";

/** Both the URL's host and the Host (or X-Forwarded-Host) header the request names must be loopback. */
const isLoopbackRequest = (request: Request) =>
  isLoopback(new URL(request.url).hostname) && isLoopback(new URL(`http://${requestHost(request)}`).hostname);

/**
 * GET /__dev/mail[?to=address]: the development sink's messages, newest first, as JSON. 404 unless the
 * dev provider is selected and the request came to a loopback host.
 */
export function devMailRoute(c: Context): Response {
  const kind = settings(c.env).EMAIL_PROVIDER || "dev";
  if (kind !== "dev" || !isLoopbackRequest(c.req.raw)) return c.json({ error: "not_found", error_description: "Not found" }, 404);
  const to = c.req.query("to")?.trim().toLowerCase();
  const messages = mailbox.filter((m) => to === undefined || m.to.toLowerCase() === to).reverse();
  c.header("Cache-Control", "no-store");
  return c.json({ messages });
}
