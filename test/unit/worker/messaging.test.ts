import { describe, expect, it } from "vitest";
import { DeliveryError, devSinkSender, sendgridSender, twilioSender } from "../../../src/worker/messaging/providers";

/** Issue 12 points 4 and 6: the real providers speak their APIs' wire formats; failures are DeliveryError. */

function recorder(status = 201) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetcher = async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    return new Response(status < 300 ? "{}" : '{"message":"bad number"}', { status });
  };
  return { calls, fetcher };
}

describe("messaging providers", () => {
  it("Twilio: form POST to Messages.json with Basic sid:auth_token, To, From and Body", async () => {
    const { calls, fetcher } = recorder();
    await twilioSender({ sid: "AC123", authToken: "tok", from: "+14155550100", messagingServiceSid: null }, "https://api.twilio.test/", fetcher).send({ to: "+447700900123", body: "123456 is your code" });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.url).toBe("https://api.twilio.test/2010-04-01/Accounts/AC123/Messages.json");
    const headers = new Headers(calls[0]?.init.headers);
    expect(headers.get("authorization")).toBe(`Basic ${btoa("AC123:tok")}`);
    expect(Object.fromEntries(new URLSearchParams(String(calls[0]?.init.body)))).toEqual({ To: "+447700900123", From: "+14155550100", Body: "123456 is your code" });
  });

  it("Twilio: a messaging service replaces From; a refusal is a DeliveryError with the status", async () => {
    const { calls, fetcher } = recorder(400);
    const sender = twilioSender({ sid: "AC1", authToken: "t", from: "+14155550100", messagingServiceSid: "MG1" }, undefined, fetcher);
    const error = await sender.send({ to: "+1", body: "x" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).status).toBe(400);
    expect(new URLSearchParams(String(calls[0]?.init.body)).get("MessagingServiceSid")).toBe("MG1");
    expect(new URLSearchParams(String(calls[0]?.init.body)).has("From")).toBe(false);
  });

  it("SendGrid: JSON v3 mail send with a bearer key", async () => {
    const { calls, fetcher } = recorder(202);
    await sendgridSender({ apiKey: "SG.key", from: "no-reply@example.com" }, "https://sg.test", fetcher).send({ to: "a@example.com", subject: "Code", body: "123456" });
    expect(calls[0]?.url).toBe("https://sg.test/v3/mail/send");
    expect(new Headers(calls[0]?.init.headers).get("authorization")).toBe("Bearer SG.key");
    expect(JSON.parse(String(calls[0]?.init.body))).toEqual({
      personalizations: [{ to: [{ email: "a@example.com" }] }],
      from: { email: "no-reply@example.com" },
      subject: "Code",
      content: [{ type: "text/plain", value: "123456" }],
    });
  });

  it("SendGrid: a template's HTML part goes beside the text, and its named sender as {email, name}", async () => {
    const { calls, fetcher } = recorder(202);
    const sender = sendgridSender({ apiKey: "SG.key", from: "no-reply@example.com" }, "https://sg.test", fetcher);
    await sender.send({ to: "a@example.com", subject: "Reset", body: "Reset (https://x)", html: '<a href="https://x">Reset</a>', from: "Acme Help <help@acme.example>" });
    const sent = JSON.parse(String(calls[0]?.init.body));
    expect(sent.from).toEqual({ email: "help@acme.example", name: "Acme Help" });
    expect(sent.content).toEqual([
      { type: "text/plain", value: "Reset (https://x)" },
      { type: "text/html", value: '<a href="https://x">Reset</a>' },
    ]);
  });

  it("an unreachable provider is a DeliveryError too", async () => {
    const sender = twilioSender({ sid: "AC1", authToken: "t", from: "+1", messagingServiceSid: null }, undefined, async () => {
      throw new TypeError("connection refused");
    });
    await expect(sender.send({ to: "+1", body: "x" })).rejects.toBeInstanceOf(DeliveryError);
  });

  it("the development sink keeps the message", async () => {
    const kept: unknown[] = [];
    await devSinkSender("sms", async (m) => {
      kept.push(m);
    }).send({ to: "+14155550100", body: "hello" });
    expect(kept).toEqual([{ to: "+14155550100", body: "hello" }]);
  });
});
