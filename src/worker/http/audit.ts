import type { AuditActor, AuditContext, Json } from "../../shared/types";
import type { AppContext } from "../context";

/** The caller's address as the edge reports it (Cloudflare first, then a proxy's header). */
export function clientIp(c: AppContext): string | null {
  return c.req.header("cf-connecting-ip") ?? c.req.header("x-forwarded-for")?.split(",")[0]?.trim() ?? c.req.header("x-real-ip") ?? null;
}

/** The management caller (set by management auth): an M2M client or a user's token. */
function managementActor(c: AppContext): AuditActor | null {
  const auth = c.var.auth;
  if (!auth) return null;
  const isClient = auth.kind === "client";
  return {
    type: isClient ? "client" : "user",
    id: auth.subject || null,
    scopes: [...auth.scopes],
    client_id: auth.clientId ?? (isClient ? auth.subject.replace(/@clients$/, "") : null),
  };
}

/**
 * What every write RPC receives about its caller (SPEC §2.10 actor and request). The request body is the
 * parsed one a management route validated, or the one passed in; redaction happens in the object when
 * the audit event is built, so passwords in a sign-up body never reach a log row.
 */
/** Only who is calling from where (IP, user agent): for writes that record a device, not an audit event. */
export function deviceContext(c: AppContext): AuditContext {
  return {
    actor: { type: "anonymous", id: null },
    request: { method: c.req.method, path: new URL(c.req.url).pathname, ip: clientIp(c), user_agent: c.req.header("user-agent") ?? null },
  };
}

export function auditContext(c: AppContext, options: { actor?: AuditActor; body?: unknown } = {}): AuditContext {
  const url = new URL(c.req.url);
  const body = options.body ?? c.var.requestBody;
  return {
    actor: options.actor ?? managementActor(c) ?? { type: "anonymous", id: null },
    request: {
      method: c.req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      ...(body !== undefined ? { body: body as Json } : {}),
      ip: clientIp(c),
      user_agent: c.req.header("user-agent") ?? null,
    },
  };
}
