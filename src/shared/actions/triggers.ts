/**
 * The action triggers this service can dispatch (SPEC §6.1, the reference platform's trigger ids). Each names
 * where it runs, the handler an action exports for it and the shape of the `api` object it receives. Binding
 * to anything else (a typo, `post-user-update`, a reference trigger not served here) is 400.
 */
export interface TriggerSpec {
  id: string;
  version: string;
  /** `prepare`: before any write, blocking; `inline`: in the token-issuing request; `outbox`: by the relay. */
  placement: "prepare" | "inline" | "outbox";
  /** What the action module exports for this trigger (`exports.onExecutePostLogin = async (event, api) => ...`). */
  handler: string;
}

export const ACTION_TRIGGERS: readonly TriggerSpec[] = [
  { id: "post-login", version: "v3", placement: "inline", handler: "onExecutePostLogin" },
  { id: "credentials-exchange", version: "v2", placement: "inline", handler: "onExecuteCredentialsExchange" },
  { id: "pre-user-registration", version: "v2", placement: "prepare", handler: "onExecutePreUserRegistration" },
  { id: "post-user-registration", version: "v2", placement: "outbox", handler: "onExecutePostUserRegistration" },
  { id: "post-user-deletion", version: "v1", placement: "outbox", handler: "onExecutePostUserDeletion" },
];

/** SPEC §6.1 names the login trigger `post-user-login`; the reference platform's id is `post-login`. */
const ALIASES: Record<string, string> = { "post-user-login": "post-login" };

/** The canonical trigger id for an id or its alias, or null when the system cannot dispatch it. */
export function canonicalTrigger(id: string): string | null {
  const canonical = ALIASES[id] ?? id;
  return ACTION_TRIGGERS.some((t) => t.id === canonical) ? canonical : null;
}

export function triggerSpec(id: string): TriggerSpec | undefined {
  const canonical = canonicalTrigger(id);
  return ACTION_TRIGGERS.find((t) => t.id === canonical);
}

/** The runtime every action runs on (the reference platform's default; no other is offered). */
export const ACTION_RUNTIME = "node22";
export const ACTION_RUNTIMES = ["node22", "node18"] as const;
