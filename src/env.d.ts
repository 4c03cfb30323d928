/** Secrets and optional variables that `wrangler types` cannot see (they live in .dev.vars or the dashboard). */
interface __BaseEnv_Env {
  ENCRYPTION_KEY?: string;
  CONTROL_PLANE_CLIENT_SECRET?: string;
  ADMIN_EMAIL?: string;
  ADMIN_PASSWORD?: string;
  MANAGEMENT_ALLOWED_ORIGINS?: string;
  BENCH_ROUTES?: string;
  EMAIL_PROVIDER?: string;
  EMAIL_FROM?: string;
  EMAIL_HTTP_URL?: string;
  EMAIL_HTTP_TOKEN?: string;
}
