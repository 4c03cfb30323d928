import { env, runDurableObjectAlarm, SELF } from "cloudflare:test";
import { BASE, call, controlPlaneToken } from "./api";
import { api, DB } from "./users";

/** The tenant's database connection id. */
export async function dbConnectionId(tenant: string): Promise<string> {
  const list = (await (await api(tenant, "GET", "/connections")).json()) as Array<{ id: string; name: string }>;
  return (list.find((c) => c.name === DB) as { id: string }).id;
}

/** POST /jobs/users-imports as the auth0 SDK sends it (multipart, the file as a Blob part). */
export async function postImport(tenant: string, fields: Record<string, string>, file?: unknown, token?: string): Promise<Response> {
  const form = new FormData();
  if (file !== undefined) form.append("users", new Blob([typeof file === "string" ? file : JSON.stringify(file)], { type: "application/json" }), "users.json");
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  return SELF.fetch(`${BASE}/api/v2/jobs/users-imports`, {
    method: "POST",
    headers: { authorization: `Bearer ${token ?? (await controlPlaneToken())}`, "tenant-id": tenant },
    body: form,
  });
}

/** Runs the tenant object's alarm until the job is no longer active (or `max` runs). */
export async function drain(tenant: string, jobId: string, max = 50): Promise<Record<string, unknown>> {
  for (let i = 0; i < max; i++) {
    const job = (await (await api(tenant, "GET", `/jobs/${jobId}`)).json()) as Record<string, unknown>;
    if (job.status === "completed" || job.status === "failed") return job;
    await runDurableObjectAlarm(env.TENANT.getByName(tenant));
  }
  throw new Error(`job ${jobId} still active after ${max} alarms`);
}

/** Runs the tenant's alarm `n` times (the relay delivers what the last commits queued). */
export async function runAlarm(tenant: string, n = 1): Promise<void> {
  for (let i = 0; i < n; i++) await runDurableObjectAlarm(env.TENANT.getByName(tenant));
}

export interface SinkMessage {
  id: string;
  channel: "sms" | "email";
  to: string;
  from?: string;
  subject: string | null;
  text: string;
  html?: string;
}

/** The tenant's development sink (GET /__dev/messages on its loopback host), to one address. */
export async function sinkTo(tenant: string, to: string): Promise<SinkMessage[]> {
  const res = await call(`/__dev/messages?to=${encodeURIComponent(to)}`, { host: `${tenant}.localhost:8787` });
  if (res.status !== 200) throw new Error(`/__dev/messages answered ${res.status}`);
  return ((await res.json()) as { messages: SinkMessage[] }).messages;
}
