import { encryptionContext } from "../crypto/contexts";
import { fieldCipher } from "../crypto/encryption";

/**
 * A queued email whose parts wait sealed (see {@link sealEmailText}): the text, and the HTML part when a
 * tenant's template rendered one; `from` is the template's sender, when it names one.
 */
export interface SealedEmail {
  subject: string;
  sealed_text: string;
  sealed_html?: string;
  from?: string;
}

/** Seals an email's text and HTML parts for its recipient. */
export async function sealEmail(encryptionKey: string | undefined, to: string, message: { subject: string; text: string; html?: string; from?: string }): Promise<SealedEmail> {
  return {
    subject: message.subject,
    sealed_text: await sealEmailText(encryptionKey, to, message.text),
    ...(message.html ? { sealed_html: await sealEmailText(encryptionKey, to, message.html) } : {}),
    ...(message.from ? { from: message.from } : {}),
  };
}

/**
 * The text of an email that waits in a tenant's outbox while it carries a secret (a verification link):
 * sealed by the worker before the commit that queues it, opened by the relay that sends it. AES-GCM under
 * ENCRYPTION_KEY, bound to the recipient.
 */
export async function sealEmailText(encryptionKey: string | undefined, to: string, text: string): Promise<string> {
  return (await fieldCipher(encryptionKey)).encrypt(text, encryptionContext.queuedEmailText(to));
}

/** See {@link sealEmailText}. */
export async function openEmailText(encryptionKey: string | undefined, to: string, sealed: string): Promise<string> {
  return (await fieldCipher(encryptionKey)).decrypt(sealed, encryptionContext.queuedEmailText(to));
}
