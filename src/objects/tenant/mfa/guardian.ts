import { DEFAULT_GUARDIAN } from "../../../shared/schemas/guardian";
import { fail, ok, type Result } from "../../../shared/errors";
import type { NewMfaTransaction, TicketFailure } from "../../../shared/types";
import type { GuardianFactor, GuardianSettings, SmsProviderName, TwilioSettings } from "../../../shared/schemas/guardian";
import { json, type Sql } from "../../sql";
import { getSetting, putSetting } from "../core/settings";
import { audited } from "../core/events";
import { insertMfaTransaction } from "./mfa";
import { TenantRpc } from "../core/rpc";

/**
 * Guardian settings (SPEC §4.2 "MFA (guardian) routes"): factors, policies and the SMS provider are
 * configuration (the login flow reads them from the snapshot); the Twilio credentials are not (only the
 * worker sending an SMS needs them). Enrollment tickets (SPEC §3.4) live here too.
 */

const KEY = "guardian";
const TWILIO_KEY = "guardian_sms_provider:twilio";

export function getGuardian(sql: Sql): GuardianSettings {
  const stored = getSetting<Partial<GuardianSettings>>(sql, KEY, {});
  return {
    factors: { ...DEFAULT_GUARDIAN.factors, ...stored.factors },
    policies: stored.policies ?? DEFAULT_GUARDIAN.policies,
    sms_provider: stored.sms_provider ?? DEFAULT_GUARDIAN.sms_provider,
  };
}

function putGuardian(sql: Sql, next: GuardianSettings): GuardianSettings {
  putSetting(sql, KEY, next);
  return next;
}

export function getTwilio(sql: Sql): TwilioSettings {
  return { sid: null, from: null, messaging_service_sid: null, auth_token_enc: null, ...getSetting<Partial<TwilioSettings>>(sql, TWILIO_KEY, {}) };
}

/** Enrollment tickets live 5 days (SPEC §3.4, §8). */
export const TICKET_TTL_MS = 5 * 24 * 3600 * 1000;

export function createTicket(sql: Sql, ticket: { ticket_hash: string; user_id: string; options: Record<string, unknown> }, now: number): Result<{ expires_at: number }> {
  if (!sql.first`SELECT 1 FROM users WHERE user_id = ${ticket.user_id}`) return fail("inexistent_user");
  const expiresAt = now + TICKET_TTL_MS;
  sql.run`DELETE FROM enrollment_tickets WHERE expires_at <= ${now - TICKET_TTL_MS}`;
  sql.run`INSERT INTO enrollment_tickets (ticket_hash, user_id, options, created_at, expires_at)
    VALUES (${ticket.ticket_hash}, ${ticket.user_id}, ${ticket.options}, ${now}, ${expiresAt})`;
  return ok({ expires_at: expiresAt });
}

/**
 * Redeems a ticket exactly once (ARCHITECTURE.md §5: one conditional UPDATE, never check-then-set) and starts
 * the browser's enrollment transaction for its user in the same commit. Two concurrent redemptions: one
 * wins, the other reads `redeemed`.
 */
export function redeemTicket(
  sql: Sql,
  ticketHash: string,
  transaction: Omit<NewMfaTransaction, "user_id" | "kind" | "login_session_id">,
  now: number,
): { ok: true; user_id: string } | { ok: false; reason: TicketFailure } {
  const row = sql.first<{ user_id: string; options: string }>`UPDATE enrollment_tickets SET redeemed_at = ${now}
    WHERE ticket_hash = ${ticketHash} AND redeemed_at IS NULL AND expires_at > ${now} RETURNING user_id, options`;
  if (!row) {
    const existing = sql.first<{ redeemed_at: number | null }>`SELECT redeemed_at FROM enrollment_tickets WHERE ticket_hash = ${ticketHash}`;
    if (!existing) return { ok: false, reason: "unknown" };
    return { ok: false, reason: existing.redeemed_at !== null ? "redeemed" : "expired" };
  }
  if (!sql.first`SELECT 1 FROM users WHERE user_id = ${row.user_id}`) return { ok: false, reason: "unknown" };
  const factor = json<{ factor?: string }>(row.options, {}).factor;
  const pending = { ...transaction.pending, ...(factor ? { ticket_factor: factor } : {}) };
  insertMfaTransaction(sql, { ...transaction, pending, kind: "ticket", user_id: row.user_id, login_session_id: null }, now);
  return { ok: true, user_id: row.user_id };
}

/** The guardian facade (`stub.guardian(audit)`). */
export class Guardian extends TenantRpc {
  settings(): GuardianSettings {
    return this.read((sql) => getGuardian(sql));
  }

  setFactor(name: GuardianFactor, enabled: boolean): GuardianSettings {
    return this.commit((tx) => {
      const before = getGuardian(tx.sql);
      const after = putGuardian(tx.sql, { ...before, factors: { ...before.factors, [name]: enabled } });
      audited(tx, this.audit, ok(after), { entity: "guardian_factor", action: "updated", id: name, before: before.factors[name], after: (s) => s.factors[name] });
      return after;
    }, { config: true });
  }

  setPolicies(policies: string[]): GuardianSettings {
    return this.commit((tx) => {
      const before = getGuardian(tx.sql);
      const after = putGuardian(tx.sql, { ...before, policies });
      audited(tx, this.audit, ok(after), { entity: "guardian_policies", action: "updated", id: "policies", before: before.policies, after: (s) => s.policies });
      return after;
    }, { config: true });
  }

  setSmsProvider(provider: SmsProviderName): GuardianSettings {
    return this.commit((tx) => {
      const before = getGuardian(tx.sql);
      const after = putGuardian(tx.sql, { ...before, sms_provider: provider });
      audited(tx, this.audit, ok(after), { entity: "guardian_sms_provider", action: "updated", id: "selected-provider", before: before.sms_provider, after: (s) => s.sms_provider });
      return after;
    }, { config: true });
  }

  twilio(): TwilioSettings {
    return this.read((sql) => getTwilio(sql));
  }

  /** Replaces the given fields (the worker sealed `auth_token_enc`); the audit event never holds the token. */
  updateTwilio(patch: Partial<TwilioSettings>): TwilioSettings {
    return this.commit((tx) => {
      const before = getTwilio(tx.sql);
      const after = { ...before, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as TwilioSettings;
      putSetting(tx.sql, TWILIO_KEY, after);
      const view = ({ auth_token_enc, ...rest }: TwilioSettings) => ({ ...rest, has_auth_token: auth_token_enc !== null });
      audited(tx, this.audit, ok(after), { entity: "guardian_sms_provider", action: "updated", id: "twilio", before: view(before), after: view });
      return after;
    });
  }

  createTicket(ticket: { ticket_hash: string; user_id: string; options: Record<string, unknown> }): Result<{ expires_at: number }> {
    return this.commit((tx) =>
      audited(tx, this.audit, createTicket(tx.sql, ticket, tx.now), { entity: "guardian_enrollment_ticket", action: "created", id: ticket.user_id }),
    );
  }

  /** See {@link redeemTicket}. */
  redeemTicket(ticketHash: string, transaction: Omit<NewMfaTransaction, "user_id" | "kind" | "login_session_id">) {
    return this.commit((tx) => redeemTicket(tx.sql, ticketHash, transaction, tx.now));
  }
}
