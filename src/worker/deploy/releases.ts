import type { ReleaseManifest } from "./namespace";

/**
 * The release store as the control plane reads it (issue 16 point 1): `npm run release` writes
 * `<store>/<configuration>/<version>/{manifest.json, dist/*}` and `<store>/<configuration>/current.json`;
 * RELEASE_STORE_URL serves that tree over HTTP (locally the namespace supervisor serves `.releases/` at
 * `/releases`; in production any static origin or bucket).
 */
export class ReleaseStore {
  private readonly manifests = new Map<string, ReleaseManifest>();

  constructor(
    private readonly baseUrl: string,
    private readonly fetcher: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  private url(...parts: string[]): string {
    return `${this.baseUrl.replace(/\/$/, "")}/${parts.map(encodeURIComponent).join("/")}`;
  }

  /** The release's manifest; null when the store has no such release. */
  async find(configuration: string, version: string): Promise<ReleaseManifest | null> {
    const key = `${configuration}/${version}`;
    const cached = this.manifests.get(key);
    if (cached) return cached;
    const res = await this.fetcher(this.url(configuration, version, "manifest.json"));
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`release store: ${res.status} for ${key}`);
    const manifest = (await res.json()) as ReleaseManifest;
    this.manifests.set(key, manifest);
    return manifest;
  }

  async manifest(configuration: string, version: string): Promise<ReleaseManifest> {
    const found = await this.find(configuration, version);
    if (!found) throw new Error(`release ${configuration}/${version} is not in the release store`);
    return found;
  }

  /** The configuration's current release (null when none was built). */
  async current(configuration: string): Promise<string | null> {
    const res = await this.fetcher(this.url(configuration, "current.json"));
    if (res.status === 404) return null;
    if (!res.ok) throw new Error(`release store: ${res.status} for ${configuration}/current.json`);
    return ((await res.json()) as { worker_version?: string }).worker_version ?? null;
  }

  async files(release: ReleaseManifest): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    for (const file of release.files) {
      const res = await this.fetcher(this.url(release.bundle_configuration, release.worker_version, "dist", file));
      if (!res.ok) throw new Error(`release store: ${res.status} for ${release.worker_version}/dist/${file}`);
      out.set(file, new Uint8Array(await res.arrayBuffer()));
    }
    return out;
  }
}

let override: ReleaseStore | null = null;

/** Test seam: the integration suite serves releases from memory. */
export function setReleaseStoreForTests(store: ReleaseStore | null): void {
  override = store;
}

/** The store configured for this deployment (RELEASE_STORE_URL, else `{NAMESPACE_API_URL}/releases`). */
export function releaseStoreFrom(env: Env, fetcher?: typeof fetch): ReleaseStore | null {
  if (override) return override;
  const e = env as unknown as Record<string, string | undefined>;
  const base = e.RELEASE_STORE_URL || (e.NAMESPACE_API_URL ? `${e.NAMESPACE_API_URL.replace(/\/$/, "")}/releases` : undefined);
  return base ? new ReleaseStore(base, fetcher) : null;
}
