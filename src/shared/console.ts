/**
 * The admin console's first-party application on the control-plane tenant (issue 30): seeded like the
 * control-plane client, it logs operators in with the authorization code flow and PKCE. A user's token
 * issued to it on the control plane is an operator token: it carries the management scopes the user holds
 * as permissions there, and management auth reads those permissions again at each request.
 */
export const CONSOLE_CLIENT_ID = "gatehouse-console";

/** Where the console lives on the apex host. */
export const CONSOLE_PATH = "/admin";

/** The console's redirect URI for an issuer (the apex origin, trailing slash or not). */
export function consoleCallback(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}${CONSOLE_PATH}/callback`;
}

/** The console's post-logout return URI for an issuer. */
export function consoleLoggedOut(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}${CONSOLE_PATH}/logged-out`;
}

/**
 * The control-plane roles the seed offers operators (issue 30 "roles on the control plane"): Admin holds
 * every management scope, Editor every read, create and update scope, Viewer every read scope (Editor and
 * Viewer without the {@link CREDENTIAL_READ_SCOPES}).
 */
export const OPERATOR_ROLES = [
  { name: "Gatehouse Admin", description: "Operates every tenant: every management scope", verbs: ["read", "create", "update", "delete"] },
  { name: "Gatehouse Editor", description: "Reads, creates and changes, never deletes", verbs: ["read", "create", "update"] },
  { name: "Gatehouse Viewer", description: "Reads everything, changes nothing", verbs: ["read"] },
] as const;

/**
 * Reads that answer credentials: client secrets (`read:client_keys`) and a full management token for a
 * per-tenant copy (`read:tenant_credentials`). Whoever holds them can act as those clients, so only the
 * role that may already do everything (Admin, the one with `delete`) gets them; a Viewer "changes nothing".
 */
export const CREDENTIAL_READ_SCOPES: readonly string[] = ["read:client_keys", "read:tenant_credentials"];

/** The management scopes a seeded operator role holds. */
export function operatorRoleScopes(verbs: readonly string[], managementScopes: readonly string[]): string[] {
  const full = verbs.includes("delete");
  return managementScopes.filter((s) => verbs.includes(s.slice(0, s.indexOf(":"))) && (full || !CREDENTIAL_READ_SCOPES.includes(s)));
}

/** A console session as the worker prepared it (issue 30): the cookie secret's hash, the encrypted token. */
export interface NewConsoleSession {
  id_hash: string;
  access_token_enc: string;
  token_expires_at: number;
  csrf_token: string;
  profile: Record<string, string>;
}

export interface ConsoleSessionRecord extends NewConsoleSession {
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}
