/** SCRIPT_NAME_TEMPLATE's default (SPEC "Per-tenant deployment details" 3). */
export const DEFAULT_SCRIPT_NAME_TEMPLATE = "tenant-{tenant_id}-auth";

/**
 * The dispatch-namespace script of a tenant: the template with `{tenant_id}`, `{custom_domain_id}`,
 * `{domain}` and `{host}` replaced (an absent value becomes the empty string).
 */
export function scriptNameFor(
  template: string | undefined,
  values: { tenant_id: string; custom_domain_id?: string | null; domain?: string | null; host?: string | null },
): string {
  return (template || DEFAULT_SCRIPT_NAME_TEMPLATE).replace(/\{(tenant_id|custom_domain_id|domain|host)\}/g, (_m, key: keyof typeof values) =>
    String(values[key] ?? ""),
  );
}

/** The suffix of a copy's second script slot (two-slot upgrades, src/worker/deploy/slots.ts). */
const SLOT_SUFFIX = "--b";

/** The other slot of a copy's script name: `<base>` <-> `<base>--b`. */
export function otherSlot(scriptName: string): string {
  return scriptName.endsWith(SLOT_SUFFIX) ? scriptName.slice(0, -SLOT_SUFFIX.length) : `${scriptName}${SLOT_SUFFIX}`;
}

/** Whether `scriptName` is one of the two slots of `base`: the dispatcher then follows the tenant row's live slot. */
export function isSlotOf(scriptName: string, base: string): boolean {
  return scriptName === base || scriptName === `${base}${SLOT_SUFFIX}`;
}
