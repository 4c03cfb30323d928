import { DurableObject } from "cloudflare:workers";
import type { AuditContext, CodeExchangeLog, CodeRedemption, CodeSubject, Json, LoginCompletion, MfaTokenRead, NewChallenge, NewSession, PasswordLoginRead, SessionRecord, TenantConfig, TenantSeed, TokenSubject } from "../../shared/types";
import type { UserRecord } from "../../shared/schemas/users";
import type { BlockingTrigger, HookRecord } from "../../shared/schemas/hooks";
import { enabledHooks } from "./outbox/hooks";
import { applyMigrations, schemaVersion, Sql } from "../sql";
import { AccountLinking } from "./users/account-linking";
import { ActionsRpc } from "./actions/actions-rpc";
import { AttackProtectionRpc } from "./settings/attack-protection";
import { SettingsDocuments } from "./settings/documents";
import { AuthenticationMethods } from "./users/authentication-methods";
import { Challenges, DevMessages } from "./login/challenges";
import { SYSTEM_CONTEXT } from "./core/audit";
import * as bench from "./bench";
import { installMeter, meterEnabled } from "../meter";
import { BrandingRpc } from "./settings/branding";
import { ClientGrants } from "./oauth/client-grants";
import { UserGrants } from "./oauth/user-grants";
import { Clients } from "./oauth/clients";
import { readConfig } from "./config";
import { configVersion } from "./core/settings";
import { composeTenant } from "./composition";
import { Connections } from "./oauth/connections";
import { emitHook } from "./core/events";
import { LogStreamsRpc, syncPipeline } from "./outbox/log-streams";
import { Guardian } from "./mfa/guardian";
import { Logins, Sessions } from "./login/login";
import { Mfa } from "./mfa/mfa";
import { Passwordless, type PasswordlessIdentity, type PasswordlessUser } from "./login/passwordless";
import { Enterprise } from "./login/enterprise";
import { tenantMigrations } from "./core/migrations";
import { FailedEventsRpc, HooksRpc, LogsRpc } from "./outbox/outbox-rpc";
import { Organizations } from "./organizations/organizations-rpc";
import { OrganizationClientGrants } from "./organizations/organization-client-grants";
import { ClientCredentials } from "./oauth/client-credentials";
import type { Publisher } from "./core/publisher";
import { ResourceServers } from "./oauth/resource-servers";
import { Roles } from "./roles/roles";
import type { TenantCore } from "./core/rpc";
import { seedTenant } from "./oauth/seed";
import { SigningKeys } from "./oauth/signing-keys";
import { TenantSettingsRpc } from "./settings/tenant-settings";
import type { TenantCleanup } from "./login/cleanup";
import { EmailProviders } from "./settings/email-provider";
import { EmailTemplates } from "./settings/email-templates";
import { ControlPlaneSync } from "./settings/control-plane-sync";
import { Assertions, type CodeOutcome, Codes, consumeAuthorizationCodeLogged, consumeDpopJti, isAccessTokenRevoked, Revocations, Tickets } from "./login/single-use";
import { tokenSubject, UserAuthorization } from "./roles/user-authorization";
import { CodeExchanges, codeSubject } from "./login/code-exchanges";
import { getUser, Users } from "./users/users";
import { EmailVerifications } from "./jobs/email-verification";
import type { JobLane } from "./jobs/job-lane";
import { Jobs } from "./jobs/jobs";
import { DeviceCodes } from "./oauth/device-codes";
import { PushedRequests } from "./oauth/pushed-requests";
import { UserTickets } from "./login/password-reset";

/**
 * One tenant: every row it owns, in its own SQLite (ARCHITECTURE.md §2). This class is the RPC surface
 * only: hot calls stay flat methods (a facade round trip costs the object about twice a flat one: the interactive
 * login's and SSO's calls, the token grants' reads); every other resource is a facade
 * (`stub.clients(audit).create(x)`, one round trip by promise pipelining) whose writes all go through
 * `TenantRpc.commit` (src/objects/tenant/core/rpc.ts),
 * which delegates to the outbox's `Publisher.commit`: entity rows and their events in one transaction.
 * Facades take the caller's audit context (the system's when omitted).
 * Facades are methods, not getters: the vitest pool's stub wrapper resolves only top-level keys.
 */
export class TenantObject extends DurableObject<Env> {
  protected readonly core: TenantCore;
  /** Write path, outbox relay and alarm (clock and jitter injectable for tests). */
  readonly outbox: Publisher;
  /** Expired-row cleanup, a job of the same alarm (SPEC §8). */
  readonly cleanup: TenantCleanup;
  /** User import and export jobs, one chunk per alarm run (issue 14 point 5). */
  readonly jobLane: JobLane;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sqlStorage = ctx.storage.sql;
    if (meterEnabled(env, ctx.id.name ?? "")) installMeter(this, ctx.storage, sqlStorage, `tenant:${ctx.id.name}`);
    const sql = new Sql(sqlStorage);
    const parts = composeTenant(ctx.storage, sql, ctx.id.name ?? ctx.id.toString(), env, (ctx as unknown as { exports?: unknown }).exports);
    this.core = parts.core;
    this.outbox = parts.outbox;
    this.cleanup = parts.cleanup;
    this.jobLane = parts.jobLane;
    ctx.blockConcurrencyWhile(async () => {
      // TENANT_SCHEMA_MIGRATIONS: "pinned" (the default) moves an existing tenant's schema only through an
      // upgrade operation (`upgradeSchema`); "auto" (wrangler.toml opts in) applies pending migrations on start.
      applyMigrations(ctx.storage, tenantMigrations, { pinned: (env as unknown as Record<string, string | undefined>).TENANT_SCHEMA_MIGRATIONS !== "auto" });
      syncPipeline(sql, parts.pipeline, this.outbox.now());
      // Events committed before a crash or restart get their alarm back.
      this.outbox.schedule();
    });
  }

  /** The alarm: outbox relay, retries, retention, then cleanup (one alarm per object at the earliest due job). */
  async alarm(): Promise<void> {
    await this.outbox.alarm();
  }

  /** Cron safety net: re-arms the alarm at the earliest due job; returns that time (null: nothing due). */
  pokeOutbox(): number | null {
    return this.outbox.schedule();
  }

  /** Everything a token request needs, in one read (hot). */
  getConfig(tenantId: string): TenantConfig {
    return readConfig(this.core.sql, tenantId);
  }

  /** /userinfo's one read (hot, issue 31: was two round trips): whether the token's `jti` was revoked, and its user. */
  userinfoRead(jti: string | null, userId: string): { revoked: boolean; user: UserRecord | null } {
    return { revoked: jti !== null && isAccessTokenRevoked(this.core.sql, jti), user: getUser(this.core.sql, userId) };
  }

  /** A user write's prepare read (issue 31: was `users.get`, then `hooks.enabled`): the user and a blocking trigger's hooks. */
  userWithHooks(userId: string, trigger: BlockingTrigger): { user: UserRecord | null; hooks: HookRecord[] } {
    return { user: getUser(this.core.sql, userId), hooks: enabledHooks(this.core.sql, trigger) };
  }

  /**
   * An upgrade operation's apply-migrations step for a shared tenant (issue 16 point 6): applies every pending
   * migration of this code (each in its own transaction) and records the move in `schema_upgrades`. Idempotent:
   * at the current schema it applies nothing and records nothing.
   */
  upgradeSchema(operationId: string | null): { from: string | null; to: string | null; applied: string[] } {
    const from = schemaVersion(this.ctx.storage);
    const { applied } = applyMigrations(this.ctx.storage, tenantMigrations);
    const to = schemaVersion(this.ctx.storage);
    if (applied.length > 0) {
      this.core.sql.run`INSERT INTO schema_upgrades (from_version, to_version, operation_id, applied_at)
        VALUES (${from}, ${to}, ${operationId}, ${this.core.now()})`;
    }
    return { from, to, applied };
  }

  /** Migrations of this code not yet applied to this object (a pinned tenant's pending schema). */
  pendingMigrations(): string[] {
    const current = schemaVersion(this.ctx.storage);
    const index = current ? tenantMigrations.findIndex((m) => m.name === current) : -1;
    return tenantMigrations.slice(index + 1).map((m) => m.name);
  }

  /** The schema moves recorded by upgrades; empty on an object still at a schema before 0014 (expand/contract). */
  schemaUpgrades(): { from_version: string | null; to_version: string; operation_id: string | null; applied_at: number }[] {
    const exists = this.core.sql.first`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_upgrades'`;
    if (!exists) return [];
    return this.core.sql.all`SELECT from_version, to_version, operation_id, applied_at FROM schema_upgrades ORDER BY id`;
  }

  /** The object's schema: its last applied migration (issue 16: a deployment's apply-migrations and verify steps). */
  schemaVersion(): string | null {
    return schemaVersion(this.ctx.storage);
  }

  /** Records a DPoP proof's `jti` for its key until `expiresAt` (RFC 9449 §11.1); false if already used. Flat (hot). */
  consumeDpopJti(jkt: string, jti: string, expiresAt: number): boolean {
    return this.core.commit((tx) => consumeDpopJti(tx.sql, jkt, jti, expiresAt, tx.now));
  }

  /** The configuration version alone, for cheap cache revalidation (hot). */
  getConfigVersion(): number {
    return configVersion(this.core.sql);
  }

  /**
   * Consumes a stored authorization code exactly once (hot), with its `seacft` / `feacft` log event in the same
   * commit; a replay also revokes what the code issued (RFC 6749 §4.1.2). See {@link consumeAuthorizationCodeLogged}.
   */
  consumeAuthorizationCode(redemption: CodeRedemption, audit: AuditContext = SYSTEM_CONTEXT): CodeOutcome {
    return this.core.commit((tx) => consumeAuthorizationCodeLogged(tx, redemption, audit));
  }

  /** A sealed code's exchange: its one read here (issue 31), flat. See {@link codeSubject}. */
  codeSubject(userId: string, sessionId: string | null, audience: string | null, organization: string | null): CodeSubject {
    return codeSubject(this.core.sql, userId, sessionId, audience, organization);
  }

  /** Sealed codes' refused exchanges (issue 31). */
  codeExchanges(audit: AuditContext = SYSTEM_CONTEXT): CodeExchanges { return new CodeExchanges(this.core, audit); }

  /** A code shard's batch of `seacft` events, flat: a refused batch leaves no facade promise behind. See {@link CodeExchanges.append}. */
  appendCodeExchanges(entries: CodeExchangeLog[]): number { return new CodeExchanges(this.core).append(entries); }

  /** A client_credentials exchange, recorded only when a credentials-exchange webhook is enabled (worker checks). */
  recordCredentialsExchange(exchange: { client_id: string; audience: string; scope: string }): void {
    this.core.commit((tx) => emitHook(tx, "credentials-exchange", { ...exchange }));
  }

  /** Idempotent seed; the worker prepared keys, ciphertexts and hashes. Bumps the version if it created anything. */
  seed(seed: TenantSeed): { created: string[] } {
    return this.core.commit((tx) => seedTenant(tx.sql, seed, tx.now));
  }

  clients(audit: AuditContext = SYSTEM_CONTEXT): Clients { return new Clients(this.core, audit); }

  resourceServers(audit: AuditContext = SYSTEM_CONTEXT): ResourceServers { return new ResourceServers(this.core, audit); }

  clientGrants(audit: AuditContext = SYSTEM_CONTEXT): ClientGrants { return new ClientGrants(this.core, audit); }

  /** Users' consents (issue 29 point 2). */
  userGrants(audit: AuditContext = SYSTEM_CONTEXT): UserGrants { return new UserGrants(this.core, audit); }

  /** A client's public keys for private_key_jwt (/clients/{id}/credentials). */
  clientCredentials(audit: AuditContext = SYSTEM_CONTEXT): ClientCredentials { return new ClientCredentials(this.core, audit); }

  /** Organizations and the client grants associated with them (issue 28 point 2). */
  organizationClientGrants(audit: AuditContext = SYSTEM_CONTEXT): OrganizationClientGrants { return new OrganizationClientGrants(this.core, audit); }

  connections(audit: AuditContext = SYSTEM_CONTEXT): Connections { return new Connections(this.core, audit); }

  branding(audit: AuditContext = SYSTEM_CONTEXT): BrandingRpc { return new BrandingRpc(this.core, audit); }

  attackProtection(audit: AuditContext = SYSTEM_CONTEXT): AttackProtectionRpc { return new AttackProtectionRpc(this.core, audit); }

  settingsDocuments(audit: AuditContext = SYSTEM_CONTEXT): SettingsDocuments { return new SettingsDocuments(this.core, audit); }

  signingKeys(audit: AuditContext = SYSTEM_CONTEXT): SigningKeys { return new SigningKeys(this.core, audit); }

  tenantSettings(audit: AuditContext = SYSTEM_CONTEXT): TenantSettingsRpc { return new TenantSettingsRpc(this.core, audit); }

  accountLinking(audit: AuditContext = SYSTEM_CONTEXT): AccountLinking { return new AccountLinking(this.core, audit); }

  logStreams(audit: AuditContext = SYSTEM_CONTEXT): LogStreamsRpc { return new LogStreamsRpc(this.core, audit); }

  actions(audit: AuditContext = SYSTEM_CONTEXT): ActionsRpc { return new ActionsRpc(this.core, audit); }

  users(audit: AuditContext = SYSTEM_CONTEXT): Users { return new Users(this.core, audit); }

  /** User import and export jobs (POST /jobs/users-imports, /jobs/users-exports, GET /jobs/{id}). */
  jobs(audit: AuditContext = SYSTEM_CONTEXT): Jobs { return new Jobs(this.core, audit); }

  /** Verification emails: their jobs and single-use links (POST /jobs/verification-email). */
  emailVerification(audit: AuditContext = SYSTEM_CONTEXT): EmailVerifications { return new EmailVerifications(this.core, audit); }

  /** Password resets and user tickets (issue 29: /dbconnections/change_password, POST /tickets/*). */
  userTickets(audit: AuditContext = SYSTEM_CONTEXT): UserTickets { return new UserTickets(this.core, audit); }

  organizations(audit: AuditContext = SYSTEM_CONTEXT): Organizations { return new Organizations(this.core, audit); }

  roles(audit: AuditContext = SYSTEM_CONTEXT): Roles { return new Roles(this.core, audit); }

  /** A user's roles and direct permissions, and what tokens need of them. */
  userAuthorization(audit: AuditContext = SYSTEM_CONTEXT): UserAuthorization { return new UserAuthorization(this.core, audit); }

  /**
   * The refresh grant's one read of its user, flat (STYLE.md: hot paths stay flat methods, no facade stub
   * per call). See {@link tokenSubject}.
   */
  tokenSubject(userId: string, withIdentities = true, withPermissions = true): TokenSubject {
    return tokenSubject(this.core.sql, userId, withIdentities, withPermissions);
  }

  /** A user's authentication methods (SPEC §2.4): management API and MFA screens. */
  authenticationMethods(audit: AuditContext = SYSTEM_CONTEXT): AuthenticationMethods { return new AuthenticationMethods(this.core, audit); }

  /** MFA settings and enrollment tickets (SPEC §4.2 guardian routes, §3.4). */
  guardian(audit: AuditContext = SYSTEM_CONTEXT): Guardian { return new Guardian(this.core, audit); }

  /** MFA transactions, recovery codes and WebAuthn counters (issue 12). */
  mfa(audit: AuditContext = SYSTEM_CONTEXT): Mfa { return new Mfa(this.core, audit); }

  /** Passwordless codes and logins (issue 12 point 6). */
  passwordless(audit: AuditContext = SYSTEM_CONTEXT): Passwordless { return new Passwordless(this.core, audit); }

  /** Enterprise (OpenID Connect) connection users (issue 29 point 0). */
  enterprise(audit: AuditContext = SYSTEM_CONTEXT): Enterprise { return new Enterprise(this.core, audit); }

  /** One-time codes and WebAuthn challenges. */
  challenges(): Challenges { return new Challenges(this.core); }

  /** The development message sink (read at GET /__dev/messages when DEV_MESSAGE_SINK=1). */
  devMessages(): DevMessages { return new DevMessages(this.core); }

  logins(audit: AuditContext = SYSTEM_CONTEXT): Logins { return new Logins(this.core, audit); }

  // The interactive login's hot calls, flat (issue 31: a facade round trip costs the object about twice a flat
  // one: it opens the facade, exports it, takes the pipelined call and later its release).

  /** The login form's POST, in one read. See {@link Logins.passwordRead}. */
  passwordLoginRead(id: string, email: string, connections: string[]): PasswordLoginRead { return new Logins(this.core).passwordRead(id, email, connections); }

  /** An interactive login's completion, in one commit. See {@link Logins.complete}. */
  completeLogin(input: LoginCompletion, audit: AuditContext = SYSTEM_CONTEXT): boolean { return new Logins(this.core, audit).complete(input); }

  /** An SSO authorize's read: the browser session and its user. See {@link Sessions.getWithUser}. */
  sessionWithUser(id: string): { session: SessionRecord | null; user: UserRecord | null } { return new Sessions(this.core).getWithUser(id); }

  /** Records that a client used the browser session (SSO). See {@link Sessions.touch}. */
  touchSession(id: string, clientId: string, audit: AuditContext = SYSTEM_CONTEXT): void { new Sessions(this.core, audit).touch(id, clientId); }

  // One-time codes, MFA tokens and passwordless logins: the MFA API's and the passwordless grant's hot calls, flat.

  /** Stores a one-time code, MFA token or WebAuthn challenge (its hash). See {@link Challenges.create}. */
  createChallenge(challenge: NewChallenge): void { new Challenges(this.core).create(challenge); }

  /** A typed code's attempt, counted, checked and consumed once, in one commit. See {@link Challenges.redeem}. */
  redeemChallenge(purpose: string, subject: string, clientId: string | null, maxAttempts: number, typedHash: string): Record<string, Json> | null { return new Challenges(this.core).redeem(purpose, subject, clientId, maxAttempts, typedHash); }

  /** An MFA token with its user and factors, in one read. See {@link Mfa.tokenRead}. */
  mfaTokenRead(purpose: string, hash: string, sent: { purpose: string; since: number } | null): MfaTokenRead { return new Mfa(this.core).tokenRead(purpose, hash, sent); }

  /** The MFA grant's completion, in one commit. See {@link Mfa.completeGrant}. */
  completeMfaGrant(tokenId: string, session: NewSession, amr: string[], methodId: string | null, audit: AuditContext = SYSTEM_CONTEXT): boolean { return new Mfa(this.core, audit).completeGrant(tokenId, session, amr, methodId); }

  /** A passwordless code stored, within the identifier's limit. See {@link Passwordless.start}. */
  startPasswordless(challenge: NewChallenge, recipient: string, limit: { max: number; since: number } | undefined, audit: AuditContext = SYSTEM_CONTEXT): boolean { return new Passwordless(this.core, audit).start(challenge, recipient, limit); }

  /** A passwordless login's user and session, in one commit. See {@link Passwordless.login}. */
  passwordlessLogin(who: PasswordlessIdentity, session: Omit<NewSession, "user_id">, amr: string[], audit: AuditContext = SYSTEM_CONTEXT): PasswordlessUser & { session_id?: string } { return new Passwordless(this.core, audit).login(who, session, amr); }

  sessions(audit: AuditContext = SYSTEM_CONTEXT): Sessions { return new Sessions(this.core, audit); }

  codes(): Codes { return new Codes(this.core); }

  tickets(): Tickets { return new Tickets(this.core); }

  revocations(): Revocations { return new Revocations(this.core); }

  assertions(): Assertions { return new Assertions(this.core); }

  deviceCodes(): DeviceCodes { return new DeviceCodes(this.core); }
  pushedRequests(): PushedRequests { return new PushedRequests(this.core); }

  // Outbox resources (facades: one round trip by promise pipelining)

  /** The email provider (`/api/v2/emails/provider`) and the email templates (`/api/v2/email-templates`). */
  emailProvider(audit: AuditContext = SYSTEM_CONTEXT): EmailProviders { return new EmailProviders(this.core, audit); }
  emailTemplates(audit: AuditContext = SYSTEM_CONTEXT): EmailTemplates { return new EmailTemplates(this.core, audit); }

  /** Control-plane sync: `request` on the control plane, `apply` on a child (issue 15 point 2). */
  controlPlaneSync(): ControlPlaneSync { return new ControlPlaneSync(this.core); }

  hooks(): HooksRpc {
    return new HooksRpc(this.outbox, this.core.sql);
  }

  logs(): LogsRpc {
    return new LogsRpc(this.outbox, this.core.sql);
  }

  failedEvents(): FailedEventsRpc {
    return new FailedEventsRpc(this.outbox, this.core.sql);
  }

  /** `npm run bench` and tests only (reached through /__bench when BENCH_ROUTES=1): the probes of bench.ts. */
  bench(): bench.TenantBench {
    return new bench.TenantBench(this, this.outbox, this.core.sql, this.ctx.storage, () => this.core.now(), this.env);
  }

  /**
   * A page of this tenant's user ids after `after`, in id order (tenant deletion wipes each user's object:
   * the tenant is the one that knows its users).
   */
  userIdsAfter(after: string | null, limit: number): string[] {
    return this.core.sql.all<{ user_id: string }>`SELECT user_id FROM users WHERE user_id > ${after ?? ""}
      ORDER BY user_id LIMIT ${Math.min(Math.max(limit, 1), 1000)}`.map((r) => r.user_id);
  }

  /** Deletes every row of this tenant and its alarm (tenant deletion); a second call is a no-op. */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }
}
