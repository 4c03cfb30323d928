/** Secrets and optional variables that `wrangler types` cannot see (they live in .dev.vars or the dashboard). */
interface __BaseEnv_Env {
  ENCRYPTION_KEY?: string;
  CONTROL_PLANE_CLIENT_SECRET?: string;
  ADMIN_EMAIL?: string;
  ADMIN_PASSWORD?: string;
  MANAGEMENT_ALLOWED_ORIGINS?: string;
  BENCH_ROUTES?: string;
  /** "1" (the bench) or tenant id prefixes (tests): objects meter their round trips and transactions (src/objects/meter.ts). */
  OBJECT_METER?: string;
  /**
   * "1": tenant-chosen URLs (webhooks, log streams, back-channel logout) may point at loopback addresses and
   * `localhost` (src/shared/egress-policy.ts). Development only: `npm start`, the e2e server and the tests set
   * it; unset (off) in production.
   */
  ALLOW_LOOPBACK_EGRESS?: string;
  /** "1": the development message sink (SMS and email kept in the tenant, shown at /__dev/messages and in the console). */
  DEV_MESSAGE_SINK?: string;
  /** Outgoing email (src/worker/email.ts, src/worker/messaging): "dev" (default), "http" or "sendgrid". */
  EMAIL_PROVIDER?: string;
  EMAIL_FROM?: string;
  /** EMAIL_PROVIDER=http: the relay's URL and bearer token. */
  EMAIL_HTTP_URL?: string;
  EMAIL_HTTP_TOKEN?: string;
  /** EMAIL_PROVIDER=sendgrid: the API key, and the API's base URL (tests point it at a local receiver). */
  EMAIL_API_KEY?: string;
  EMAIL_API_BASE?: string;
  /** Base URL of the Twilio-compatible SMS API. @default https://api.twilio.com */
  TWILIO_API_BASE?: string;
  /** The outbox relay's metrics sink (src/objects/tenant/metrics.ts): "analytics", "log" or unset (none). */
  OUTBOX_METRICS?: string;
  /** Per-tenant deployments (issue 16, docs/deployments.md). */
  DEPLOYMENT_WORKFLOW?: Workflow<{ operation_id: string }>;
  BULK_UPGRADE_WORKFLOW?: Workflow<import("./worker/deploy/bulk").BulkUpgradeParams>;
  /** Local namespace supervisor (Cloudflare-API-shaped); production leaves it unset and sets the three below. */
  NAMESPACE_API_URL?: string;
  CLOUDFLARE_API_TOKEN?: string;
  CLOUDFLARE_ACCOUNT_ID?: string;
  DISPATCH_NAMESPACE?: string;
  /** Where `npm run release` output is served (default `{NAMESPACE_API_URL}/releases`). */
  RELEASE_STORE_URL?: string;
  /** Step retries of the deployment workflow. @default 3, 2000 */
  DEPLOY_STEP_RETRIES?: string;
  DEPLOY_STEP_RETRY_DELAY_MS?: string;
  /** A running operation whose journal has not moved this long is restarted (crash recovery). @default 120000 */
  DEPLOY_STALE_AFTER_MS?: string;
  /** Set in a tenant's copy only: the release it runs and its deployment token (upload-secrets). */
  WORKER_VERSION?: string;
  BUNDLE_CONFIGURATION?: string;
  DEPLOY_TOKEN?: string;
  /** Dispatch-namespace script name template. @default "tenant-{tenant_id}-auth" */
  SCRIPT_NAME_TEMPLATE?: string;
}
