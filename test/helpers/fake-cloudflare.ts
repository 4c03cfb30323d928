import { CloudflareNamespace } from "../../src/worker/deploy/namespace";
import { ReleaseStore } from "../../src/worker/deploy/releases";

/**
 * An in-process fake of the Cloudflare API subset the provisioner calls (D1 databases, dispatch-namespace
 * scripts and their secrets) plus the scripts themselves (their deployment endpoints and discovery), used
 * as the `fetch` of the real CloudflareNamespace client: every request is recorded, so tests see exactly
 * which calls a step made. `failNext(pattern, n)` makes the next n matching calls answer 500.
 *
 * It also serves an in-memory release store: `release(version, schemaTenant)`.
 */
export interface RecordedCall {
  method: string;
  path: string;
  body: unknown;
}

interface Script {
  metadata: { tags: string[]; bindings: { type: string; name: string; text?: string }[]; main_module: string };
  modules: string[];
  secrets: Map<string, string>;
  migratedTo: string | null;
  seeded: number;
  /** The custom domains the control plane mirrored into the copy (`domain:status`). */
  domains?: string[];
}

export class FakeCloudflare {
  readonly calls: RecordedCall[] = [];
  readonly databases = new Map<string, { uuid: string; name: string }>();
  readonly scripts = new Map<string, Script>();
  /** Promoted live names -> the slot that holds their data (the supervisor's aliases). */
  readonly aliases = new Map<string, string>();
  /** Scripts whose deployment endpoints answer 503 (a verify that fails on purpose). */
  readonly unhealthy = new Set<string>();
  /** Tokens the copies issued to their control-plane client. */
  readonly tokensIssued: { script: string; audience: string }[] = [];
  /** Scripts whose health answers wait until released (a verify held on purpose); see `hold`. */
  private readonly held = new Map<string, { reached: () => void; gate: Promise<void> }>();

  /** Holds the next health checks of `script` until `release()`; `reached` resolves once one is waiting. */
  hold(script: string): { reached: Promise<void>; release: () => void } {
    let release = () => {};
    let reached = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const reachedP = new Promise<void>((r) => {
      reached = r;
    });
    this.held.set(script, { reached, gate });
    return {
      reached: reachedP,
      release: () => {
        this.held.delete(script);
        release();
      },
    };
  }
  readonly releases = new Map<string, { schema: string }>();
  private failures: { pattern: RegExp; remaining: number; status: number }[] = [];
  /** Versions whose copies fail verify (answer another version), to simulate a broken release. */
  readonly brokenVersions = new Set<string>();

  release(version: string, schemaTenant = "0012_mfa"): void {
    this.releases.set(version, { schema: schemaTenant });
  }

  failNext(pattern: RegExp, times = 1, status = 500): void {
    this.failures.push({ pattern, remaining: times, status });
  }

  callsMatching(pattern: RegExp): RecordedCall[] {
    return this.calls.filter((c) => pattern.test(`${c.method} ${c.path}`));
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const request = new Request(input as RequestInfo, init as RequestInit);
    const url = new URL(request.url);
    let body: unknown = null;
    const type = request.headers.get("content-type") ?? "";
    if (type.includes("multipart/form-data")) {
      const form = await request.formData();
      body = { metadata: JSON.parse(await (form.get("metadata") as unknown as Blob).text()), modules: [...form.keys()].filter((k) => k !== "metadata") };
    } else if (request.method !== "GET" && request.method !== "HEAD") {
      const text = await request.text();
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        body = text;
      }
    }
    this.calls.push({ method: request.method, path: url.pathname + url.search, body });
    const failure = this.failures.find((f) => f.remaining > 0 && f.pattern.test(`${request.method} ${url.pathname}`));
    if (failure) {
      failure.remaining -= 1;
      return Response.json({ success: false, errors: [{ code: 10013, message: "injected failure" }], result: null }, { status: failure.status });
    }
    return this.route(request, url, body);
  };

  private ok(result: unknown) {
    return Response.json({ success: true, errors: [], messages: [], result });
  }

  private route(request: Request, url: URL, body: unknown): Response | Promise<Response> {
    const p = url.pathname;
    if (url.hostname === "releases.test") return this.releaseFile(p);
    let m = /^\/client\/v4\/accounts\/[^/]+\/d1\/database$/.exec(p);
    if (m && request.method === "GET") return this.ok([...this.databases.values()].filter((d) => d.name === url.searchParams.get("name")));
    if (m && request.method === "POST") {
      const name = (body as { name: string }).name;
      const db = { uuid: crypto.randomUUID(), name };
      this.databases.set(name, db);
      return this.ok(db);
    }
    m = /^\/client\/v4\/accounts\/[^/]+\/workers\/dispatch\/namespaces\/[^/]+\/scripts\/([^/]+)(\/settings|\/secrets|\/promote)?$/.exec(p);
    if (m) {
      const name = decodeURIComponent(m[1] as string);
      const script = this.scripts.get(name);
      if (!m[2] && request.method === "PUT") {
        const upload = body as { metadata: Script["metadata"]; modules: string[] };
        // The supervisor's staged slot: a snapshot of the live script's storage (here: its schema and seed count).
        const from = url.searchParams.get("storage_from");
        const storage = from ? this.scripts.get(from) : script;
        this.aliases.delete(name);
        this.scripts.set(name, { metadata: upload.metadata, modules: upload.modules, secrets: script?.secrets ?? new Map(), migratedTo: storage?.migratedTo ?? null, seeded: storage?.seeded ?? 0, domains: storage?.domains ?? [] });
        return this.ok({ id: name, tags: upload.metadata.tags });
      }
      if (m[2] === "/promote" && request.method === "POST") {
        // The supervisor's switch: the live storage moves to the staged slot, the live name becomes an alias.
        const { replaces } = body as { replaces: string };
        if (this.aliases.get(replaces) === name) return this.ok({ id: name, replaces });
        const live = this.scripts.get(replaces);
        if (!script) return Response.json({ success: false, errors: [{ code: 10007, message: "not found" }] }, { status: 404 });
        if (live) {
          script.migratedTo = live.migratedTo;
          script.seeded = live.seeded;
          script.domains = live.domains ?? [];
        }
        this.scripts.delete(replaces);
        this.aliases.set(replaces, name);
        return this.ok({ id: name, replaces });
      }
      if (!script) return Response.json({ success: false, errors: [{ code: 10007, message: "not found" }] }, { status: 404 });
      if (m[2] === "/settings") return this.ok({ tags: script.metadata.tags, bindings: script.metadata.bindings });
      if (m[2] === "/secrets" && request.method === "GET") return this.ok([...script.secrets.keys()].map((n) => ({ name: n, type: "secret_text" })));
      if (m[2] === "/secrets" && request.method === "PUT") {
        const { name: key, text } = body as { name: string; text: string };
        script.secrets.set(key, text);
        return this.ok({ name: key });
      }
      if (!m[2] && request.method === "DELETE") {
        this.scripts.delete(name);
        return this.ok(null);
      }
    }
    m = /^(?:\/client\/v4)?\/__scripts\/([^/]+)(\/.*)$/.exec(p);
    if (m) {
      const hold = this.held.get(decodeURIComponent(m[1] as string));
      if (hold && m[2] === "/__gatehouse/deploy/health") {
        hold.reached();
        return hold.gate.then(() => this.copy(decodeURIComponent(m?.[1] as string), "/__gatehouse/deploy/health", request, body));
      }
      return this.copy(decodeURIComponent(m[1] as string), m[2] as string, request, body);
    }
    return Response.json({ success: false, errors: [{ message: `no route ${request.method} ${p}` }] }, { status: 404 });
  }

  /** A tenant copy as the deployment endpoints see it: its vars and secrets come from the upload. */
  private copy(requested: string, path: string, request: Request, body: unknown = null): Response | Promise<Response> {
    const name = this.scripts.has(requested) ? requested : (this.aliases.get(requested) ?? requested);
    const script = this.scripts.get(name);
    if (!script) return Response.json({ error: "script_not_found" }, { status: 404, headers: { "x-namespace-missing-script": "1" } });
    const vars = Object.fromEntries(script.metadata.bindings.filter((b) => b.type === "plain_text").map((b) => [b.name, b.text]));
    const version = vars.WORKER_VERSION as string;
    if (path.startsWith("/__gatehouse/deploy/")) {
      if (request.headers.get("authorization") !== `Bearer ${script.secrets.get("DEPLOY_TOKEN")}`) return Response.json({ error: "invalid_token" }, { status: 401 });
      if (!script.secrets.has("ENCRYPTION_KEY")) return Response.json({ error: "no key" }, { status: 500 });
      if (this.unhealthy.has(name) && path === "/__gatehouse/deploy/health") return Response.json({ error: "unhealthy" }, { status: 503 });
      const schema = this.releases.get(version)?.schema ?? null;
      if (path === "/__gatehouse/deploy/migrate") script.migratedTo = schema;
      if (path === "/__gatehouse/deploy/seed") script.seeded += 1;
      if (path === "/__gatehouse/deploy/custom-domains") {
        script.domains = ((body as { domains: { domain: string; status: string }[] }).domains ?? []).map((d) => `${d.domain}:${d.status}`);
        return Response.json({ domains: script.domains });
      }
      const answered = this.brokenVersions.has(version) ? "broken" : version;
      return Response.json({ tenant_id: vars.CONTROL_PLANE_TENANT_ID, worker_version: answered, seeded: true, signing_keys: 1, schema: { tenant: script.migratedTo, platform: "0004_deployments" } });
    }
    if (path === "/.well-known/openid-configuration") return Response.json({ issuer: vars.ISSUER });
    if (path === "/oauth/token" && request.method === "POST") {
      // The copy's control-plane client: client_credentials with the secret upload-secrets gave it.
      {
        const { client_id, client_secret, audience } = (body ?? {}) as Record<string, string>;
        if (client_id !== vars.CONTROL_PLANE_CLIENT_ID || client_secret !== script.secrets.get("CONTROL_PLANE_CLIENT_SECRET")) {
          return Response.json({ error: "access_denied", error_description: "Unauthorized" }, { status: 401 });
        }
        this.tokensIssued.push({ script: name, audience: audience ?? "" });
        return Response.json({ access_token: `copy-token-of-${name}`, token_type: "Bearer", expires_in: 86400, scope: "read:users create:users" });
      }
    }
    return new Response(`copy ${name} at ${version}: ${path}`, { headers: { "x-gatehouse-release": `default/${version}` } });
  }

  private releaseFile(p: string): Response {
    const m = /^\/([^/]+)\/([^/]+)\/(manifest\.json|dist\/(.+))$/.exec(p);
    if (/^\/[^/]+\/current\.json$/.test(p)) {
      const last = [...this.releases.keys()].at(-1);
      return last ? Response.json({ worker_version: last }) : new Response("not found", { status: 404 });
    }
    if (!m) return new Response("not found", { status: 404 });
    const [, configuration, version, file] = m as unknown as [string, string, string, string];
    const release = this.releases.get(version);
    if (!release) return new Response("not found", { status: 404 });
    if (file === "manifest.json") {
      return Response.json({
        worker_version: version,
        bundle_configuration: configuration,
        schema: { tenant: release.schema, user: "0004_mfa", platform: "0004_deployments" },
        main_module: "index.js",
        files: ["index.js", "0001_core.sql"],
        sha256: `sha-${version}`,
      });
    }
    return new Response(`// ${version} ${file}`);
  }

  /** The client as configured locally (`supervisor`: staged snapshots and promotion) or for Cloudflare. */
  namespace(options: { supervisor?: boolean } = {}): CloudflareNamespace {
    return new CloudflareNamespace({ apiBase: "https://api.test/client/v4", accountId: "acct", namespace: "tenants", apiToken: "tok", fetch: this.fetch, supervisor: options.supervisor ?? true });
  }

  /** Scripts are reached through `/__scripts/{name}` of the API host (the local-supervisor shape). */
  store(): ReleaseStore {
    return new ReleaseStore("https://releases.test", this.fetch);
  }
}
