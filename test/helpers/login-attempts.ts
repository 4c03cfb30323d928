import { call, createTenant, mgmt } from "./api";
import { seedClient, type TestClient } from "./flows";

/** The web origin of the application `attemptsTenant` seeds. */
export const ATTEMPTS_ORIGIN = "https://app.example.com";

/** A fresh tenant with one application whose web origin may log in through /co/authenticate. */
export interface AttemptsTenant {
  tenant: string;
  client: TestClient;
  /** A management call on the tenant (the control plane's token, `tenant-id` header). */
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  /** One password attempt through /co/authenticate, from the given client IP (`cf-connecting-ip`). */
  login(username: string, password: string, ip: string): Promise<Response>;
}

/** The tenant the lockout tests (attack protection, user blocks) make their password attempts on. */
export async function attemptsTenant(): Promise<AttemptsTenant> {
  const tenant = await createTenant();
  const host = `${tenant}.localhost:8787`;
  const client = await seedClient(tenant, { web_origins: [ATTEMPTS_ORIGIN] });
  return {
    tenant,
    client,
    admin: (method, path, body) => mgmt(method, path, { headers: { "tenant-id": tenant }, body }),
    login: (username, password, ip) =>
      call("/co/authenticate", {
        method: "POST",
        host,
        headers: { "content-type": "application/json", origin: ATTEMPTS_ORIGIN, "cf-connecting-ip": ip },
        body: JSON.stringify({ client_id: client.client_id, username, password, credential_type: "password" }),
      }),
  };
}

/** An OAuth error answer's `error_description` ("" when there is none). */
export const errorDescription = async (res: Response) => ((await res.json()) as { error_description?: string }).error_description ?? "";
