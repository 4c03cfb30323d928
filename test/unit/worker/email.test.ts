import { env as workerEnv } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AppContext } from "../../../src/worker/context";
import { emailProvider } from "../../../src/worker/email";
import { emailSender } from "../../../src/worker/messaging/senders";
import { settingsOf } from "../../../src/worker/settings";
import { deliveries, hookUrl } from "../../helpers/outbox";

const message = { to: "someone@example.com", subject: "Hello", text: "Hi there", html: "<p>Hi there</p>" };

describe("the email provider (src/worker/email.ts)", () => {
  it("is the development sink by default", () => {
    expect(emailProvider({}).kind).toBe("dev");
  });

  it("http: POSTs the message with the configured sender to the relay", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    const provider = emailProvider({ EMAIL_PROVIDER: "http", EMAIL_HTTP_URL: hookUrl(name), EMAIL_HTTP_TOKEN: "t", EMAIL_FROM: "team@example.com" });
    await provider.send(message);
    const [delivery] = await deliveries(name);
    expect(delivery?.body).toEqual({ from: "team@example.com", ...message });
  });

  it("http: a relay that answers an error is an error, never a silent drop", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    const provider = emailProvider({ EMAIL_PROVIDER: "http", EMAIL_HTTP_URL: hookUrl(name, "fail=1&status=503") });
    await expect(provider.send(message)).rejects.toThrow(/503/);
    await expect(emailProvider({ EMAIL_PROVIDER: "http" }).send(message)).rejects.toThrow(/EMAIL_HTTP_URL/);
  });

  it("sendgrid: sends the message through the SendGrid API the MFA and passwordless emails use", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    const provider = emailProvider({ EMAIL_PROVIDER: "sendgrid", EMAIL_API_KEY: "SG.key", EMAIL_API_BASE: hookUrl(name), EMAIL_FROM: "team@example.com" });
    expect(provider.kind).toBe("sendgrid");
    await provider.send(message);
    const [delivery] = await deliveries(name);
    expect(delivery?.body).toEqual({
      personalizations: [{ to: [{ email: "someone@example.com" }] }],
      from: { email: "team@example.com" },
      subject: "Hello",
      content: [{ type: "text/plain", value: "Hi there" }],
    });
    await expect(emailProvider({ EMAIL_PROVIDER: "sendgrid" }).send(message)).rejects.toThrow(/EMAIL_API_KEY/);
  });

  it("refuses an unknown provider name", () => {
    expect(() => emailProvider({ EMAIL_PROVIDER: "smtp" })).toThrow(/Unknown EMAIL_PROVIDER/);
  });
});

describe("the MFA and passwordless email sender (src/worker/messaging/senders.ts)", () => {
  // The tenant's objects are real (a tenant without an email provider of its own, so the deployment's applies).
  const context = (vars: Record<string, string>) =>
    ({ env: { ...vars, TENANT: workerEnv.TENANT }, var: { settings: settingsOf(vars as unknown as Env), tenant: { id: "t" } } }) as unknown as AppContext;

  it("EMAIL_PROVIDER=http: codes go through the same relay as the invitations", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    const sender = await emailSender(context({ EMAIL_PROVIDER: "http", EMAIL_HTTP_URL: hookUrl(name), EMAIL_FROM: "team@example.com" }));
    await sender?.send({ to: "someone@example.com", subject: "Your code", body: "123456 is your code" });
    const [delivery] = await deliveries(name);
    expect(delivery?.body).toEqual({ from: "team@example.com", to: "someone@example.com", subject: "Your code", text: "123456 is your code" });
  });

  it("without a provider or the development sink nothing can send", async () => {
    expect(await emailSender(context({}))).toBeNull();
  });
});
