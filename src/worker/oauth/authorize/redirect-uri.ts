/**
 * Redirect URI matching (SPEC §5.9, RFC 6749 §3.1.2, RFC 9700 §4.1.3). Exact scheme, host, port and path
 * unless the registered entry uses a wildcard; wildcards are compiled from escaped text, so registered
 * values can never inject regular-expression syntax.
 */

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");

/** A registered path with `*` segments: `*` matches any run of path characters. */
function pathPattern(path: string): RegExp {
  return new RegExp(`^${path.split("*").map(escapeRegExp).join("[^?#]*")}$`);
}

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/**
 * Whether a URI string is already in canonical form (SPEC §5.9 strict matching, issue 6): printable ASCII
 * only (no control characters, spaces or non-ASCII dots such as `。`), no backslashes, no userinfo, and a
 * host and path that URL parsing leaves unchanged (no numeric-shorthand hosts such as `127.1`, no dot
 * segments, no default port spelled out). Comparing after normalization would let a string that merely
 * normalizes to a registered URI through, and would echo the raw string into `Location`.
 */
export function isCanonicalUri(raw: string): boolean {
  if (!/^[\x21-\x7e]+$/.test(raw) || raw.includes("\\")) return false;
  const url = parse(raw);
  if (!url || url.username || url.password) return false;
  const parts = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/([^/?#]*)([^?#]*)/.exec(raw);
  if (!parts) return url.href === raw;
  const [, authority = "", path = ""] = parts;
  if (authority.includes("@") || authority.toLowerCase() !== url.host.toLowerCase()) return false;
  return path === url.pathname || (path === "" && url.pathname === "/");
}

/** Registered query parameters must all be present with the same values, and nothing extra. */
function sameQuery(registered: URL, requested: URL): boolean {
  const a = [...registered.searchParams].map(([k, v]) => `${k}=${v}`).sort();
  const b = [...requested.searchParams].map(([k, v]) => `${k}=${v}`).sort();
  return a.length === b.length && a.every((entry, i) => entry === b[i]);
}

/** Whether one registered entry admits the requested redirect URI. */
export function matchesRegistered(registeredEntry: string, requestedUri: string): boolean {
  const requested = parse(requestedUri);
  if (!requested || requested.hash || requestedUri.includes("#")) return false;
  const hostWildcard = /^(https?):\/\/\*\.(.+)$/i.exec(registeredEntry);
  const registered = parse(hostWildcard ? `${hostWildcard[1]}://wildcard.${hostWildcard[2]}` : registeredEntry);
  if (!registered) return false;
  if (registered.protocol !== requested.protocol) return false;
  if (registered.port !== requested.port) return false;

  if (hostWildcard) {
    // `*.` needs at least three labels in the registration (`*.example.com`) and http(s).
    const suffix = registered.hostname.slice("wildcard.".length);
    if (suffix.split(".").length < 2) return false;
    const host = requested.hostname;
    if (!host.endsWith(`.${suffix}`)) return false;
    const label = host.slice(0, -(suffix.length + 1));
    if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(label)) return false;
  } else if (registered.hostname !== requested.hostname) {
    return false;
  }

  const registeredPath = hostWildcard ? registered.pathname : decodeURI(registered.pathname);
  if (registeredEntry.includes("*") && registeredPath.includes("*")) {
    return pathPattern(registeredPath).test(decodeURI(requested.pathname));
  }
  if (registered.pathname !== requested.pathname) return false;
  return hostWildcard ? true : sameQuery(registered, requested);
}

/**
 * The URL to redirect to for a requested URI among registered entries (logout URLs): exactly the
 * registered string that matched when it is an exact entry, the requested string (canonical, checked)
 * when a wildcard entry matched, or null when none does.
 */
export function registeredTarget(entries: readonly string[], requestedUri: string): string | null {
  if (!isCanonicalUri(requestedUri)) return null;
  const entry = entries.find((e) => matchesRegistered(e, requestedUri));
  if (entry === undefined) return null;
  return entry.includes("*") ? requestedUri : entry;
}

/**
 * Whether the requested redirect URI is acceptable for a client: one of its callbacks matches, or it is
 * the service's own issuer or universal-login URL on this tenant's issuer (always accepted).
 */
export function isAllowedRedirect(callbacks: readonly string[], requestedUri: string, issuer: string): boolean {
  const requested = parse(requestedUri);
  if (!requested || requestedUri.includes("#") || !isCanonicalUri(requestedUri)) return false;
  const own = new URL(issuer);
  if (requested.origin === own.origin && (requested.pathname === own.pathname || requested.pathname.startsWith("/u2/"))) {
    return true;
  }
  return callbacks.some((entry) => matchesRegistered(entry, requestedUri));
}
