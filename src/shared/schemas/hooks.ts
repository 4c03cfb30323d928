import { z } from "zod";

/** Triggers called blocking over HTTP in the prepare phase (SPEC §6.1). */
export const BLOCKING_TRIGGERS = ["validate-registration-username", "pre-user-registration", "pre-user-update", "pre-user-deletion"] as const;
/** Triggers delivered through the outbox as `hook.{trigger_id}` events (SPEC §6.1). */
export const OUTBOX_TRIGGERS = ["post-user-registration", "post-user-login", "post-user-deletion", "credentials-exchange"] as const;
/** Every trigger a webhook may bind to; anything else (`post-user-update`, a typo) is a 400. */
export const DISPATCHABLE_TRIGGERS: readonly string[] = [...BLOCKING_TRIGGERS, ...OUTBOX_TRIGGERS];

export type BlockingTrigger = (typeof BLOCKING_TRIGGERS)[number];
export type OutboxTrigger = (typeof OUTBOX_TRIGGERS)[number];

/** The reference platform's hook name rule. */
const name = z
  .string()
  .max(128)
  .regex(/^[a-zA-Z0-9]([ \-a-zA-Z0-9]*[a-zA-Z0-9])?$/, "name must be letters, digits, spaces and dashes, starting and ending with a letter or digit");

/** An absolute http(s) URL without credentials in it (a webhook's `url`, a log stream's `httpEndpoint`). */
export const httpUrlWithoutCredentials = (field: string) =>
  z
    .string()
    .max(2048)
    .refine((value) => {
      try {
        const u = new URL(value);
        return (u.protocol === "https:" || u.protocol === "http:") && !u.username && !u.password;
      } catch {
        return false;
      }
    }, `${field} must be an absolute http(s) URL without credentials`);

/** Where a webhook is POSTed. */
const url = httpUrlWithoutCredentials("url");

const trigger = z.string().min(1).max(64);

/**
 * The reference platform's SDKs send `script` (required in their types) and `dependencies`; a webhook hook
 * accepts them for compatibility and runs neither (this release dispatches webhooks only, to `url`).
 */
const script = z.string().max(100_000).optional();
const dependencies = z.record(z.string().max(256), z.string().max(256)).optional();

/**
 * POST /api/v2/hooks (webhook kind): `trigger_id` or the reference platform's `triggerId`, `url`, optional
 * `name` and `enabled` (default true); `script` and `dependencies` tolerated. Unknown properties are refused.
 */
export const createHookBody = z
  .strictObject({
    name: name.optional(),
    trigger_id: trigger.optional(),
    triggerId: trigger.optional(),
    url: url.optional(),
    /** A template hook (SPEC §6.2): built-in code instead of a webhook. */
    template_id: z.enum(["account-linking"]).optional(),
    enabled: z.boolean().optional(),
    script,
    dependencies,
  })
  .refine((b) => (b.trigger_id ?? b.triggerId) !== undefined, "trigger_id is required")
  .refine((b) => (b.url === undefined) !== (b.template_id === undefined), "a hook has either a url or a template_id")
  .refine((b) => !(b.trigger_id && b.triggerId && b.trigger_id !== b.triggerId), "trigger_id and triggerId disagree");

/** PATCH /api/v2/hooks/{id}: any of name, url, enabled, trigger. */
export const updateHookBody = z
  .strictObject({
    name: name.optional(),
    trigger_id: trigger.optional(),
    triggerId: trigger.optional(),
    url: url.optional(),
    enabled: z.boolean().optional(),
    script,
    dependencies,
  })
  .refine((b) => Object.keys(b).length > 0, "The body must change at least one field");

/** POST /api/v2/failed-events/bulk-retry: 1 to 100 event ids. */
export const bulkRetryBody = z.strictObject({
  ids: z.array(z.string().min(1).max(64)).min(1).max(100, "At most 100 ids per request"),
});

/** A webhook hook (SPEC §6.1; the reference platform's hooks API, webhook kind). */
export interface HookRecord {
  id: string;
  name: string;
  trigger_id: string;
  /** The webhook's url; empty for a template hook. */
  url: string;
  /** A template hook runs this built-in code instead of a webhook (`account-linking`). */
  template_id?: string;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}
