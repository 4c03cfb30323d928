/**
 * Emails the tenant object sends itself (issue 14 point 5: the import job's completion email, the
 * verification email job), as outbox events delivered by the relay: the email is decided in the commit that
 * creates or finishes its job, and sent after it, retried with the relay's backoff and dead-lettered to
 * /failed-events when the provider keeps refusing (never a silent drop, never lost with a dying worker). A
 * text that carries a secret link waits sealed (AES-GCM under ENCRYPTION_KEY, bound to the recipient). An
 * email that belongs to a verification_email job completes the job when it goes out and fails it when it is
 * dead-lettered. The way out is the deployment's one mail rule (src/shared/messaging/mail-route.ts): a real
 * provider, or the development sink (the tenant's `dev_messages`).
 */
import { type MailMessage, mailRoute, providerSend } from "../../../shared/messaging/mail-route";
import { PROVIDER_TIMEOUT_MS } from "../../../shared/messaging/providers";
import { openEmailText } from "../../../shared/messaging/sealed-mail";
import type { DevMessage, Json } from "../../../shared/types";
import type { Sql } from "../../sql";
import type { WriteTx } from "../core/events";
import { type Destination, internalDestination } from "../core/relay";

/** The internal event of one email to send. */
export const SEND_EMAIL = "internal.send_email";

/**
 * One queued email: the message, or its text sealed (`sealed_text`, src/shared/messaging/sealed-mail.ts) when it carries a
 * secret; `job_id` names the verification_email job its delivery settles.
 */
export type QueuedEmail = (MailMessage | (Omit<MailMessage, "text" | "html"> & { sealed_text: string; sealed_html?: string })) & { job_id?: string };

/** Queues one email in the caller's transaction (sent by the relay once the transaction commits). */
export function queueEmail(tx: Pick<WriteTx, "emit">, message: QueuedEmail): void {
  tx.emit({ event_type: SEND_EMAIL, lane: "network", payload: { ...message } as Record<string, Json> });
}

async function openMessage(encryptionKey: string | undefined, queued: QueuedEmail): Promise<MailMessage> {
  const { job_id: _job, ...rest } = queued;
  if (!("sealed_text" in rest)) return rest;
  const { sealed_text, sealed_html, ...message } = rest;
  const html = sealed_html ? { html: await openEmailText(encryptionKey, message.to, sealed_html) } : {};
  return { ...message, text: await openEmailText(encryptionKey, message.to, sealed_text), ...html };
}

/**
 * What the email destination writes back, given by the capabilities that own those rows (composition.ts):
 * the development sink's message (login/challenges.ts) and the settling of a verification_email job
 * (jobs/email-verification.ts). Injected so that the outbox imports neither.
 */
export interface EmailEffects {
  recordDevMessage(sql: Sql, message: Omit<DevMessage, "created_at">, now: number): void;
  finishVerificationEmail(sql: Sql, jobId: string, sent: boolean, detail: string | null, now: number): unknown;
}

/** The relay's email destination. The development sink writes the tenant's own table; providers POST. */
export function emailDestination(sql: Sql, env: unknown, effects: EmailEffects): Destination {
  const { recordDevMessage, finishVerificationEmail } = effects;
  const encryptionKey = (env as { ENCRYPTION_KEY?: string }).ENCRYPTION_KEY;
  return internalDestination<QueuedEmail>({
    name: "email",
    eventType: SEND_EMAIL,
    timeoutMs: PROVIDER_TIMEOUT_MS,
    async deliver(queued, event, now) {
      const route = mailRoute(env);
      if (route.kind === "none") throw new Error(`email to ${queued.to} not sent: ${route.reason}`);
      const message = await openMessage(encryptionKey, queued);
      if (route.kind === "dev") {
        // Idempotent: a redelivered event (after a lost acknowledgement) keeps one message.
        const id = `msg_${event.id.slice(4)}`;
        if (!sql.first`SELECT 1 FROM dev_messages WHERE id = ${id}`) {
          recordDevMessage(sql, { id, channel: "email", recipient: message.to, subject: message.subject, body: message.text, sender: message.from ?? route.from, html: message.html ?? null }, now);
          console.log(`[dev-sink] email to ${message.to} [${message.subject}]: ${message.text}`);
        }
      } else {
        await (providerSend(route) as (m: MailMessage) => Promise<void>)(message);
      }
      if (queued.job_id) finishVerificationEmail(sql, queued.job_id, true, null, now);
    },
    onDeadLetter({ job_id }, detail, now) {
      if (job_id) finishVerificationEmail(sql, job_id, false, `The verification email could not be sent: ${detail}`, now);
    },
  });
}
