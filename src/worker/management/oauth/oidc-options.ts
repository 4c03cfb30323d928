import { egressRefusal, type EgressPolicy } from "../../../shared/egress-policy";
import type { Json } from "../../../shared/types";

/**
 * The options of an enterprise OpenID Connect connection (strategy `oidc`, issue 29 point 0), as the reference
 * platform names them: `type` (`back_channel`: the code flow with a client secret; `front_channel` is not
 * offered here), `discovery_url` or `issuer`, `client_id`, `client_secret`, `scope` (or `scopes`), `domain_aliases`,
 * `icon_url`, `show_as_button`. Answers why they cannot be saved, or null.
 */
export function oidcOptionsRefusal(strategy: string, options: Record<string, Json> | undefined, egress: EgressPolicy): string | null {
  if (strategy !== "oidc") return null;
  const o = options ?? {};
  const type = o.type ?? "back_channel";
  if (type === "front_channel") return "options.type front_channel is not supported: use back_channel (the code flow with a client_secret)";
  if (type !== "back_channel") return "options.type must be back_channel";
  if (typeof o.client_id !== "string" || !o.client_id) return "Missing required property: options.client_id";
  if (typeof o.client_secret !== "string" || !o.client_secret) return "Missing required property: options.client_secret (required for type back_channel)";
  if (o.discovery_url === undefined && o.issuer === undefined) return "Missing required property: options.discovery_url or options.issuer";
  for (const key of ["discovery_url", "issuer", "icon_url"] as const) {
    const value = o[key];
    if (value === undefined) continue;
    if (typeof value !== "string") return `options.${key} must be a URL`;
    if (key === "icon_url") {
      if (!/^https:\/\//i.test(value)) return "options.icon_url must be an https URL";
      continue;
    }
    const refused = egressRefusal(value, egress);
    if (refused) return `options.${key}: ${refused}`;
  }
  for (const key of ["scope", "scopes"] as const) if (o[key] !== undefined && typeof o[key] !== "string") return `options.${key} must be a string of space-separated scopes`;
  if (o.show_as_button !== undefined && typeof o.show_as_button !== "boolean") return "options.show_as_button must be a boolean";
  if (o.domain_aliases !== undefined && !(Array.isArray(o.domain_aliases) && o.domain_aliases.every((d) => typeof d === "string" && /^[a-z0-9.-]+\.[a-z]{2,}$/i.test(d)))) {
    return "options.domain_aliases must be an array of domain names";
  }
  return null;
}
