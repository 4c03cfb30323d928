import { describe, expect, it } from "vitest";
import { emailProvider } from "../../../src/worker/email";
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

  it("refuses an unknown provider name", () => {
    expect(() => emailProvider({ EMAIL_PROVIDER: "smtp" })).toThrow(/Unknown EMAIL_PROVIDER/);
  });
});
