/**
 * Crash test of the outbox (issue 8): no committed event is ever lost, whatever moment the server dies.
 *
 *   node scripts/crash-test.mjs [--writes 1000] [--concurrency 6]
 *
 * 1. Starts a webhook receiver (scripts/webhook-receiver.mjs) and `wrangler dev` on a fresh state folder.
 * 2. Registers a post-user-registration webhook to the receiver, then runs N writes in turn: a management
 *    write (POST /api/v2/clients: one `sapi` log event), a sign-up (POST /dbconnections/signup: one `ss` log
 *    event and one `hook.post-user-registration` event), and every fourth an interactive login with its code
 *    redemption (issue 31: /authorize, the login form, its POST, then /oauth/token: the `s` and `seacft` log
 *    events), each request of a login carrying a unique User-Agent that its log rows record.
 * 3. Kills the server's whole process group with SIGKILL when half of the writes have answered, while
 *    writes and webhook deliveries are in flight, restarts it on the same state folder and a new port, and
 *    sends the remaining writes.
 * 4. Waits for the relay to catch up (events claimed when the server died wait for their claim lease: relay.ts
 *    `leaseMs`, sized to the claimed events' destinations and the actions bound: 30 s for these hook events) and
 *    checks: every write that answered 2xx has its log row (a login that reached the callback its `s`, a code
 *    exchange that answered 200 its `seacft`), every code redeemed before the kill is refused when replayed
 *    after it (single use survives), every sign-up that answered 2xx reached the receiver at least once, duplicates carry the same Idempotency-Key, and (reading the objects' SQLite
 *    files) nothing is left unprocessed, claimed or dead-lettered. Prints the counts; exits 1 on failure.
 */
import { parseArgs } from "node:util";
import { crashServer } from "./crash-server.mjs";
import { killGroup } from "./process-group.mjs";
import { startReceiver } from "./webhook-receiver.mjs";

const { values } = parseArgs({ options: { writes: { type: "string", default: "1000" }, concurrency: { type: "string", default: "6" } } });
const WRITES = Number(values.writes);
const CONCURRENCY = Number(values.concurrency);
/** Longest wait for the relay after the restart: the claim lease (relay.ts `leaseMs`, 30 s for the hook events here) plus alarm delays. */
const CATCH_UP_MS = 300_000;

const { start, managementToken, forEachTenantDatabase, remove } = await crashServer("gatehouse-crash-");
const PASSWORD = "crash-test-password-1";
const CALLBACK = "http://localhost/callback";

/**
 * One interactive login and its code redemption, every request with its own User-Agent (the log rows record
 * it): pushes the login's agent to `logins` once the callback got its code (the login committed), and the
 * exchange's agent with the code to `exchanges` once /oauth/token answered 200 (the redemption committed).
 */
async function loginAndRedeem(base, client, email, i, logins, exchanges) {
  const cookies = new Map();
  const agent = `crash-login-${i}`;
  const go = async (path, init = {}) => {
    const res = await fetch(new URL(path, base), {
      redirect: "manual",
      ...init,
      headers: { "user-agent": agent, cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "), ...(init.headers ?? {}) },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair.indexOf("=");
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return res;
  };
  const query = new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" });
  const start = await go(`/authorize?${query}`);
  const loginPath = start.headers.get("location") ?? "";
  const page = await go(loginPath);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? "";
  const posted = await go(loginPath, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }) });
  const code = new URL(posted.headers.get("location") ?? "/", base).searchParams.get("code");
  if (!code) throw new Error(`login ${i}: HTTP ${posted.status}`);
  logins.push(agent);
  const exchangeAgent = `crash-code-${i}`;
  const res = await fetch(new URL("/oauth/token", base), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": exchangeAgent },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }),
  });
  if (res.status !== 200) throw new Error(`code exchange ${i}: HTTP ${res.status}`);
  exchanges.push({ agent: exchangeAgent, code });
}

const api = (base, token) => async (method, path, body) => {
  const res = await fetch(`${base}/api/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json().catch(() => null) };
};

/** Outbox rows of every tenant object, read from their SQLite files (read-only; also while wrangler runs). */
async function outboxCounts() {
  const outbox = { unprocessed: 0, claimed: 0, deadLettered: 0, processed: 0 };
  await forEachTenantDatabase("outbox", (db) => {
    const row = db.prepare(`SELECT
      SUM(processed_at IS NULL) AS unprocessed, SUM(claim_id IS NOT NULL OR lease_until IS NOT NULL) AS claimed,
      SUM(dead_lettered_at IS NOT NULL) AS dead, SUM(processed_at IS NOT NULL) AS processed FROM outbox`).get();
    outbox.unprocessed += row.unprocessed ?? 0;
    outbox.claimed += row.claimed ?? 0;
    outbox.deadLettered += row.dead ?? 0;
    outbox.processed += row.processed ?? 0;
  });
  return outbox;
}

const receiver = await startReceiver();
let server = await start();
const failures = [];
try {
  let call = api(server.base, await managementToken(server.base));
  const hook = await call("POST", "/hooks", { trigger_id: "post-user-registration", url: `${receiver.url}/hook/crash?delay=50` });
  const app = await call("POST", "/clients", { name: "crash-app", app_type: "spa", token_endpoint_auth_method: "none" });
  if (hook.status !== 201 || app.status !== 201) throw new Error(`setup failed: ${hook.status} ${app.status}`);
  const signupClient = app.body.client_id;
  // Issue 31: a confidential web app, and users to log in (signed up before the load).
  const web = await call("POST", "/clients", { name: "crash-web", app_type: "regular_web", callbacks: [CALLBACK], grant_types: ["authorization_code"] });
  if (web.status !== 201) throw new Error(`setup failed: ${web.status}`);
  const loginUsers = [];
  for (let u = 0; u < CONCURRENCY; u++) {
    const email = `crash-login-${u}@example.com`;
    const res = await fetch(`${server.base}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: signupClient, email, password: PASSWORD, connection: "Username-Password-Authentication" }),
    });
    if (!res.ok) throw new Error(`setup sign-up failed: ${res.status}`);
    loginUsers.push(email);
  }
  const okLogins = [];
  const okExchanges = [];

  const okClients = [];
  const okUsers = [];
  let answered = 0;
  let refused = 0;
  let lost = 0;
  let killed = false;
  const write = async (i) => {
    const { base } = server;
    try {
      if (i % 4 === 3) {
        await loginAndRedeem(base, web.body, loginUsers[i % loginUsers.length], i, okLogins, okExchanges);
      } else if (i % 2 === 0) {
        const res = await call("POST", "/clients", { name: `crash-${i}` });
        if (res.status === 201) okClients.push(res.body.client_id);
        else refused++;
      } else {
        const res = await fetch(`${base}/dbconnections/signup`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ client_id: signupClient, email: `crash-${i}@example.com`, password: PASSWORD, connection: "Username-Password-Authentication" }),
        });
        if (res.ok) okUsers.push((await res.json()).id);
        else refused++;
      }
    } catch (error) {
      // A login refused with an answer (not cut off by the kill) counts as refused.
      if (/^(login|code exchange) \d+: HTTP/.test(error?.message ?? "")) refused++;
      else lost++;
    }
    answered++;
    if (!killed && answered >= WRITES / 2) {
      killed = true;
      killGroup(server.pid, "SIGKILL");
    }
  };
  let next = 0;
  const writeWhile = (condition) =>
    Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < WRITES && condition()) await write(next++);
    }));
  await writeWhile(() => !killed);
  await server.stop();
  console.log(`killed with SIGKILL after ${answered} answers: ${okClients.length + okUsers.length} 2xx writes, ${okExchanges.length} logins redeemed, ${refused} refused, ${lost} cut off`);

  // Same state folder, new port; the writes carry on against the restarted server.
  server = await start();
  call = api(server.base, await managementToken(server.base));
  await writeWhile(() => true);
  console.log(`after the restart: ${WRITES} writes sent in all, ${okClients.length + okUsers.length} answered 2xx, ${okExchanges.length} logins redeemed, ${refused} refused, ${lost} cut off by the kill`);
  // Single use survives the kill: every code redeemed (200) before or after it is refused when replayed.
  let replayedAccepted = 0;
  for (const { code } of okExchanges) {
    const res = await fetch(new URL("/oauth/token", server.base), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: web.body.client_id, client_secret: web.body.client_secret }),
    });
    if (res.status === 200) replayedAccepted++;
  }
  const deadline = Date.now() + CATCH_UP_MS;
  let state;
  for (;;) {
    const logged = { clients: new Set(), users: new Set(), logins: new Set(), exchanges: new Set() };
    let from = "";
    for (;;) {
      const page = await call("GET", `/logs?take=100&q=${encodeURIComponent("type:sapi OR type:ss OR type:s OR type:seacft")}${from ? `&from=${from}` : ""}`);
      for (const log of page.body.logs) {
        if (log.details.event_type === "client.created") logged.clients.add(log.details.target.id);
        if (log.type === "ss") logged.users.add(log.user_id);
        if (log.type === "s") logged.logins.add(log.user_agent);
        if (log.type === "seacft") logged.exchanges.add(log.user_agent);
      }
      if (!page.body.next || !page.body.logs.length) break;
      from = page.body.next;
    }
    const delivered = receiver.deliveries.get("crash") ?? [];
    const byUser = new Map();
    for (const d of delivered) {
      const id = d.body?.data?.user?.user_id;
      if (!byUser.has(id)) byUser.set(id, new Set());
      byUser.get(id).add(d.key);
    }
    state = {
      missingClientLogs: okClients.filter((id) => !logged.clients.has(id)),
      missingUserLogs: okUsers.filter((id) => !logged.users.has(id)),
      missingLoginLogs: okLogins.filter((agent) => !logged.logins.has(agent)),
      missingExchangeLogs: okExchanges.filter((e) => !logged.exchanges.has(e.agent)).map((e) => e.agent),
      undelivered: okUsers.filter((id) => !byUser.has(id)),
      keyMismatches: [...byUser.values()].filter((keys) => keys.size > 1).length,
      deliveries: delivered.length,
      distinctEvents: new Set(delivered.map((d) => d.key)).size,
      bodyKeyMismatches: delivered.filter((d) => d.body?.id !== d.key).length,
    };
    // Events of writes cut off by the kill may still be leased: wait until the relay released them too.
    const pending = await outboxCounts();
    const missingLogs = state.missingClientLogs.length + state.missingUserLogs.length + state.missingLoginLogs.length + state.missingExchangeLogs.length;
    const done = !missingLogs && !state.undelivered.length && !pending.unprocessed && !pending.claimed;
    if (done || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const caughtUpAt = Date.now();
  await server.stop();
  const outbox = await outboxCounts();

  console.log(`caught up ${Math.round((caughtUpAt - deadline + CATCH_UP_MS) / 1000)} s after the restart`);
  console.log(`2xx writes: ${okClients.length} management (sapi), ${okUsers.length} sign-ups (ss + webhook), ${okLogins.length} logins (s), ${okExchanges.length} code redemptions (seacft)`);
  console.log(`log rows missing: ${state.missingClientLogs.length + state.missingUserLogs.length} of writes, ${state.missingLoginLogs.length} of logins, ${state.missingExchangeLogs.length} of code redemptions`);
  console.log(`redeemed codes accepted again when replayed after the restart: ${replayedAccepted} of ${okExchanges.length}`);
  console.log(`webhook: ${state.deliveries} deliveries of ${state.distinctEvents} events; sign-ups never delivered: ${state.undelivered.length}; ` +
    `redeliveries: ${state.deliveries - state.distinctEvents}; users seen with more than one Idempotency-Key: ${state.keyMismatches}; body id != key: ${state.bodyKeyMismatches}`);
  console.log(`outbox after restart: ${outbox.processed} processed, ${outbox.unprocessed} unprocessed, ${outbox.claimed} still claimed, ${outbox.deadLettered} dead-lettered`);
  if (state.missingClientLogs.length + state.missingUserLogs.length) failures.push("a 2xx write has no log row");
  if (state.missingLoginLogs.length) failures.push("a completed login has no `s` log row");
  if (state.missingExchangeLogs.length) failures.push("a code redemption that answered 200 has no `seacft` log row");
  if (replayedAccepted) failures.push("a redeemed code was accepted again after the crash");
  if (!okLogins.length || !okExchanges.length) failures.push("no login or code redemption completed");
  if (state.undelivered.length) failures.push("a sign-up event never reached the receiver");
  if (state.keyMismatches || state.bodyKeyMismatches) failures.push("a redelivery changed its Idempotency-Key");
  if (outbox.unprocessed || outbox.claimed || outbox.deadLettered) failures.push("events left unprocessed, claimed or dead-lettered");
} finally {
  await server.stop();
  await receiver.close();
  await remove();
}
if (failures.length) {
  console.error(`CRASH TEST FAILED: ${failures.join("; ")}`);
  process.exit(1);
}
console.log("crash test passed");
