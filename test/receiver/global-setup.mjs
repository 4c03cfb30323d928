import { startReceiver } from "../../scripts/webhook-receiver.mjs";

/** vitest globalSetup: one webhook receiver for the run; tests read its URL with inject("receiverUrl"). */
export default async function setup({ provide }) {
  const receiver = await startReceiver();
  provide("receiverUrl", receiver.url);
  return () => receiver.close();
}
