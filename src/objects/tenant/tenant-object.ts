import { DurableObject } from "cloudflare:workers";
import { ok, type Result } from "../../shared/errors";
import type {
  AuditContext,
  AuditEvent,
  AuthorizeRequest,
  FailedEvent,
  HookRecord,
  LogRecord,
  Branding,
  BrandingPatch,
  ClientGrantRecord,
  ClientPatch,
  ClientRecord,
  CodeRedemption,
  ConnectionPatch,
  ConnectionRecord,
  ListPage,
  ListWindow,
  NewClient,
  NewClientGrant,
  NewConnection,
  NewResourceServer,
  ResourceServerPatch,
  ResourceServerRecord,
  LoginSession,
  NewAuthorizationCode,
  NewUser,
  SessionRecord,
  TenantConfig,
  TenantSeed,
  UserRecord,
  UserWithSecret,
} from "../../shared/types";
import { applyMigrations, Sql } from "../sql";
import { LOG_TYPES, SYSTEM_CONTEXT } from "./audit";
import * as bench from "./bench";
import * as branding from "./branding";
import * as clientGrants from "./client-grants";
import * as clients from "./clients";
import { configVersion, readConfig } from "./config";
import * as connections from "./connections";
import { audited, emitAudit, emitHook, hookUser, type WriteTx } from "./events";
import { FailedEventsRpc, HooksRpc, LogsRpc } from "./outbox-rpc";
import { outboxOptionsFrom, Publisher } from "./publisher";
import { tenantMigrations } from "./migrations";
import * as login from "./login";
import * as resourceServers from "./resource-servers";
import { seedTenant } from "./seed";
import * as singleUse from "./single-use";
import * as users from "./users";

/**
 * One tenant: every row it owns, in its own SQLite (ARCHITECTURE.md §2). This class is the RPC surface
 * only: each method runs one module function, writes inside one `transactionSync`.
 */
export class TenantObject extends DurableObject<Env> {
  protected readonly sql: Sql;
  /** Write path, outbox relay and alarm (clock and jitter injectable for tests). */
  readonly outbox: Publisher;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    this.outbox = new Publisher(ctx.storage, this.sql, ctx.id.name ?? ctx.id.toString(), outboxOptionsFrom(env as unknown as Record<string, unknown>));
    ctx.blockConcurrencyWhile(async () => {
      applyMigrations(ctx.storage, tenantMigrations);
      // Events committed before a crash or restart get their alarm back.
      this.outbox.schedule();
    });
  }

  /** Every write: entity rows and the outbox events it emits commit in one transaction (ARCHITECTURE.md §3). */
  private commit<T>(fn: (tx: WriteTx) => T): T {
    return this.outbox.commit(fn);
  }

  /** Today's writes that record no event of their own (sessions, codes, tickets) still run in one transaction. */
  private tx<T>(fn: () => T): T {
    return this.outbox.commit(() => fn());
  }

  /** The alarm: outbox relay, retries, retention (one alarm per object at the earliest due job). */
  async alarm(): Promise<void> {
    await this.outbox.alarm();
  }

  /** Cron safety net: re-arms the alarm at the earliest due job; returns that time (null: nothing due). */
  pokeOutbox(): number | null {
    return this.outbox.schedule();
  }

  /** Everything a token request needs, in one read. */
  getConfig(tenantId: string): TenantConfig {
    return readConfig(this.sql, tenantId);
  }

  /** The configuration version alone, for cheap cache revalidation. */
  getConfigVersion(): number {
    return configVersion(this.sql);
  }

  /** Idempotent seed; the worker prepared keys, ciphertexts and hashes. */
  seed(seed: TenantSeed): { created: string[] } {
    return this.tx(() => seedTenant(this.sql, seed, Date.now()));
  }

  // Clients (configuration: every write bumps the configuration version in its transaction)

  listClients(window: ListWindow): ListPage<ClientRecord> {
    return clients.listClients(this.sql, window);
  }

  getClient(clientId: string): ClientRecord | null {
    return clients.getClient(this.sql, clientId);
  }

  createClient(client: NewClient, audit: AuditContext): Result<ClientRecord> {
    return this.commit((tx) =>
      audited(tx, audit, clients.createClient(tx.sql, client, tx.now), { entity: "client", action: "created", id: client.client_id, after: (c) => c }),
    );
  }

  updateClient(clientId: string, patch: ClientPatch, audit: AuditContext): Result<ClientRecord> {
    return this.commit((tx) => {
      const before = clients.getClient(tx.sql, clientId);
      const result = clients.updateClient(tx.sql, clientId, patch, tx.now);
      return audited(tx, audit, result, { entity: "client", action: "updated", id: clientId, before, after: (c) => c });
    });
  }

  deleteClient(clientId: string, audit: AuditContext): Result<true> {
    return this.commit((tx) => {
      const before = clients.getClient(tx.sql, clientId);
      return audited(tx, audit, clients.deleteClient(tx.sql, clientId), { entity: "client", action: "deleted", id: clientId, before });
    });
  }

  rotateClientSecret(clientId: string, secretEnc: string, audit: AuditContext): Result<ClientRecord> {
    return this.commit((tx) => {
      const before = clients.getClient(tx.sql, clientId);
      const result = clients.rotateClientSecret(tx.sql, clientId, secretEnc, tx.now);
      return audited(tx, audit, result, { entity: "client", action: "updated", id: clientId, before, after: (c) => c });
    });
  }

  getClientConnections(clientId: string): Result<ConnectionRecord[]> {
    return connections.getClientConnections(this.sql, clientId);
  }

  setClientConnections(clientId: string, ids: string[], audit: AuditContext): Result<ConnectionRecord[]> {
    return this.commit((tx) => {
      const before = clients.getClient(tx.sql, clientId);
      const result = connections.setClientConnections(tx.sql, clientId, ids, tx.now);
      const after = () => clients.getClient(tx.sql, clientId);
      return audited(tx, audit, result, { entity: "client", action: "updated", id: clientId, before, after });
    });
  }

  // Resource servers

  listResourceServers(window: ListWindow): ListPage<ResourceServerRecord> {
    return resourceServers.listResourceServers(this.sql, window);
  }

  getResourceServer(id: string): ResourceServerRecord | null {
    return resourceServers.getResourceServer(this.sql, id);
  }

  createResourceServer(api: NewResourceServer, audit: AuditContext): Result<ResourceServerRecord> {
    return this.commit((tx) => {
      const result = resourceServers.createResourceServer(tx.sql, api, tx.now);
      return audited(tx, audit, result, { entity: "resource_server", action: "created", id: api.id, after: (r) => r });
    });
  }

  updateResourceServer(id: string, patch: ResourceServerPatch, audit: AuditContext): Result<ResourceServerRecord> {
    return this.commit((tx) => {
      const before = resourceServers.getResourceServer(tx.sql, id);
      const result = resourceServers.updateResourceServer(tx.sql, id, patch, tx.now);
      return audited(tx, audit, result, { entity: "resource_server", action: "updated", id, before, after: (r) => r });
    });
  }

  deleteResourceServer(id: string, audit: AuditContext): Result<true> {
    return this.commit((tx) => {
      const before = resourceServers.getResourceServer(tx.sql, id);
      return audited(tx, audit, resourceServers.deleteResourceServer(tx.sql, id), { entity: "resource_server", action: "deleted", id, before });
    });
  }

  // Client grants

  listClientGrants(window: ListWindow, filter: { audience?: string; client_id?: string }): ListPage<ClientGrantRecord> {
    return clientGrants.listClientGrants(this.sql, window, filter);
  }

  createClientGrant(grant: NewClientGrant, audit: AuditContext): Result<ClientGrantRecord> {
    return this.commit((tx) => {
      const result = clientGrants.createClientGrant(tx.sql, grant, tx.now);
      return audited(tx, audit, result, { entity: "client_grant", action: "created", id: (g) => g.id, after: (g) => g });
    });
  }

  updateClientGrant(id: string, scope: string[], audit: AuditContext): Result<ClientGrantRecord> {
    return this.commit((tx) => {
      const before = clientGrants.getClientGrant(tx.sql, id);
      const result = clientGrants.updateClientGrant(tx.sql, id, scope, tx.now);
      return audited(tx, audit, result, { entity: "client_grant", action: "updated", id, before, after: (g) => g });
    });
  }

  deleteClientGrant(id: string, audit: AuditContext): Result<true> {
    return this.commit((tx) => {
      const before = clientGrants.getClientGrant(tx.sql, id);
      return audited(tx, audit, clientGrants.deleteClientGrant(tx.sql, id), { entity: "client_grant", action: "deleted", id, before });
    });
  }

  // Connections

  listConnections(window: ListWindow, filter: { strategy?: string; name?: string }): ListPage<ConnectionRecord> {
    return connections.listConnections(this.sql, window, filter);
  }

  getConnection(id: string): ConnectionRecord | null {
    return connections.getConnection(this.sql, id);
  }

  createConnection(connection: NewConnection, audit: AuditContext): Result<ConnectionRecord> {
    return this.commit((tx) => {
      const result = connections.createConnection(tx.sql, connection, tx.now);
      return audited(tx, audit, result, { entity: "connection", action: "created", id: connection.id, after: (c) => c });
    });
  }

  updateConnection(id: string, patch: ConnectionPatch, audit: AuditContext): Result<ConnectionRecord> {
    return this.commit((tx) => {
      const before = connections.getConnection(tx.sql, id);
      const result = connections.updateConnection(tx.sql, id, patch, tx.now);
      return audited(tx, audit, result, { entity: "connection", action: "updated", id, before, after: (c) => c });
    });
  }

  deleteConnection(id: string, audit: AuditContext): Result<true> {
    return this.commit((tx) => {
      const before = connections.getConnection(tx.sql, id);
      return audited(tx, audit, connections.deleteConnection(tx.sql, id), { entity: "connection", action: "deleted", id, before });
    });
  }

  // Branding

  getBranding(): Branding {
    return branding.getBranding(this.sql);
  }

  updateBranding(patch: BrandingPatch, audit: AuditContext): Branding {
    return this.commit((tx) => {
      const before = branding.getBranding(tx.sql);
      const after = branding.updateBranding(tx.sql, patch);
      audited(tx, audit, { ok: true, value: after }, { entity: "branding", action: "updated", id: "branding", before, after: (b) => b });
      return after;
    });
  }

  // Users (login needs)

  findUserByEmail(connection: string, email: string): UserWithSecret | null {
    return users.findUserByEmail(this.sql, connection, email);
  }

  getUser(userId: string): UserRecord | null {
    return users.getUser(this.sql, userId);
  }

  /** Sign-up: the user, its `ss` (or `fs`) log event and the post-user-registration hook, in one commit. */
  createUser(user: NewUser, audit: AuditContext): Result<UserRecord> {
    return this.commit((tx) => {
      const result = users.createUser(tx.sql, user, tx.now);
      const client_id = audit.actor.client_id ?? null;
      if (!result.ok) {
        const description = `Failed signup: ${result.error.message}`;
        emitAudit(tx, audit, { event_type: "user.signup_failed", log_type: LOG_TYPES.signupFailed, category: "user_action", description, client_id });
        return result;
      }
      const created = result.value;
      const target = { type: "user", id: created.user_id, after: created };
      emitAudit(tx, audit, { event_type: "user.created", log_type: LOG_TYPES.signup, category: "user_action", description: "Successful signup", target, user_id: created.user_id, client_id });
      emitHook(tx, "post-user-registration", { user: hookUser(created), client_id });
      return result;
    });
  }

  /**
   * A successful login: counters, the `s` log event and the post-user-login hook; a user whose registration
   * never completed gets post-user-registration enqueued again (SPEC §6.2 self-healing).
   */
  recordLogin(userId: string, audit: AuditContext = SYSTEM_CONTEXT): void {
    this.commit((tx) => {
      users.recordLogin(tx.sql, userId, tx.now);
      const user = users.getUser(tx.sql, userId);
      if (!user) return;
      const client_id = audit.actor.client_id ?? null;
      emitAudit(tx, audit, { event_type: "user.login", log_type: LOG_TYPES.login, category: "user_action", description: "Successful login", user_id: userId, client_id });
      emitHook(tx, "post-user-login", { user: hookUser(user), client_id });
      if (!users.isRegistrationComplete(tx.sql, userId)) emitHook(tx, "post-user-registration", { user: hookUser(user), client_id });
    });
  }

  /** A refused login (SPEC §7 codes): `fu` for an unknown user, `fp` for a wrong password, `f` otherwise. */
  recordLoginFailure(failure: { code: string; email: string; user_id: string | null }, audit: AuditContext): void {
    const log_type = failure.code === "USER_NOT_FOUND" ? LOG_TYPES.loginFailedUser : failure.code === "INVALID_PASSWORD" ? LOG_TYPES.loginFailedPassword : LOG_TYPES.loginFailed;
    this.commit((tx) =>
      emitAudit(tx, audit, {
        event_type: "user.login_failed",
        log_type,
        category: "user_action",
        description: `Failed login: ${failure.code} (${failure.email})`,
        user_id: failure.user_id,
        client_id: audit.actor.client_id ?? null,
        response: { status_code: 403, body: { code: failure.code } },
      }),
    );
  }

  // Login sessions and sessions

  createLoginSession(input: { id: string; request: AuthorizeRequest; csrf_token: string; expires_at: number }): LoginSession {
    return login.createLoginSession(this.sql, input, Date.now());
  }

  getLoginSession(id: string): LoginSession | null {
    return login.getLoginSession(this.sql, id, Date.now());
  }

  completeLoginSession(id: string, userId: string): boolean {
    return login.completeLoginSession(this.sql, id, userId, Date.now());
  }

  createSession(input: { id: string; secret_hash: string; user_id: string; client_id: string; expires_at: number }): SessionRecord {
    return login.createSession(this.sql, input, Date.now());
  }

  getSession(id: string): SessionRecord | null {
    return login.getSession(this.sql, id, Date.now());
  }

  touchSession(id: string, clientId: string): void {
    login.touchSession(this.sql, id, clientId, Date.now());
  }

  /** Logout: the session goes, with its `slo` log event. */
  deleteSession(id: string, audit: AuditContext = SYSTEM_CONTEXT): boolean {
    return this.commit((tx) => {
      const session = login.getSession(tx.sql, id, tx.now);
      const deleted = login.deleteSession(tx.sql, id);
      if (deleted) {
        const user_id = session?.user_id ?? null;
        emitAudit(tx, audit, { event_type: "user.logout", log_type: LOG_TYPES.logout, category: "user_action", description: "Successful logout", user_id, client_id: audit.actor.client_id ?? null });
      }
      return deleted;
    });
  }

  // Single-use artifacts: each consumed by one conditional statement

  createAuthorizationCode(code: NewAuthorizationCode): void {
    singleUse.createAuthorizationCode(this.sql, code, Date.now());
  }

  /** Redeems a code once, with its `seacft` / `feacft` log event in the same commit. */
  consumeAuthorizationCode(redemption: CodeRedemption, audit: AuditContext = SYSTEM_CONTEXT): singleUse.CodeOutcome {
    return this.commit((tx) => {
      const outcome = singleUse.consumeAuthorizationCode(tx.sql, redemption, tx.now);
      emitAudit(tx, audit, {
        event_type: outcome.ok ? "token.code_exchanged" : "token.code_exchange_failed",
        log_type: outcome.ok ? LOG_TYPES.codeExchange : LOG_TYPES.codeExchangeFailed,
        category: "api",
        description: outcome.ok ? "Authorization Code for Access Token" : `Failed exchange of Authorization Code: ${outcome.reason}`,
        client_id: redemption.client_id,
        user_id: outcome.ok ? outcome.code.user_id : null,
      });
      return outcome;
    });
  }

  consumeAssertionJti(clientId: string, jti: string, expiresAt: number): boolean {
    return this.tx(() => singleUse.consumeAssertionJti(this.sql, clientId, jti, expiresAt, Date.now()));
  }

  createLoginTicket(ticket: { ticket_hash: string; client_id: string; user_id: string; expires_at: number }): void {
    singleUse.createLoginTicket(this.sql, ticket, Date.now());
  }

  consumeLoginTicket(ticketHash: string, clientId: string): string | null {
    return singleUse.consumeLoginTicket(this.sql, ticketHash, clientId, Date.now());
  }

  revokeAccessToken(jti: string, expiresAt: number): void {
    this.tx(() => singleUse.revokeAccessToken(this.sql, jti, expiresAt, Date.now()));
  }

  isAccessTokenRevoked(jti: string): boolean {
    return singleUse.isAccessTokenRevoked(this.sql, jti);
  }

  /**
   * A client_credentials exchange, recorded only when a credentials-exchange webhook is enabled (the
   * worker checks its configuration snapshot), so the token endpoint writes nothing otherwise.
   */
  recordCredentialsExchange(exchange: { client_id: string; audience: string; scope: string }): void {
    this.commit((tx) => emitHook(tx, "credentials-exchange", { ...exchange }));
  }

  // Outbox resources (facades: one round trip by promise pipelining)

  hooks(): HooksRpc {
    return new HooksRpc(this.outbox, this.sql);
  }

  logs(): LogsRpc {
    return new LogsRpc(this.outbox, this.sql);
  }

  failedEvents(): FailedEventsRpc {
    return new FailedEventsRpc(this.outbox, this.sql);
  }

  /** `npm run bench` only (reached through /__bench when BENCH_ROUTES=1): relay throughput at a backlog. */
  benchRelay(backlog: number) {
    return bench.benchRelay(this.outbox, this.sql, this.ctx.storage, backlog);
  }

  /** `npm run bench` only: commit cost with and without the outbox event. */
  benchCommit(n: number) {
    return bench.benchCommit(this.outbox, n);
  }

  /** `npm run bench` only: this instance records with or without the outbox (SPEC §6.3 `enabled`). */
  benchSetOutbox(enabled: boolean): void {
    this.outbox.options = { ...this.outbox.options, enabled };
  }

  /** Deletes every row of this tenant (tenant deletion). */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
