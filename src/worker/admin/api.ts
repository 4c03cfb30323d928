import { decodeJwt } from "jose";

/** One management API call the console made for the page: what "Show the API call" prints (issue 30). */
export interface ApiCall {
  method: string;
  url: string;
  tenant: string | null;
  body?: unknown;
  /** A multipart/form-data body's parts, in order (a file part by its field name only: its content never reaches a page). */
  form?: FormPart[];
  status: number;
}

/** One part of a multipart/form-data call as "Show the API call" prints it. */
export type FormPart = { name: string; value: string } | { name: string; file: string };

/** The API's answer: the parsed JSON body (or null) and the status. */
export interface ApiResult<T = unknown> {
  ok: boolean;
  status: number;
  body: T;
  /** The management API's error message (its `message`), when it refused. */
  error: string | null;
}

/**
 * The console's only way to read or change anything (issue 30, ARCHITECTURE §9): a `/api/v2` request with
 * the operator's own token, dispatched in-process through the service's route table, so scopes, audit,
 * validation and error bodies are exactly the API's. The target tenant travels in the `tenant-id` header.
 */
/** How the client reaches the service: its issuer, the in-process dispatch, the browser's IP and user agent. */
export interface ApiTransport {
  issuer: string;
  send(request: Request): Promise<Response>;
  /** Headers passed on so the audit records the operator's browser (cf-connecting-ip, user-agent). */
  forwarded: Record<string, string>;
}

export class ApiClient {
  readonly calls: ApiCall[] = [];
  private granted: ReadonlySet<string> | undefined;

  constructor(
    private readonly transport: ApiTransport,
    private readonly token: string,
  ) {}

  /**
   * The management scopes the operator's token carries (its `scope` claim: the permissions the operator held
   * at login). Pages use it only to hide controls the API would refuse; the API checks every call itself.
   */
  get scopes(): ReadonlySet<string> {
    if (!this.granted) {
      let scope = "";
      try {
        const claims = decodeJwt(this.token);
        scope = typeof claims.scope === "string" ? claims.scope : "";
      } catch {
        scope = "";
      }
      this.granted = new Set(scope.split(" ").filter(Boolean));
    }
    return this.granted;
  }

  get<T = unknown>(tenant: string | null, path: string, query: Record<string, string | number | boolean | undefined> = {}): Promise<ApiResult<T>> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(key, String(value));
    const search = params.size ? `?${params}` : "";
    return this.send<T>("GET", tenant, `${path}${search}`);
  }

  post<T = unknown>(tenant: string | null, path: string, body: unknown = {}): Promise<ApiResult<T>> {
    return this.send<T>("POST", tenant, path, body);
  }

  /**
   * A multipart/form-data POST (POST /jobs/users-imports, as the reference platform takes it): the same
   * dispatch, error handling and call record as the JSON calls; the runtime writes the boundary.
   */
  postForm<T = unknown>(tenant: string | null, path: string, form: FormData): Promise<ApiResult<T>> {
    const parts: FormPart[] = [];
    for (const [name, value] of form.entries()) parts.push(typeof value === "string" ? { name, value } : { name, file: "file.json" });
    return this.send<T>("POST", tenant, path, form, parts);
  }

  patch<T = unknown>(tenant: string | null, path: string, body: unknown): Promise<ApiResult<T>> {
    return this.send<T>("PATCH", tenant, path, body);
  }

  put<T = unknown>(tenant: string | null, path: string, body?: unknown): Promise<ApiResult<T>> {
    return this.send<T>("PUT", tenant, path, body);
  }

  delete<T = unknown>(tenant: string | null, path: string, body?: unknown): Promise<ApiResult<T>> {
    return this.send<T>("DELETE", tenant, path, body);
  }

  /**
   * Revokes the operator's token at /oauth/revoke (RFC 7009), so it dies with the session at logout:
   * management auth refuses a revoked token's jti.
   */
  async revokeToken(clientId: string, clientSecret: string): Promise<void> {
    const request = new Request(`${this.transport.issuer.replace(/\/+$/, "")}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: this.token, client_id: clientId, client_secret: clientSecret }),
    });
    await this.transport.send(request);
  }

  private async send<T>(method: string, tenant: string | null, path: string, body?: unknown, parts?: FormPart[]): Promise<ApiResult<T>> {
    const url = `${this.transport.issuer.replace(/\/+$/, "")}/api/v2${path}`;
    const headers = new Headers({ authorization: `Bearer ${this.token}`, accept: "application/json" });
    if (tenant) headers.set("tenant-id", tenant);
    const multipart = body instanceof FormData;
    if (body !== undefined && !multipart) headers.set("content-type", "application/json");
    for (const [name, value] of Object.entries(this.transport.forwarded)) headers.set(name, value);
    const payload = multipart ? body : body !== undefined ? JSON.stringify(body) : undefined;
    const request = new Request(url, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
    const response = await this.transport.send(request);
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    this.calls.push({ method, url, tenant, ...(parts ? { form: parts } : body !== undefined ? { body } : {}), status: response.status });
    const ok = response.ok;
    const message = !ok && parsed && typeof parsed === "object" && "message" in parsed ? String((parsed as { message: unknown }).message) : null;
    return { ok, status: response.status, body: parsed as T, error: ok ? null : (message ?? `The API answered ${response.status}`) };
  }
}

/** Body fields never printed back on a page (issue 30: no secret reaches a page but a new client secret; issue 32: a custom database's configuration). */
const SECRET_FIELDS = new Set(["password", "client_secret", "secrets", "signing_secret", "api_key", "auth_token", "configuration", "httpAuthorization", "httpCustomHeaders"]);

function redacted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redacted);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELDS.has(k) ? "REDACTED" : redacted(v)]));
  }
  return value;
}

/** A POSIX shell single-quoted word: a `'` in the value (a user id may hold one; encodeURIComponent keeps it) cannot end the quoting. */
const shellQuoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

/** The curl command that repeats a call, the token and any secret in the body redacted (issue 30 "Show the API call"). */
export function curlOf(call: ApiCall): string {
  const parts = [
    `curl -X ${call.method} ${shellQuoted(call.url)}`,
    // Double quotes: the shell expands $TOKEN, as the docs' curl examples do.
    `-H "authorization: Bearer $TOKEN"`,
  ];
  if (call.tenant) parts.push(`-H ${shellQuoted(`tenant-id: ${call.tenant}`)}`);
  if (call.body !== undefined) parts.push(`-H 'content-type: application/json'`, `-d ${shellQuoted(JSON.stringify(redacted(call.body)))}`);
  for (const part of call.form ?? []) {
    // curl -F sends multipart/form-data; a value starting with @ or < would name a file, so it goes as --form-string.
    if ("file" in part) {
      // A plain word (the form's field and the console's fixed file name) reads as the docs write it; anything else quoted.
      const word = `${part.name}=@${part.file}`;
      parts.push(`-F ${/^[A-Za-z0-9_.=@-]+$/.test(word) ? word : shellQuoted(word)}`);
      continue;
    }
    const value = SECRET_FIELDS.has(part.name) ? "REDACTED" : part.value;
    parts.push(`${/^[@<]/.test(value) ? "--form-string" : "-F"} ${shellQuoted(`${part.name}=${value}`)}`);
  }
  return parts.join(" \\\n  ");
}

