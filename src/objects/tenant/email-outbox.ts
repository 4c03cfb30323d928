/**
 * Emails the tenant object sends itself (issue 14 point 5: the import job's completion email), as outbox
 * events delivered by the relay: the email is decided in the commit that finishes the job, and sent after
 * it, retried with the relay's backoff and dead-lettered to /failed-events when the provider keeps
 * refusing (never a silent drop). The way out is the deployment's one mail rule (src/shared/messaging/
 * mail-route.ts): a real provider, or the development sink (the tenant's `dev_messages`).
 */
import { type MailMessage, mailRoute, providerSend } from "../../shared/messaging/mail-route";
import { PROVIDER_TIMEOUT_MS } from "../../shared/messaging/providers";
import type { Json } from "../../shared/types";
import type { Sql } from "../sql";
import { recordDevMessage } from "./challenges";
import type { WriteTx } from "./events";
import type { Destination } from "./relay";

/** The internal event of one email to send. */
export const SEND_EMAIL = "internal.send_email";

/** Queues one email in the caller's transaction (sent by the relay once the transaction commits). */
export function queueEmail(tx: Pick<WriteTx, "emit">, message: MailMessage): void {
  tx.emit({ event_type: SEND_EMAIL, lane: "network", payload: { ...message } as Record<string, Json> });
}

/** The relay's email destination. The development sink writes the tenant's own table; providers POST. */
export function emailDestination(sql: Sql, env: unknown): Destination {
  return {
    name: "email",
    lane: "network",
    timeoutMs: PROVIDER_TIMEOUT_MS,
    accepts: (type) => type === SEND_EMAIL,
    async deliver(event, now) {
      const message = event.payload as unknown as MailMessage;
      const route = mailRoute(env);
      if (route.kind === "none") throw new Error(`email to ${message.to} not sent: ${route.reason}`);
      if (route.kind === "dev") {
        // Idempotent: a redelivered event (after a lost acknowledgement) keeps one message.
        const id = `msg_${event.id.slice(4)}`;
        if (sql.first`SELECT 1 FROM dev_messages WHERE id = ${id}`) return;
        recordDevMessage(sql, { id, channel: "email", recipient: message.to, subject: message.subject, body: message.text, sender: route.from, html: message.html ?? null }, now);
        console.log(`[dev-sink] email to ${message.to} [${message.subject}]: ${message.text}`);
        return;
      }
      await (providerSend(route) as (m: MailMessage) => Promise<void>)(message);
    },
  };
}
