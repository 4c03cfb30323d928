/**
 * The dispatch namespace behind one small interface (issue 16 point 3, ARCHITECTURE.md §6).
 *
 * - Production: `CloudflareNamespace`, the Cloudflare API (D1 databases, Workers for Platforms scripts in a
 *   dispatch namespace, their secrets) over HTTP with an injected `fetch`, and the `dispatch_namespaces`
 *   binding to reach a script.
 * - Local: the same API client pointed at the namespace supervisor (scripts/namespace/supervisor.mjs), which
 *   implements that subset of the Cloudflare API on 127.0.0.1 and really runs each uploaded script as its own
 *   `workerd` process, with its own Durable Object storage and its own secrets; scripts are reached through
 *   the supervisor's `/__scripts/{name}/...` proxy because `dispatch_namespaces` cannot run offline
 *   (PLATFORM.md).
 *
 * Every call is idempotent, so a retried or resumed provisioning step may repeat it safely.
 */

/** A release as the store describes it (`.releases/<configuration>/<version>/manifest.json`). */
export interface ReleaseManifest {
  worker_version: string;
  bundle_configuration: string;
  schema: { tenant: string | null; user: string | null; platform: string | null };
  main_module: string;
  files: string[];
  sha256: string;
  compatibility_date?: string;
  compatibility_flags?: string[];
}

/** A script's bindings besides its secrets (plain text vars; Durable Objects come from the bundle). */
export interface ScriptUpload {
  scriptName: string;
  release: ReleaseManifest;
  /** The release's files, by name (read from the release store). */
  files: Map<string, Uint8Array>;
  vars: Record<string, string>;
  /** D1 database bound as AUTH_DB (storage_kind own_d1 / existing_d1). */
  databaseId?: string | null;
  compatibilityDate: string;
  compatibilityFlags: string[];
  durableObjectClasses: { binding: string; className: string }[];
  /**
   * A staged slot of an upgrade: start it on a snapshot of this (live) script's storage, so its migrations and
   * verification run on the tenant's data without touching it. The local supervisor copies the storage; on
   * Cloudflare a script's Durable Object storage cannot be copied, so the staged script starts empty there.
   */
  storageFrom?: string | null;
}

export interface ScriptInfo {
  name: string;
  /** `worker_version:<v>` and `bundle_configuration:<c>` tags of the upload. */
  tags: string[];
}

export interface TenantNamespace {
  /** The D1 database named `name`, created when absent; returns its id. */
  ensureDatabase(name: string): Promise<string>;
  /** Runs migration SQL on a D1 database (the database HTTP query endpoint). */
  queryDatabase(databaseId: string, sql: string): Promise<void>;
  getScript(scriptName: string): Promise<ScriptInfo | null>;
  uploadScript(upload: ScriptUpload): Promise<ScriptInfo>;
  /** Names of the script's secrets (values are never readable back). */
  listSecrets(scriptName: string): Promise<string[]>;
  putSecret(scriptName: string, name: string, value: string): Promise<void>;
  deleteScript(scriptName: string): Promise<void>;
  /**
   * Hands the live script's data to a verified staged script and returns the script name that serves it now
   * (what the tenant row records). Idempotent. The supervisor stops the live process, moves its storage to the
   * staged slot, restarts the staged one on it, and keeps the live name as an alias until it is uploaded again
   * (dispatchers that cached the old name for up to HOST_CACHE_TTL_MS still arrive). On Cloudflare a Durable
   * Object's storage belongs to its script: the staged release is uploaded under the live name (Cloudflare runs
   * one version of an object at a time, so the switch is atomic there) and the staged script is deleted.
   */
  promoteScript(stagedName: string, live: ScriptUpload): Promise<string>;
  /** A request to the script, as the dispatcher sends it (null when the script does not exist). */
  fetchScript(scriptName: string, request: Request): Promise<Response | null>;
}

export interface CloudflareNamespaceOptions {
  /** `https://api.cloudflare.com/client/v4`, or the local supervisor's base URL. */
  apiBase: string;
  accountId: string;
  namespace: string;
  apiToken: string;
  fetch?: typeof fetch;
  /**
   * The local namespace supervisor (scripts/namespace/supervisor.mjs) rather than Cloudflare: staged uploads
   * carry `storage_from` and promotion is the supervisor's `POST .../scripts/{staged}/promote`.
   */
  supervisor?: boolean;
  /** Production: the `dispatch_namespaces` binding. Absent: scripts are reached through `{apiBase}/__scripts/{name}`. */
  dispatcher?: { get(name: string): { fetch(request: Request): Promise<Response> } };
}

export class NamespaceApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "NamespaceApiError";
  }
}

type Envelope<T> = { success: boolean; result: T; errors?: { code?: number; message: string }[] };

export class CloudflareNamespace implements TenantNamespace {
  private readonly fetcher: typeof fetch;

  constructor(private readonly options: CloudflareNamespaceOptions) {
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  private url(path: string): string {
    return `${this.options.apiBase.replace(/\/$/, "")}/accounts/${encodeURIComponent(this.options.accountId)}${path}`;
  }

  private scriptPath(name: string, rest = ""): string {
    return `/workers/dispatch/namespaces/${encodeURIComponent(this.options.namespace)}/scripts/${encodeURIComponent(name)}${rest}`;
  }

  private async call<T>(method: string, path: string, body?: BodyInit, contentType?: string): Promise<{ status: number; result: T | null }> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiToken}` };
    if (contentType) headers["content-type"] = contentType;
    const res = await this.fetcher(this.url(path), { method, headers, body });
    if (res.status === 404) return { status: 404, result: null };
    const text = await res.text();
    let envelope: Envelope<T> | null = null;
    try {
      envelope = JSON.parse(text) as Envelope<T>;
    } catch {
      // fall through: not the API's envelope
    }
    if (!res.ok || !envelope?.success) {
      const detail = envelope?.errors?.map((e) => e.message).join("; ") || text.slice(0, 200);
      throw new NamespaceApiError(`${method} ${path}: ${res.status} ${detail}`, res.status);
    }
    return { status: res.status, result: envelope.result };
  }

  async ensureDatabase(name: string): Promise<string> {
    const found = await this.call<{ uuid: string; name: string }[]>("GET", `/d1/database?name=${encodeURIComponent(name)}`);
    const existing = found.result?.find((db) => db.name === name);
    if (existing) return existing.uuid;
    const created = await this.call<{ uuid: string }>("POST", "/d1/database", JSON.stringify({ name }), "application/json");
    if (!created.result) throw new NamespaceApiError(`POST /d1/database: no result`, created.status);
    return created.result.uuid;
  }

  async queryDatabase(databaseId: string, sql: string): Promise<void> {
    await this.call("POST", `/d1/database/${encodeURIComponent(databaseId)}/query`, JSON.stringify({ sql }), "application/json");
  }

  async getScript(scriptName: string): Promise<ScriptInfo | null> {
    const { result } = await this.call<{ id?: string; script?: { id: string; tags?: string[] }; tags?: string[] }>(
      "GET",
      this.scriptPath(scriptName, "/settings"),
    );
    if (!result) return null;
    return { name: scriptName, tags: result.tags ?? result.script?.tags ?? [] };
  }

  async uploadScript(upload: ScriptUpload): Promise<ScriptInfo> {
    const tags = [`worker_version:${upload.release.worker_version}`, `bundle_configuration:${upload.release.bundle_configuration}`];
    const bindings: Record<string, unknown>[] = [
      ...Object.entries(upload.vars).map(([name, text]) => ({ type: "plain_text", name, text })),
      ...upload.durableObjectClasses.map((d) => ({ type: "durable_object_namespace", name: d.binding, class_name: d.className })),
    ];
    if (upload.databaseId) bindings.push({ type: "d1", name: "AUTH_DB", id: upload.databaseId });
    const metadata = {
      main_module: upload.release.main_module,
      compatibility_date: upload.compatibilityDate,
      compatibility_flags: upload.compatibilityFlags,
      bindings,
      tags,
      // Secrets uploaded separately survive a re-upload of the code (the per-tenant ENCRYPTION_KEY must).
      keep_bindings: ["secret_text"],
      migrations: { new_sqlite_classes: [...new Set(upload.durableObjectClasses.map((d) => d.className))] },
    };
    const form = new FormData();
    form.append("metadata", new Blob([JSON.stringify(metadata)], { type: "application/json" }));
    for (const [name, bytes] of upload.files) {
      const type = name.endsWith(".js") ? "application/javascript+module" : "text/plain";
      form.append(name, new Blob([bytes], { type }), name);
    }
    const query = this.options.supervisor && upload.storageFrom ? `?storage_from=${encodeURIComponent(upload.storageFrom)}` : "";
    await this.call("PUT", this.scriptPath(upload.scriptName, query), form);
    return { name: upload.scriptName, tags };
  }

  async promoteScript(stagedName: string, live: ScriptUpload): Promise<string> {
    if (this.options.supervisor) {
      await this.call("POST", this.scriptPath(stagedName, "/promote"), JSON.stringify({ replaces: live.scriptName }), "application/json");
      return stagedName;
    }
    // Cloudflare: the object's storage stays with the live script; its code becomes the verified release.
    await this.uploadScript({ ...live, storageFrom: null });
    await this.deleteScript(stagedName);
    return live.scriptName;
  }

  async listSecrets(scriptName: string): Promise<string[]> {
    const { result } = await this.call<{ name: string }[]>("GET", this.scriptPath(scriptName, "/secrets"));
    return (result ?? []).map((s) => s.name);
  }

  async putSecret(scriptName: string, name: string, value: string): Promise<void> {
    await this.call("PUT", this.scriptPath(scriptName, "/secrets"), JSON.stringify({ name, text: value, type: "secret_text" }), "application/json");
  }

  async deleteScript(scriptName: string): Promise<void> {
    await this.call("DELETE", this.scriptPath(scriptName));
  }

  async fetchScript(scriptName: string, request: Request): Promise<Response | null> {
    if (this.options.dispatcher) {
      try {
        return await this.options.dispatcher.get(scriptName).fetch(request);
      } catch (error) {
        // The binding throws "Worker not found" for a script that is not in the namespace.
        if (error instanceof Error && /not found/i.test(error.message)) return null;
        throw error;
      }
    }
    const url = new URL(request.url);
    const target = `${this.options.apiBase.replace(/\/$/, "")}/__scripts/${encodeURIComponent(scriptName)}${url.pathname}${url.search}`;
    const headers = new Headers(request.headers);
    headers.set("x-forwarded-host", headers.get("x-forwarded-host") ?? url.host);
    headers.set("x-forwarded-proto", url.protocol.replace(":", ""));
    const res = await this.fetcher(target, {
      method: request.method,
      headers,
      body: request.method === "GET" || request.method === "HEAD" ? undefined : request.body,
      redirect: "manual",
      // @ts-expect-error duplex is required by fetch for a streamed body (workerd accepts it)
      duplex: "half",
    });
    if (res.status === 404 && res.headers.get("x-namespace-missing-script") === "1") return null;
    return res;
  }
}

let override: ((env: Env) => TenantNamespace | null) | null = null;

/** Test seam: the integration suite points the namespace at an in-process fake of the Cloudflare API. */
export function setNamespaceForTests(factory: ((env: Env) => TenantNamespace | null) | null): void {
  override = factory;
}

/** The namespace configured for this deployment, or null when per-tenant deployment is not set up. */
export function namespaceFrom(env: Env, fetcher?: typeof fetch): TenantNamespace | null {
  if (override) return override(env);
  const e = env as unknown as Record<string, unknown>;
  const apiBase = (e.NAMESPACE_API_URL as string | undefined) || (e.CLOUDFLARE_API_TOKEN ? "https://api.cloudflare.com/client/v4" : undefined);
  if (!apiBase) return null;
  return new CloudflareNamespace({
    apiBase,
    accountId: (e.CLOUDFLARE_ACCOUNT_ID as string | undefined) || "local",
    namespace: (e.DISPATCH_NAMESPACE as string | undefined) || "gatehouse-tenants",
    apiToken: (e.CLOUDFLARE_API_TOKEN as string | undefined) || "local",
    fetch: fetcher,
    dispatcher: e.DISPATCHER as CloudflareNamespaceOptions["dispatcher"],
    supervisor: Boolean(e.NAMESPACE_API_URL),
  });
}
