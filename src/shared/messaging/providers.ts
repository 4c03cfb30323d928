/**
 * Outgoing SMS and email behind one small interface (issue 12 points 4 and 6): real HTTP providers
 * (Twilio-compatible SMS, SendGrid-compatible email) and a development sink that a person can read. No
 * provider imports anything from the rest of the worker, so each is tested with a recording `fetch`.
 */

/** One message to one recipient. */
export interface OutgoingMessage {
  /** E.164 phone number or email address. */
  to: string;
  subject?: string;
  body: string;
  /** The HTML part (email; a tenant's template), sent beside the text. */
  html?: string;
  /** The sender (email; a tenant's template), `address` or `Name <address>`, instead of the configured one. */
  from?: string;
}

/** `Name <address>` or `address` as SendGrid's `{email, name?}`. */
function sendgridAddress(from: string): { email: string; name?: string } {
  const named = /^\s*(.*?)\s*<([^<>\s]+)>\s*$/.exec(from);
  if (!named) return { email: from.trim() };
  const name = (named[1] ?? "").replace(/^"|"$/g, "");
  return name ? { email: named[2] as string, name } : { email: named[2] as string };
}

/** A way to deliver messages of one channel. Throws {@link DeliveryError} when the provider refuses. */
export interface MessageSender {
  readonly name: string;
  send(message: OutgoingMessage): Promise<void>;
}

/** The provider answered with an error (or could not be reached). */
export class DeliveryError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number | null,
    message: string,
  ) {
    super(message);
    this.name = "DeliveryError";
  }
}

type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** @default 10000 (SPEC §8: outbound calls time out like webhook deliveries) */
export const PROVIDER_TIMEOUT_MS = 10_000;

async function post(provider: string, fetcher: Fetch, url: string, init: RequestInit): Promise<void> {
  let res: Response;
  try {
    res = await fetcher(url, { ...init, method: "POST", signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS) });
  } catch (error) {
    throw new DeliveryError(provider, null, `${provider} could not be reached: ${(error as Error).message}`);
  }
  if (!res.ok) {
    const detail = (await res.text().catch(() => "")).slice(0, 300);
    throw new DeliveryError(provider, res.status, `${provider} refused the message (${res.status}) ${detail}`.trim());
  }
  await res.body?.cancel();
}

/** Twilio's Messages API (and compatible gateways): form POST with HTTP Basic `sid:auth_token`. */
export function twilioSender(
  credentials: { sid: string; authToken: string; from: string | null; messagingServiceSid: string | null },
  apiBase = "https://api.twilio.com",
  fetcher: Fetch = fetch,
): MessageSender {
  return {
    name: "twilio",
    async send(message) {
      const form = new URLSearchParams({ To: message.to, Body: message.body });
      if (credentials.messagingServiceSid) form.set("MessagingServiceSid", credentials.messagingServiceSid);
      else if (credentials.from) form.set("From", credentials.from);
      const url = `${apiBase.replace(/\/$/, "")}/2010-04-01/Accounts/${encodeURIComponent(credentials.sid)}/Messages.json`;
      await post("twilio", fetcher, url, {
        headers: {
          authorization: `Basic ${btoa(`${credentials.sid}:${credentials.authToken}`)}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: form.toString(),
      });
    },
  };
}

/** SendGrid's v3 mail send API (and compatible relays): JSON with a bearer API key. */
export function sendgridSender(credentials: { apiKey: string; from: string }, apiBase = "https://api.sendgrid.com", fetcher: Fetch = fetch): MessageSender {
  return {
    name: "sendgrid",
    async send(message) {
      await post("sendgrid", fetcher, `${apiBase.replace(/\/$/, "")}/v3/mail/send`, {
        headers: { authorization: `Bearer ${credentials.apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          personalizations: [{ to: [{ email: message.to }] }],
          from: sendgridAddress(message.from ?? credentials.from),
          subject: message.subject ?? "Your verification code",
          content: [{ type: "text/plain", value: message.body }, ...(message.html ? [{ type: "text/html", value: message.html }] : [])],
        }),
      });
    },
  };
}

/**
 * The development sink: keeps the message where a developer reads it (the tenant's /__dev/messages) and
 * prints it to the console of `wrangler dev`. Enabled only by DEV_MESSAGE_SINK=1 (`npm start` sets it).
 */
export function devSinkSender(channel: "sms" | "email", keep: (message: OutgoingMessage) => Promise<void>): MessageSender {
  return {
    name: "development",
    async send(message) {
      await keep(message);
      const subject = message.subject ? ` [${message.subject}]` : "";
      console.log(`[dev-sink] ${channel} to ${message.to}${subject}: ${message.body}`);
    },
  };
}
