import { metadataChanges } from "../../shared/actions/dispatch";
import type { Json } from "../../shared/types";
import type { ActionEffects } from "../../shared/schemas/actions";
import type { AppContext } from "../context";
import { clientIp } from "../http/audit";
import { tenantConfig } from "../tenant/config-cache";
import { tenantObject } from "../tenant/stubs";
import { boundTo, dispatch, recordAfterResponse } from "./runtime";

export type PreRegistrationVerdict =
  | { ok: true; effects: ActionEffects | null }
  | { ok: false; message: string };

/**
 * Runs the pre-user-registration actions in the prepare phase (SPEC §6.1), before anything is written: a
 * deny or a failure stops the sign-up (the page shows the action's user message, or its reason), and no user
 * row exists afterwards; only the execution is recorded. Metadata the actions set is applied with the user.
 */
export async function runPreRegistration(
  c: AppContext,
  input: { user: Record<string, Json>; connection: string; client_id: string | null },
): Promise<PreRegistrationVerdict> {
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  if (!boundTo(config, "pre-user-registration").length) return { ok: true, effects: null };
  const client = input.client_id ? config.clients.find((x) => x.client_id === input.client_id) : undefined;
  const connection = config.connections.find((x) => x.name === input.connection);
  const url = new URL(c.req.url);
  const outcome = await dispatch(c, config, "pre-user-registration", {
    user: { app_metadata: {}, user_metadata: {}, ...input.user },
    connection: { id: connection?.id ?? null, name: input.connection, strategy: connection?.strategy ?? "auth0", metadata: {} },
    client: client ? { client_id: client.client_id, name: client.name, metadata: client.client_metadata } : null,
    request: { ip: clientIp(c), hostname: url.hostname, user_agent: c.req.header("user-agent") ?? null, language: c.req.header("accept-language")?.split(",")[0] ?? null, geoip: {} },
    tenant: { id: c.var.tenant.id },
    transaction: { protocol: "oidc-basic-profile" },
  });
  if (outcome.stop) {
    await recordAfterResponse(c, outcome, []);
    if (outcome.stop.kind !== "denied") return { ok: false, message: outcome.stop.kind === "failed" ? outcome.stop.message : "Sign-up is not allowed" };
    const { user_message, reason } = outcome.stop.command;
    return { ok: false, message: user_message ?? reason ?? "Sign-up is not allowed" };
  }
  return { ok: true, effects: { execution: outcome.execution, warnings: [], ...metadataChanges(outcome.commands) } };
}
