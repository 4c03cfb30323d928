/**
 * The one email address rule (issue 25 point 10), used by sign-up (the login page, /dbconnections/signup and
 * passwordless), POST and PATCH /users, user imports and organization invitations.
 *
 * The reference platform accepts an RFC 5322 addr-spec in its common form: a dot-atom local part and a domain
 * name. So no quoted local part, no domain literal, no display name, and so no angle brackets, quotes,
 * parentheses, backslashes, whitespace or control characters: an address is never markup. Letters outside
 * ASCII are accepted (RFC 6531 internationalized addresses).
 */

/** RFC 5321 4.5.3.1.3: a path is at most 256 octets, its angle brackets included. @default 254 */
export const EMAIL_MAX_LENGTH = 254;

/** RFC 5321 4.5.3.1.1. @default 64 */
const LOCAL_PART_MAX_LENGTH = 64;

/** RFC 5322 3.2.3 atext (plus RFC 6531 letters, marks and digits). */
const ATOM = "[\\p{L}\\p{M}\\p{N}!#$%&'*+/=?^_`{|}~-]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`, "u");

/** A host name's label (RFC 1035 2.3.1, internationalized); at least two labels. */
const LABEL = "[\\p{L}\\p{M}\\p{N}](?:[\\p{L}\\p{M}\\p{N}_-]*[\\p{L}\\p{M}\\p{N}])?";
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})+$`, "u");

/** Whether `value` (already trimmed) is an email address Gatehouse stores. */
export function isEmailAddress(value: string): boolean {
  if (value.length > EMAIL_MAX_LENGTH) return false;
  const at = value.lastIndexOf("@");
  if (at < 1) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  return local.length <= LOCAL_PART_MAX_LENGTH && LOCAL_PART.test(local) && DOMAIN.test(domain);
}
