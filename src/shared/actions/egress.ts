import { timingSafeEqualText } from "../crypto/compare";
import { type EgressPolicy, egressRefusal } from "../egress-policy";

/**
 * Tenant code's only way out (issue 32 point 1, ARCHITECTURE.md §9): the sandbox isolate's `globalOutbound` is
 * the {@link gatewayFetch} entrypoint, so every `fetch` of an action or a database script arrives here with
 * the isolate's props. The gateway refuses what the egress policy refuses (private, loopback unless
 * ALLOW_LOOPBACK_EGRESS, link-local, metadata, this service's own hosts), hosts outside the tenant's
 * allowlist when one is set, and requests that did not come through the sandbox's own `fetch` (a raw socket
 * or WebSocket); it follows redirects itself (each hop checked again), bounds the request by a timeout and
 * the response by a size cap, and reports the call's status, duration and size back to the isolate's `fetch`,
 * which records it in the execution and counts the run's requests. Nothing of the host's env or bindings is
 * reachable: the gateway only ever calls the global `fetch` with the tenant's own request.
 */

/** The headers the sandbox's `fetch` and the gateway speak (never seen by tenant code nor sent on). */
export const EGRESS_HEADERS = {
  mark: "x-gatehouse-egress-mark",
  refused: "x-gatehouse-egress-refused",
  bytes: "x-gatehouse-egress-bytes",
  duration: "x-gatehouse-egress-ms",
} as const;

export interface EgressLimits {
  /** Wall-clock bound of one outbound request, headers and body. @default 3000 */
  timeoutMs: number;
  /** Largest response body tenant code may receive, in bytes. @default 1048576 */
  maxResponseBytes: number;
  /** Largest request body tenant code may send, in bytes. @default 1048576 */
  maxRequestBytes: number;
  /** Outbound requests one run (one action, one script call) may make. @default 20 */
  maxRequests: number;
  /** Redirects followed per request, each hop checked against the policy. @default 3 */
  maxRedirects: number;
}

export const DEFAULT_EGRESS_LIMITS: EgressLimits = { timeoutMs: 3000, maxResponseBytes: 1_048_576, maxRequestBytes: 1_048_576, maxRequests: 20, maxRedirects: 3 };

/** Reads ACTIONS_EGRESS_TIMEOUT_MS, ACTIONS_EGRESS_MAX_BYTES and ACTIONS_EGRESS_MAX_REQUESTS (docs/actions.md). */
export function egressLimitsFrom(vars: Record<string, unknown>): EgressLimits {
  const read = (name: string, fallback: number) => {
    const value = Number(vars[name]);
    return vars[name] !== undefined && vars[name] !== "" && Number.isInteger(value) && value > 0 ? value : fallback;
  };
  // A request never outlasts the run that made it (ACTIONS_TIMEOUT_MS, less a margin to record the cut).
  const runMs = read("ACTIONS_TIMEOUT_MS", 5000);
  return {
    ...DEFAULT_EGRESS_LIMITS,
    timeoutMs: Math.min(read("ACTIONS_EGRESS_TIMEOUT_MS", DEFAULT_EGRESS_LIMITS.timeoutMs), Math.max(100, runMs - 250)),
    maxResponseBytes: read("ACTIONS_EGRESS_MAX_BYTES", DEFAULT_EGRESS_LIMITS.maxResponseBytes),
    maxRequests: read("ACTIONS_EGRESS_MAX_REQUESTS", DEFAULT_EGRESS_LIMITS.maxRequests),
  };
}

/** What the host gives the gateway when it creates an isolate (`ctx.props`). */
export interface EgressProps {
  tenantId: string;
  /** The per-isolate secret the sandbox's `fetch` stamps on each request (tenant code never sees it). */
  mark: string;
  /** Host patterns (`api.example.com`, `*.example.com`); null: any host the policy allows. */
  allowlist: string[] | null;
}

/** One outbound call as the execution records it. */
export interface EgressCall {
  method: string;
  host: string;
  status: number | null;
  duration_ms: number;
  bytes: number;
  error?: string;
}

/** Whether a host name matches an allowlist entry (exact, or `*.` for any subdomain, not the apex). */
export function allowlisted(hostname: string, allowlist: readonly string[]): boolean {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  return allowlist.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith("*.") ? host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1 : host === pattern;
  });
}

const refuse = (reason: string, status = 403) =>
  new Response(reason, { status, headers: { [EGRESS_HEADERS.refused]: reason, "content-type": "text/plain" } });

/** Why a URL may not be reached by this tenant's code, or null. */
function refusalOf(url: string, policy: EgressPolicy, props: EgressProps): string | null {
  const reason = egressRefusal(url, policy);
  if (reason) return `Refused by the egress policy: ${reason}`;
  const { hostname } = new URL(url);
  if (props.allowlist && !allowlisted(hostname, props.allowlist)) return `Refused by the egress policy: ${hostname} is not in the tenant's allowlist`;
  return null;
}

/** Reads a body up to `cap` bytes; null once it is larger. */
async function readCapped(body: ReadableStream<Uint8Array> | null, cap: number): Promise<Uint8Array | null> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Request headers that would let tenant code speak for this service or reach past the gateway. */
const DROPPED_REQUEST_HEADERS = ["cf-connecting-ip", "cf-worker", "x-forwarded-for", "x-real-ip", "host"];

/**
 * Serves one outbound request of a sandbox isolate. Always answers: a refusal is a response carrying
 * {@link EGRESS_HEADERS.refused} (the sandbox's `fetch` turns it into a thrown TypeError and a log line).
 */
export async function gatewayFetch(request: Request, props: EgressProps, policy: EgressPolicy, limits: EgressLimits, clock: () => number = Date.now): Promise<Response> {
  const mark = request.headers.get(EGRESS_HEADERS.mark) ?? "";
  if (!props.mark || !(await timingSafeEqualText(mark, props.mark))) return refuse("Refused by the egress policy: outbound connections go through fetch only");
  const started = clock();
  const headers = new Headers(request.headers);
  for (const name of [...Object.values(EGRESS_HEADERS), ...DROPPED_REQUEST_HEADERS]) headers.delete(name);
  let method = request.method.toUpperCase();
  let body: Uint8Array | null = null;
  if (method !== "GET" && method !== "HEAD") {
    body = await readCapped(request.body, limits.maxRequestBytes);
    if (body === null) return refuse(`Refused by the egress policy: the request body is larger than ${limits.maxRequestBytes} bytes`, 413);
  }
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let url = request.url;
  try {
    for (let hop = 0; ; hop++) {
      const refusal = refusalOf(url, policy, props);
      if (refusal) return refuse(refusal);
      const response = await fetch(url, { method, headers, body, redirect: "manual", signal });
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location) {
        await response.body?.cancel().catch(() => undefined);
        if (hop >= limits.maxRedirects) return refuse(`Refused by the egress policy: more than ${limits.maxRedirects} redirects`);
        url = new URL(location, url).toString();
        // RFC 9110 15.4: 301, 302 and 303 turn a POST into a GET without a body; 307 and 308 keep both.
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
          method = "GET";
          body = null;
        }
        continue;
      }
      const bytes = await readCapped(response.body, limits.maxResponseBytes);
      if (bytes === null) return refuse(`Refused by the egress policy: the response is larger than ${limits.maxResponseBytes} bytes`, 502);
      const out = new Headers(response.headers);
      out.delete("set-cookie");
      out.set(EGRESS_HEADERS.bytes, String(bytes.byteLength));
      out.set(EGRESS_HEADERS.duration, String(Math.max(0, clock() - started)));
      const nullBody = response.status === 204 || response.status === 205 || response.status === 304 || method === "HEAD";
      return new Response(nullBody ? null : bytes, { status: response.status, statusText: response.statusText, headers: out });
    }
  } catch (error) {
    if (signal.aborted) return refuse(`Refused by the egress policy: no complete answer within ${limits.timeoutMs} ms`, 504);
    return refuse(`The request failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300), 502);
  }
}
