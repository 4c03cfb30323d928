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
