/** Users: rules shared by the worker (login, signup) and the tenant object (storage, lookup). */

/** Emails are trimmed and lowercased before storage and lookup everywhere (SPEC §4.2). */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();
