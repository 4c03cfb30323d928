import { randomToken } from "../../../shared/crypto/random";
import type { AppContext } from "../../context";
import { tenantObject } from "../../tenant/stubs";
import { configOf } from "../connection";
import { sendMessage, shellFor } from "../render";
import { hashSecret } from "../session";
import { mfaEntry, prepareMfa, setMfaCookie } from "./context";

const TICKET_PAGES = {
  expired: { status: 403, code: "TICKET_EXPIRED", title: "Link expired", message: "This enrollment link has expired. Ask for a new one." },
  redeemed: { status: 403, code: "TICKET_ALREADY_USED", title: "Link already used", message: "This enrollment link was already used. Ask for a new one." },
  unknown: { status: 400, code: "INVALID_TICKET", title: "Invalid link", message: "This enrollment link is not valid." },
} as const;

/**
 * GET /u2/guardian/enroll?ticket=<ticket_id>[&tenant_id=] (SPEC §3.4, §4.1): redeems the ticket exactly once
 * (one conditional update in the tenant object, which starts this browser's enrollment in the same commit),
 * then sends the browser to the enrollment. Expired tickets answer 403 (SPEC §7). The policy does not matter.
 */
export async function enrollTicketPage(c: AppContext): Promise<Response> {
  const config = await configOf(c);
  const ticket = c.req.query("ticket") ?? "";
  const fail = (reason: keyof typeof TICKET_PAGES) => {
    const { status, ...page } = TICKET_PAGES[reason];
    return sendMessage(c, shellFor(c, config), page, status);
  };
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(ticket)) return fail("unknown");
  const { record, cookie } = await prepareMfa("ticket", "", null, randomToken(24));
  const { user_id: _user, kind: _kind, login_session_id: _ls, ...transaction } = record;
  const redeemed = await tenantObject(c.env, c.var.tenant.id).guardian().redeemTicket(await hashSecret(ticket), transaction);
  if (!redeemed.ok) return fail(redeemed.reason);
  setMfaCookie(c, cookie);
  return c.redirect(mfaEntry(c, record.id), 302);
}
