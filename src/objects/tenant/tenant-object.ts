import { DurableObject } from "cloudflare:workers";
import type { Result } from "../../shared/errors";
import type { KeyType } from "../../shared/key-ring";
import type {
  AuthorizeRequest,
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
  NewSigningKey,
  ResourceServerPatch,
  ResourceServerRecord,
  LoginSession,
  NewAuthorizationCode,
  NewUser,
  SessionRecord,
  SigningKeyRecord,
  TenantConfig,
  TenantSeed,
  UserRecord,
  UserWithSecret,
} from "../../shared/types";
import { applyMigrations, Sql } from "../sql";
import * as branding from "./branding";
import * as clientGrants from "./client-grants";
import * as clients from "./clients";
import { configVersion, readConfig } from "./config";
import * as connections from "./connections";
import { tenantMigrations } from "./migrations";
import * as login from "./login";
import * as resourceServers from "./resource-servers";
import { seedTenant } from "./seed";
import * as signingKeys from "./signing-keys";
import * as singleUse from "./single-use";
import * as users from "./users";

/**
 * One tenant: every row it owns, in its own SQLite (ARCHITECTURE.md §2). This class is the RPC surface
 * only: each method runs one module function, writes inside one `transactionSync`.
 */
export class TenantObject extends DurableObject<Env> {
  protected readonly sql: Sql;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    ctx.blockConcurrencyWhile(async () => applyMigrations(ctx.storage, tenantMigrations));
  }

  private tx<T>(fn: () => T): T {
    return this.ctx.storage.transactionSync(fn);
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

  createClient(client: NewClient): Result<ClientRecord> {
    return this.tx(() => clients.createClient(this.sql, client, Date.now()));
  }

  updateClient(clientId: string, patch: ClientPatch): Result<ClientRecord> {
    return this.tx(() => clients.updateClient(this.sql, clientId, patch, Date.now()));
  }

  deleteClient(clientId: string): Result<true> {
    return this.tx(() => clients.deleteClient(this.sql, clientId));
  }

  rotateClientSecret(clientId: string, secretEnc: string): Result<ClientRecord> {
    return this.tx(() => clients.rotateClientSecret(this.sql, clientId, secretEnc, Date.now()));
  }

  getClientConnections(clientId: string): Result<ConnectionRecord[]> {
    return connections.getClientConnections(this.sql, clientId);
  }

  setClientConnections(clientId: string, ids: string[]): Result<ConnectionRecord[]> {
    return this.tx(() => connections.setClientConnections(this.sql, clientId, ids, Date.now()));
  }

  // Resource servers

  listResourceServers(window: ListWindow): ListPage<ResourceServerRecord> {
    return resourceServers.listResourceServers(this.sql, window);
  }

  getResourceServer(id: string): ResourceServerRecord | null {
    return resourceServers.getResourceServer(this.sql, id);
  }

  createResourceServer(api: NewResourceServer): Result<ResourceServerRecord> {
    return this.tx(() => resourceServers.createResourceServer(this.sql, api, Date.now()));
  }

  updateResourceServer(id: string, patch: ResourceServerPatch): Result<ResourceServerRecord> {
    return this.tx(() => resourceServers.updateResourceServer(this.sql, id, patch, Date.now()));
  }

  deleteResourceServer(id: string): Result<true> {
    return this.tx(() => resourceServers.deleteResourceServer(this.sql, id));
  }

  // Signing keys (SPEC §4.2 "Signing keys"; key pairs and certificates are made in the worker)

  listSigningKeys(type: KeyType): SigningKeyRecord[] {
    return signingKeys.listSigningKeys(this.sql, type);
  }

  rotateSigningKeys(keys: NewSigningKey[], options: signingKeys.RotateOptions): Result<SigningKeyRecord[]> {
    return this.tx(() => signingKeys.rotateSigningKeys(this.sql, keys, options, Date.now()));
  }

  revokeSigningKey(type: KeyType, kid: string, replacement: NewSigningKey | null) {
    return this.tx(() => signingKeys.revokeSigningKey(this.sql, type, kid, replacement, Date.now()));
  }

  addSigningKey(key: NewSigningKey): Result<{ added: boolean }> {
    return this.tx(() => signingKeys.addSigningKey(this.sql, key, Date.now()));
  }

  renewSigningKey(type: KeyType, kid: string, cert: string, expiresAt: number): Result<SigningKeyRecord> {
    return this.tx(() => signingKeys.renewSigningKey(this.sql, type, kid, cert, expiresAt));
  }

  // Client grants

  listClientGrants(window: ListWindow, filter: { audience?: string; client_id?: string }): ListPage<ClientGrantRecord> {
    return clientGrants.listClientGrants(this.sql, window, filter);
  }

  createClientGrant(grant: NewClientGrant): Result<ClientGrantRecord> {
    return this.tx(() => clientGrants.createClientGrant(this.sql, grant, Date.now()));
  }

  updateClientGrant(id: string, scope: string[]): Result<ClientGrantRecord> {
    return this.tx(() => clientGrants.updateClientGrant(this.sql, id, scope, Date.now()));
  }

  deleteClientGrant(id: string): Result<true> {
    return this.tx(() => clientGrants.deleteClientGrant(this.sql, id));
  }

  // Connections

  listConnections(window: ListWindow, filter: { strategy?: string; name?: string }): ListPage<ConnectionRecord> {
    return connections.listConnections(this.sql, window, filter);
  }

  getConnection(id: string): ConnectionRecord | null {
    return connections.getConnection(this.sql, id);
  }

  createConnection(connection: NewConnection): Result<ConnectionRecord> {
    return this.tx(() => connections.createConnection(this.sql, connection, Date.now()));
  }

  updateConnection(id: string, patch: ConnectionPatch): Result<ConnectionRecord> {
    return this.tx(() => connections.updateConnection(this.sql, id, patch, Date.now()));
  }

  deleteConnection(id: string): Result<true> {
    return this.tx(() => connections.deleteConnection(this.sql, id));
  }

  // Branding

  getBranding(): Branding {
    return branding.getBranding(this.sql);
  }

  updateBranding(patch: BrandingPatch): Branding {
    return this.tx(() => branding.updateBranding(this.sql, patch));
  }

  // Users (login needs)

  findUserByEmail(connection: string, email: string): UserWithSecret | null {
    return users.findUserByEmail(this.sql, connection, email);
  }

  getUser(userId: string): UserRecord | null {
    return users.getUser(this.sql, userId);
  }

  createUser(user: NewUser): Result<UserRecord> {
    return this.tx(() => users.createUser(this.sql, user, Date.now()));
  }

  recordLogin(userId: string): void {
    users.recordLogin(this.sql, userId, Date.now());
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

  deleteSession(id: string): boolean {
    return login.deleteSession(this.sql, id);
  }

  // Single-use artifacts: each consumed by one conditional statement

  createAuthorizationCode(code: NewAuthorizationCode): void {
    singleUse.createAuthorizationCode(this.sql, code, Date.now());
  }

  consumeAuthorizationCode(redemption: CodeRedemption): singleUse.CodeOutcome {
    return this.tx(() => singleUse.consumeAuthorizationCode(this.sql, redemption, Date.now()));
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

  /** Deletes every row of this tenant (tenant deletion). */
  async destroy(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
