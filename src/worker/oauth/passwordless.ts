import { now } from "../../shared/clock";
import { toBase64Url } from "../../shared/crypto/encoding";
import { sha256 } from "../../shared/crypto/compare";
import { randomId } from "../../shared/crypto/random";
import { isEmailAddress } from "../../shared/email-address";
import { OAuthError } from "../../shared/errors";
import { phoneNumber } from "../../shared/schemas/authentication-methods";
import { PASSWORDLESS_OTP_GRANT, passwordlessStartBody } from "../../shared/schemas/passwordless";
import { normalizeEmail } from "../../shared/schemas/users";
import type { Json, TenantConfig } from "../../shared/types";
import type { ClientRecord } from "../../shared/schemas/clients";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { AppContext } from "../context";
import { auditContext, clientIp } from "../http/audit";
import { describeIssue, readBodyText } from "../http/body";
import { configOf } from "../login/connection";
import { assertClientOrigin } from "../login/cors";
import { CODE_TTL_MS, codeHash, newNumericCode } from "../login/mfa/one-time-codes";
import { DeliveryError } from "../messaging/providers";
import { builtInEmail } from "../../shared/i18n/email-texts";
import { emailLanguage } from "../../shared/i18n/negotiate";
import { emailSender, smsSender } from "../messaging/senders";
import { tenantObject } from "../tenant/stubs";
import { assertGrantAllowed, authenticateClient, findClient, presentedClient } from "./client-auth";

/** Codes sent to one email or phone number per window before /passwordless/start says 429. @default 5 per 15 minutes */
export const MAX_CODES_PER_IDENTIFIER = 5;
const IDENTIFIER_WINDOW_MS = 15 * 60 * 1000;

/**
 * A passwordless connection (strategy and name `email` or `sms`) the client may use: it must exist and, when
 * the client lists its connections, be on the list. Null otherwise.
 */
export function passwordlessConnection(config: TenantConfig, name: string, client: ClientRecord): ConnectionRecord | null {
  const connection = config.connections.find((c) => c.name === name && c.strategy === name);
  if (!connection) return null;
  const enabled = client.extra.enabled_connections;
  if (Array.isArray(enabled) && !enabled.map(String).includes(connection.id)) return null;
  return connection;
}

/** The identifier a code is for, normalized (emails trimmed and lowercased; phone numbers E.164), or null. */
export function passwordlessIdentifier(connection: "email" | "sms", raw: string): string | null {
  if (connection === "email") {
    const email = normalizeEmail(raw);
    return isEmailAddress(email) ? email : null;
  }
  const parsed = phoneNumber.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** The deterministic id of an SMS user (the phone number is the identity of the sms connection). */
export const smsUserId = async (tenantId: string, phone: string) => `sms|${toBase64Url(await sha256(`sms-user:${tenantId}:${phone}`)).slice(0, 24)}`;

/** The code store's subject: one live series of codes per connection and identifier. */
export const passwordlessSubject = (connection: string, identifier: string) => `${connection}:${identifier}`;

/** Reads a JSON or form body (the reference SDKs send JSON; auth0.js may send a form). */
async function readStartBody(c: AppContext): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  const text = await readBodyText(c.req.raw, () => new OAuthError("invalid_request", "Request body is too large", 413));
  if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
    const form: Record<string, unknown> = {};
    const authParams: Record<string, string> = {};
    for (const [key, value] of new URLSearchParams(text)) {
      const nested = /^authParams\[([^\]]+)\]$/.exec(key);
      if (nested) authParams[nested[1] as string] = value;
      else form[key] = value;
    }
    return Object.keys(authParams).length ? { ...form, authParams } : form;
  }
  if (!/^application\/(.+\+)?json\b/i.test(type)) throw new OAuthError("invalid_request", "Content-Type must be application/json or application/x-www-form-urlencoded");
  try {
    return JSON.parse(text);
  } catch {
    throw new OAuthError("invalid_request", "Request body is not valid JSON");
  }
}

/** Suspicious volume from one address: the PASSWORDLESS_IP_LIMITER binding, keyed `{tenant}:{ip}`. */
async function overIpLimit(c: AppContext): Promise<boolean> {
  const ip = clientIp(c) ?? "unknown";
  try {
    const { success } = await c.env.PASSWORDLESS_IP_LIMITER.limit({ key: `${c.var.tenant.id}:${ip}` });
    return !success;
  } catch (error) {
    console.warn("passwordless limiter failed; the request proceeds", error);
    return false;
  }
}

/** Why a code was not sent, and the Authentication API's answer for each. */
export type PasswordlessRefusal = "ip_limit" | "identifier_limit" | "no_provider" | "delivery_failed";
export function passwordlessRefusal(reason: PasswordlessRefusal, connection: "email" | "sms"): OAuthError {
  if (reason === "ip_limit") return new OAuthError("too_many_requests", "Too many requests from this address; try again later", 429);
  if (reason === "identifier_limit") return new OAuthError("too_many_requests", "Too many codes were sent to this address; try again later", 429);
  if (reason === "no_provider") return new OAuthError("temporarily_unavailable", `No ${connection} provider is configured`, 503);
  return new OAuthError("temporarily_unavailable", "The code could not be sent; try again later", 503);
}

/**
 * Sends a passwordless code (shared by /passwordless/start and the login page, issue 29 point 0): the IP
 * and per-identifier throttles, the code stored (its hash, 5 minutes, with `data`) with its `cs` event, then
 * the message through the tenant's provider (the development sink locally).
 */
export async function sendPasswordlessCode(
  c: AppContext,
  config: TenantConfig,
  client: ClientRecord,
  connection: "email" | "sms",
  identifier: string,
  data: Record<string, Json>,
  /** The message's language (issue 29 point 2): the login page's; else `ui_locales` in authParams or the tenant's default. */
  language?: string,
): Promise<{ ok: true; id: string } | { ok: false; reason: PasswordlessRefusal }> {
  if (await overIpLimit(c)) return { ok: false, reason: "ip_limit" };
  const stub = tenantObject(c.env, c.var.tenant.id);
  const subject = passwordlessSubject(connection, identifier);
  const sender = connection === "email" ? await emailSender(c) : await smsSender(c, config);
  if (!sender) return { ok: false, reason: "no_provider" };
  const code = newNumericCode();
  const id = randomId("pwl_");
  const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: client.client_id } });
  // The per-identifier limit is counted in the start's own commit: a code over it is not stored.
  const started = await stub.startPasswordless(
    { id, purpose: "passwordless", subject, client_id: client.client_id, secret_hash: await codeHash(subject, code), data, expires_at: now() + CODE_TTL_MS },
    identifier,
    { max: MAX_CODES_PER_IDENTIFIER, since: now() - IDENTIFIER_WINDOW_MS },
    audit,
  );
  if (!started) return { ok: false, reason: "identifier_limit" };
  try {
    const authParams = data.auth_params as Record<string, Json> | undefined;
    const uiLocales = typeof authParams?.ui_locales === "string" ? authParams.ui_locales : null;
    const lang = language ?? emailLanguage({ login: uiLocales ? { uiLocales } : null, enabledLocales: config.settings.enabled_locales });
    const message = builtInEmail(lang, "passwordless_code", { code, appName: client.name });
    await sender.send({ to: identifier, subject: message.subject, body: message.text });
  } catch (error) {
    console.warn("passwordless delivery failed:", error instanceof DeliveryError ? error.message : error);
    return { ok: false, reason: "delivery_failed" };
  }
  return { ok: true, id };
}

/**
 * POST /passwordless/start (issue 12 point 6): sends a 6-digit code by email or SMS through the configured
 * provider (the development sink locally). The code (its hash), its client and the request's authParams are
 * kept for 5 minutes; rate-limited per IP and per identifier. The reference platform's answer:
 * `{_id, email, email_verified}` or `{_id, phone_number, phone_verified}`.
 */
export async function passwordlessStartEndpoint(c: AppContext): Promise<Response> {
  const parsed = passwordlessStartBody.safeParse(await readStartBody(c));
  if (!parsed.success) throw new OAuthError("invalid_request", describeIssue(parsed.error).replace("Payload validation error: ", ""));
  const body = parsed.data;
  if (body.send === "link") throw new OAuthError("invalid_request", "send=link is not supported: use send=code");
  const config = await configOf(c);
  const client = findClient(config, body.client_id);
  assertClientOrigin(c, client);
  assertGrantAllowed(client, PASSWORDLESS_OTP_GRANT);
  if (client.token_endpoint_auth_method !== "none") {
    const params = Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"));
    await authenticateClient(c, client, presentedClient(c.req.raw, params));
  }
  const connection = passwordlessConnection(config, body.connection, client);
  if (!connection) throw new OAuthError("invalid_request", `Connection ${body.connection} is not enabled for this client`);
  const identifier = passwordlessIdentifier(body.connection, (body.connection === "email" ? body.email : body.phone_number) ?? "");
  if (!identifier) throw new OAuthError("invalid_request", body.connection === "email" ? "email is not a valid email address" : "phone_number must be in E.164 format, e.g. +14155550100");
  const authParams = (body.authParams ?? {}) as Record<string, Json>;
  const sent = await sendPasswordlessCode(c, config, client, body.connection, identifier, { auth_params: authParams });
  if (!sent.ok) throw passwordlessRefusal(sent.reason, body.connection);
  const id = sent.id;
  c.header("Cache-Control", "no-store");
  return c.json(body.connection === "email" ? { _id: id, email: identifier, email_verified: false } : { _id: id, phone_number: identifier, phone_verified: false, request_language: null });
}
