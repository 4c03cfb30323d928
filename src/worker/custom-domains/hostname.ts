/**
 * Custom-domain hostname rules (issue 15): a fully qualified DNS name the tenant can point at the service.
 * Refused with the reason: IP literals, ports, wildcards, the issuer apex and every host under it (those are
 * tenant subdomains, never probed as custom domains: SPEC §5.5), and names that break RFC 1035 / 1123 length
 * and label rules. Internationalized names must be sent in their ASCII (punycode) form.
 */
export function hostnameProblem(raw: string, apexHost: string): string | null {
  const host = raw.trim().toLowerCase();
  if (host.length === 0) return "domain is required";
  if (host.length > 253) return "domain must be at most 253 characters";
  if (/[^\x21-\x7e]/.test(host)) return "domain must be an ASCII hostname (use the punycode form of internationalized names)";
  if (host.includes("*")) return "domain must not be a wildcard";
  if (host.includes("/") || host.includes("@") || host.includes("?") || host.includes("#")) return "domain must be a hostname, not a URL";
  if (host.startsWith("[") || host.includes(":")) return "domain must not contain a port or an IPv6 address";
  if (host.endsWith(".")) return "domain must not end with a dot";
  const labels = host.split(".");
  if (labels.length < 2) return "domain must be a fully qualified name (at least two labels)";
  for (const label of labels) {
    if (label.length === 0) return "domain must not contain empty labels";
    if (label.length > 63) return "each label of domain must be at most 63 characters";
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(label)) {
      return "labels of domain must be letters, digits and inner hyphens";
    }
  }
  if (labels.every((l) => /^\d+$/.test(l)) || /^\d+$/.test(labels[labels.length - 1] as string)) {
    return "domain must not be an IP address";
  }
  const apexName = apexHost.replace(/:\d+$/, "").toLowerCase();
  if (host === apexName || host.endsWith(`.${apexName}`)) return "domain must not be the service's own domain or under it";
  return null;
}
