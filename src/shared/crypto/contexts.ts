/**
 * Every AES-GCM context (additional authenticated data) a stored ciphertext is bound to, in one file.
 * A context is part of each stored value: changing one makes every ciphertext sealed under the old text
 * unreadable, so test/unit/shared/contexts.test.ts pins them. Add new contexts; never edit one.
 */
export const encryptionContext = {
  /** A signing key's private JWK: opens only as the key with that kid. */
  signingKey: (kid: string) => `signing_key:${kid}`,
  /** A client secret: opens only for that client. */
  clientSecret: (clientId: string) => `client_secret:${clientId}`,
  /** A connection's `options` secrets: open only for that connection. */
  connectionSecrets: (connectionId: string) => `connection_secrets:${connectionId}`,
  /** An API's HS256 signing secret: opens only for that resource server. */
  resourceServerSigningSecret: (resourceServerId: string) => `resource_server_signing_secret:${resourceServerId}`,
  /** An action's secrets (one JSON object of name to value): open only for that action and its versions. */
  actionSecrets: (actionId: string) => `action_secrets:${actionId}`,
  /** A log stream's sink credentials (authorization header, custom headers): open only for that stream. */
  logStreamSink: (streamId: string) => `log_stream_sink:${streamId}`,
  /** A TOTP authentication method's shared secret (base32): opens only as that method. */
  totpSecret: (methodId: string) => `totp_secret:${methodId}`,
  /** A guardian SMS provider's credentials (`auth_token`): open only for that provider name. */
  smsProvider: (provider: string) => `guardian_sms_provider:${provider}`,
  /** A tenant's email provider API key (`/api/v2/emails/provider` credentials.api_key): opens only for that tenant. */
  emailProvider: (tenantId: string) => `email_provider:${tenantId}`,
  /**
   * The text of an email waiting in a tenant's outbox that carries a secret link (a verification email):
   * opens only for that recipient.
   */
  queuedEmailText: (to: string) => `queued_email_text:${to}`,
  /** A per-tenant copy's generated secret (ENCRYPTION_KEY, CONTROL_PLANE_CLIENT_SECRET), kept by the control plane. */
  deploySecret: (tenantId: string, name: string) => `tenant_deploy_secret:${tenantId}:${name}`,
  /** An admin console session's operator token (issue 30): opens only for that session (its cookie's hash). */
  consoleSession: (idHash: string) => `console_session:${idHash}`,
  /** A secret field of a settings document (`captcha` + `recaptcha_v2.secret`): opens only as that field. */
  settingsSecret: (key: string, path: string) => `settings_secret:${key}:${path}`,
  /** The admin console's login transaction cookie (state, PKCE verifier, return path): opens only as that. */
  consoleLogin: () => "console_login_transaction",
  /** The console's "try login" transaction cookie (state, PKCE verifier, nonce) for one tenant: opens only there. */
  consoleTryLogin: (tenantId: string) => `console_try_login:${tenantId}`,
} as const;
