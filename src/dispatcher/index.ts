import { CloudflareNamespace, namespaceFrom } from "../worker/deploy/namespace";
import { CachedHostDirectory, RegistryHostDirectory, type RegistryReader } from "./host-directory";
import { dispatch } from "./dispatcher";
import { ResponseCache } from "./handlers";

/**
 * The dispatcher worker (wrangler.dispatcher.toml; `npm start -- --dispatcher`). Stateless: it owns no
 * storage; it reads the registry (tenants, custom domains, proxy routes) from the PlatformObject of the
 * control-plane worker (a Durable Object binding with `script_name`), caches it per isolate, and forwards.
 */
interface DispatcherEnv {
  PLATFORM: DurableObjectNamespace;
  CONTROL_PLANE?: Fetcher;
  DISPATCHER?: { get(name: string): { fetch(request: Request): Promise<Response> } };
  ISSUER?: string;
  SCRIPT_NAME_TEMPLATE?: string;
  HOST_CACHE_TTL_MS?: string;
  HOST_CACHE_NEGATIVE_TTL_MS?: string;
  NAMESPACE_API_URL?: string;
  [key: string]: unknown;
}

let directory: CachedHostDirectory | undefined;
const cache = new ResponseCache();

const int = (value: string | undefined, fallback: number) => {
  const n = Number(value);
  return value !== undefined && value !== "" && Number.isFinite(n) && n >= 0 ? n : fallback;
};

export default {
  async fetch(request, env) {
    const apexHost = new URL(env.ISSUER || "http://localhost:8787/").host.toLowerCase();
    if (!directory) {
      const platform = env.PLATFORM as unknown as { getByName(name: string): RegistryReader };
      directory = new CachedHostDirectory(
        new RegistryHostDirectory(() => platform.getByName("platform"), apexHost),
        int(env.HOST_CACHE_TTL_MS, 30_000),
        int(env.HOST_CACHE_NEGATIVE_TTL_MS, 5_000),
      );
    }
    // Production: the dispatch namespace binding (no API token needed to forward); locally the supervisor.
    const namespace = env.DISPATCHER
      ? new CloudflareNamespace({ apiBase: "https://api.cloudflare.com/client/v4", accountId: "-", namespace: "-", apiToken: "-", dispatcher: env.DISPATCHER })
      : namespaceFrom(env as unknown as Env);
    return dispatch(request, {
      directory,
      apexHost,
      bindings: env as unknown as Record<string, unknown>,
      namespace,
      scriptNameTemplate: env.SCRIPT_NAME_TEMPLATE,
      cache,
    });
  },
} satisfies ExportedHandler<DispatcherEnv>;
