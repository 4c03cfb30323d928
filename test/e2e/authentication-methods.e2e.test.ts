import { ManagementClient, ManagementError } from "auth0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";

/** Issue 9 point 6 end to end: the reference platform's SDK manages a user's authentication methods unmodified. */
describe("authentication methods through the auth0 SDK", () => {
  let server: RunningServer;
  let admin: ManagementClient;
  let userId: string;

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const app = await admin.clients.create({ name: "Methods app", app_type: "regular_web", callbacks: ["https://app.example.com/cb"] });
    const signup = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: app.client_id, email: "methods@example.com", password: `Pw-${crypto.randomUUID()}`, connection: "Username-Password-Authentication" }),
    });
    expect(signup.status).toBe(200);
    userId = ((await signup.json()) as { id: string }).id;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("creates, lists, reads and deletes TOTP, phone and passkey methods; the TOTP secret never comes back", async () => {
    const methods = admin.users.authenticationMethods;
    const totp = await methods.create(userId, { type: "totp", totp_secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", name: "Authenticator" });
    expect(totp.type).toBe("totp");
    expect(totp.totp_secret).toBeUndefined();
    const phone = await methods.create(userId, { type: "phone", phone_number: "+14155550100" });
    expect(phone.phone_number).toBe("+14155550100");
    const passkey = await methods.create(userId, {
      type: "passkey",
      key_id: "AQIDBAUGBwgJCgsMDQ4PEA",
      public_key: "pQECAyYgASFYIBmV0Wb2vq6ghsJ0",
      credential_backed_up: true,
      transports: ["internal"],
    });
    expect(passkey).toMatchObject({ key_id: "AQIDBAUGBwgJCgsMDQ4PEA", credential_backed_up: true, transports: ["internal"] });

    const page = await methods.list(userId);
    expect(page.data.map((m) => m.type)).toEqual(["totp", "phone", "passkey"]);
    expect(JSON.stringify(page.data)).not.toContain("JBSW");
    const read = await methods.get(userId, String(phone.id));
    expect(read).toMatchObject({ id: phone.id, type: "phone", phone_number: "+14155550100", confirmed: true });

    await methods.delete(userId, String(totp.id));
    expect((await methods.list(userId)).data.map((m) => m.type)).toEqual(["phone", "passkey"]);
    const missing = await methods.get(userId, String(totp.id)).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ManagementError);
    expect((missing as ManagementError).statusCode).toBe(404);

    await methods.deleteAll(userId);
    expect((await methods.list(userId)).data).toEqual([]);
  });
});
