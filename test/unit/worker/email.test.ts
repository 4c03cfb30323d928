import { env as workerEnv } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AppContext } from "../../../src/worker/context";
import { mailRoute } from "../../../src/shared/messaging/mail-route";
import { type EmailProvider, emailProvider } from "../../../src/worker/email";
import { emailSender } from "../../../src/worker/messaging/senders";
import { settingsOf } from "../../../src/worker/settings";
import { deliveries, hookUrl } from "../../helpers/outbox";

const message = { to: "someone@example.com", subject: "Hello", text: "Hi there", html: "<p>Hi there</p>" };

const provider = (env: Record<string, string>) => emailProvider(env) as EmailProvider;

describe("the deployment's one mail rule (src/shared/messaging/mail-route.ts)", () => {
  it("the development sink when EMAIL_PROVIDER=dev, or no provider and DEV_MESSAGE_SINK=1; no real provider then", () => {
    expect(mailRoute({ EMAIL_PROVIDER: "dev" }).kind).toBe("dev");
    expect(mailRoute({ DEV_MESSAGE_SINK: "1" }).kind).toBe("dev");
    expect(emailProvider({ EMAIL_PROVIDER: "dev" })).toBeNull();
  });

  it("nothing configured: no way out, with the reason (a send is refused, never dropped)", () => {
    const route = mailRoute({});
    expect(route).toMatchObject({ kind: "none", reason: expect.stringMatching(/No email provider/) });
    expect(emailProvider({})).toBeNull();
  });

  it("a real provider wins over the development sink", () => {
    expect(mailRoute({ EMAIL_PROVIDER: "sendgrid", EMAIL_API_KEY: "k", DEV_MESSAGE_SINK: "1" }).kind).toBe("sendgrid");
    expect(mailRoute({ EMAIL_PROVIDER: "http", EMAIL_HTTP_URL: "https://relay.example/send", DEV_MESSAGE_SINK: "1" }).kind).toBe("http");
  });
});

describe("the email provider (src/worker/email.ts)", () => {
  it("http: POSTs the message with the configured sender to the relay", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    await provider({ EMAIL_PROVIDER: "http", EMAIL_HTTP_URL: hookUrl(name), EMAIL_HTTP_TOKEN: "t", EMAIL_FROM: "team@example.com" }).send(message);
    const [delivery] = await deliveries(name);
    expect(delivery?.body).toEqual({ from: "team@example.com", ...message });
  });

  it("http: a relay that answers an error is an error, never a silent drop", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    await expect(provider({ EMAIL_PROVIDER: "http", EMAIL_HTTP_URL: hookUrl(name, "fail=1&status=503") }).send(message)).rejects.toThrow(/503/);
    await expect(provider({ EMAIL_PROVIDER: "http" }).send(message)).rejects.toThrow(/EMAIL_HTTP_URL/);
  });

  it("sendgrid: sends the message through the SendGrid API the MFA and passwordless emails use", async () => {
    const name = `mail-${crypto.randomUUID().slice(0, 8)}`;
    const sendgrid = provider({ EMAIL_PROVIDER: "sendgrid", EMAIL_API_KEY: "SG.key", EMAIL_API_BASE: hookUrl(name), EMAIL_FROM: "team@example.com" });
    expect(sendgrid.kind).toBe("sendgrid");
    await sendgrid.send(message);
    const [delivery] = await deliveries(name);
    expect(delivery?.body).toEqual({
      personalizations: [{ to: [{ email: "someone@example.com" }] }],
      from: { email: "team@example.com" },
      subject: "Hello",
      // The HTML part goes beside the text (issue 29 point 4: templates are HTML).
      content: [
        { type: "text/plain", value: "Hi there" },
        { type: "text/html", value: "<p>Hi there</p>" },
      ],
    });
    await expect(provider({ EMAIL_PROVIDER: "sendgrid" }).send(message)).rejects.toThrow(/EMAIL_API_KEY/);
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
