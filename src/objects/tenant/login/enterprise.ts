import type { AuditContext } from "../../../shared/types";
import type { UserRecord } from "../../../shared/schemas/users";
import { emitAudit } from "../core/events";
import { TenantRpc } from "../core/rpc";
import { getUser } from "../users/users";

/**
 * Users of enterprise (OpenID Connect) connections (issue 29 point 0): the profile the upstream identity
 * provider asserted in a verified ID token, stored under `oidc|<connection>|<sub>` as the reference platform
 * names them, and refreshed at every login (the reference's default: the upstream owns these fields).
 */

/** The upstream profile as the worker mapped it from the verified ID token (and userinfo). */
export interface EnterpriseProfile {
  user_id: string;
  connection: string;
  email: string | null;
  email_verified: boolean;
  name: string | null;
  given_name: string | null;
  family_name: string | null;
  nickname: string | null;
  picture: string | null;
}

export type EnterpriseUser = { ok: true; user: UserRecord; created: boolean } | { ok: false; reason: "blocked" };

/** The enterprise users facade (`stub.enterprise(audit)`). */
export class Enterprise extends TenantRpc {
  /**
   * Creates the user (with `ss`) or refreshes its profile, in one commit. An email another user of the same
   * connection already has is not stored (one address per connection), rather than failing the login.
   */
  upsert(profile: EnterpriseProfile, clientId: string): EnterpriseUser {
    return this.commit((tx) => {
      const { sql, now } = tx;
      const taken = profile.email
        ? sql.first<{ user_id: string }>`SELECT user_id FROM users WHERE connection = ${profile.connection} AND email = ${profile.email} AND user_id <> ${profile.user_id}`
        : null;
      const email = taken ? null : profile.email;
      const p = profile;
      const existing = getUser(sql, p.user_id);
      if (existing) {
        if (existing.blocked) return { ok: false, reason: "blocked" } as const;
        sql.run`UPDATE users SET email = ${email}, email_verified = ${email !== null && p.email_verified}, name = ${p.name}, given_name = ${p.given_name},
          family_name = ${p.family_name}, nickname = ${p.nickname}, picture = ${p.picture}, updated_at = ${now} WHERE user_id = ${p.user_id}`;
        return { ok: true, user: getUser(sql, p.user_id) as UserRecord, created: false } as const;
      }
      sql.run`INSERT INTO users (user_id, connection, email, email_verified, name, given_name, family_name, nickname, picture, created_at, updated_at)
        VALUES (${p.user_id}, ${p.connection}, ${email}, ${email !== null && p.email_verified}, ${p.name}, ${p.given_name}, ${p.family_name}, ${p.nickname}, ${p.picture}, ${now}, ${now})`;
      const user = getUser(sql, p.user_id) as UserRecord;
      const actor: AuditContext = { ...this.audit, actor: { type: "user", id: user.user_id, client_id: clientId } };
      emitAudit(tx, actor, { event_type: "user.created", log_type: "ss", category: "user_action", description: "Successful signup (enterprise)", target: { type: "user", id: user.user_id, after: user }, user_id: user.user_id, client_id: clientId });
      return { ok: true, user, created: true } as const;
    });
  }

  /** A failed enterprise login (`f`): upstream error, bad state, failed code exchange or an invalid ID token. */
  recordFailure(description: string, clientId: string | null, connection: string | null): void {
    this.commit((tx) =>
      emitAudit(tx, this.audit, {
        event_type: "user.login_failed",
        log_type: "f",
        category: "user_action",
        description: connection ? `${description} (connection ${connection})` : description,
        ...(clientId ? { client_id: clientId } : {}),
        response: { status_code: 400 },
      }),
    );
  }
}
