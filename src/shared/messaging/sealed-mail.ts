import { encryptionContext } from "../crypto/contexts";
import { fieldCipher } from "../crypto/encryption";

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
