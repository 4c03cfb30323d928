/**
 * Crash test of bulk user import (issue 14 point 5): every valid row is imported exactly once and every
 * invalid row reported, even when the server dies with SIGKILL while chunks are being committed.
 *
 *   node scripts/import-crash.mjs [--users 100000] [--invalid-every 97] [--kill-at 0.4]
 *
 * 1. Generates N users (every `invalid-every`-th row invalid: alternately an unsupported md5 hash and a
 *    malformed email; every 10th valid row carries a bcrypt hash) and splits them into files of at most
 *    500 KB, the reference platform's limit per job.
 * 2. Starts `wrangler dev` on a fresh state folder, posts the first half of the files as import jobs
 *    (POST /api/v2/jobs/users-imports, multipart), and kills the server's process group with SIGKILL once
 *    about `kill-at` of those rows are committed, while the alarm is working through chunks.
 * 3. Restarts it on the same state folder (a new port), posts the other half, and polls GET /jobs/{id} until
 *    every job has settled.
 * 4. Checks, reading the tenant object's SQLite files once the server is stopped: users = valid rows, one per
 *    email (exactly once); row errors = invalid rows; no job left pending or processing; the jobs' summaries
 *    agree. Prints the figures; exits 1 on failure.
 */
import { parseArgs } from "node:util";
import bcrypt from "bcryptjs";
import { crashServer } from "./crash-server.mjs";
import { killGroup } from "./process-group.mjs";

const { values } = parseArgs({
  options: { users: { type: "string", default: "100000" }, "invalid-every": { type: "string", default: "97" }, "kill-at": { type: "string", default: "0.4" } },
});
const USERS = Number(values.users);
const INVALID_EVERY = Number(values["invalid-every"]);
const KILL_AT = Number(values["kill-at"]);
const FILE_MAX_BYTES = 500 * 1024;
/** Longest wait for all jobs to settle after the restart. */
const SETTLE_MS = 30 * 60_000;
const DB = "Username-Password-Authentication";
const run = Date.now().toString(36);

const { start, managementToken, forEachTenantDatabase, remove } = await crashServer("gatehouse-import-crash-");

// 1. The users, and the files (greedy packing under 500 KB).
const hashes = Array.from({ length: 4 }, (_, k) => bcrypt.hashSync(`Import-Pw-${k}`, 4));
let invalid = 0;
const rows = [];
for (let i = 0; i < USERS; i++) {
  const email = `imp-${i}-${run}@example.com`;
  if (i % INVALID_EVERY === INVALID_EVERY - 1) {
    invalid++;
    rows.push(invalid % 2 ? { email, custom_password_hash: { algorithm: "md5", hash: { value: "5f4dcc3b5aa765d61d8327deb882cf99", encoding: "hex" } } } : { email: `imp-${i}-not-an-email` });
  } else {
    rows.push({ email, given_name: `Imp ${i}`, user_metadata: { n: i }, ...(i % 10 === 0 ? { password_hash: hashes[i % 4] } : {}) });
  }
}
const files = [];
let current = [];
let size = 2;
for (const row of rows) {
  const text = JSON.stringify(row);
  if (size + text.length + 1 > FILE_MAX_BYTES && current.length) {
    files.push(`[${current.join(",")}]`);
    current = [];
    size = 2;
  }
  current.push(text);
  size += text.length + 1;
}
if (current.length) files.push(`[${current.join(",")}]`);
const valid = USERS - invalid;
console.log(`${USERS} users (${valid} valid, ${invalid} invalid) in ${files.length} files of at most ${FILE_MAX_BYTES} bytes`);

async function connectionId(base, token) {
  const res = await fetch(`${base}/api/v2/connections?name=${DB}`, { headers: { authorization: `Bearer ${token}` } });
  const list = await res.json();
  return (Array.isArray(list) ? list : list.connections).find((c) => c.name === DB).id;
}

async function postFile(base, token, connection, text) {
  const form = new FormData();
  form.append("users", new Blob([text], { type: "application/json" }), "users.json");
  form.append("connection_id", connection);
  form.append("send_completion_email", "false");
  const res = await fetch(`${base}/api/v2/jobs/users-imports`, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: form });
  if (res.status !== 201) throw new Error(`import: ${res.status} ${await res.text()}`);
  return (await res.json()).id;
}

const getJob = async (base, token, id) => (await fetch(`${base}/api/v2/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } })).json();

/** Rows committed so far across the jobs (from their summaries). */
async function committed(base, token, ids) {
  let n = 0;
  for (const id of ids) {
    const job = await getJob(base, token, id);
    n += (job.summary?.inserted ?? 0) + (job.summary?.updated ?? 0) + (job.summary?.failed ?? 0);
  }
  return n;
}

/** Retries while workerd's shutdown still holds a file lock (SQLITE_BUSY). */
async function storedCounts() {
  for (let attempt = 0; ; attempt++) {
    try {
      return await readCounts();
    } catch (error) {
      if (error.errcode !== 5 || attempt >= 30) throw error;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

/** Users, row errors and active jobs of every tenant object, read from their SQLite files (server stopped). */
async function readCounts() {
  const out = { users: 0, distinctEmails: 0, errors: 0, active: 0, completed: 0, failed: 0, inserted: 0, summaryFailed: 0 };
  await forEachTenantDatabase("jobs", (db) => {
    const u = db.prepare("SELECT count(*) AS n, count(DISTINCT email) AS d FROM users WHERE email LIKE ?").get(`imp-%-${run}@example.com`);
    out.users += u.n;
    out.distinctEmails += u.d;
    out.errors += db.prepare("SELECT count(*) AS n FROM job_errors").get().n;
    const j = db.prepare(`SELECT SUM(status IN ('pending', 'processing')) AS active, SUM(status = 'completed') AS completed,
      SUM(status = 'failed') AS failed, SUM(inserted) AS inserted, SUM(failed) AS f FROM jobs WHERE type = 'users_import'`).get();
    out.active += j.active ?? 0;
    out.completed += j.completed ?? 0;
    out.failed += j.failed ?? 0;
    out.inserted += j.inserted ?? 0;
    out.summaryFailed += j.f ?? 0;
  });
  return out;
}

const failures = [];
let server = await start();
try {
  let token = await managementToken(server.base);
  const connection = await connectionId(server.base, token);
  const half = Math.ceil(files.length / 2);
  const ids = [];
  const startedAt = Date.now();
  for (const text of files.slice(0, half)) ids.push(await postFile(server.base, token, connection, text));
  const firstRows = files.slice(0, half).reduce((n, f) => n + JSON.parse(f).length, 0);
  console.log(`posted ${half} jobs (${firstRows} rows staged) in ${Date.now() - startedAt} ms`);
  let before = 0;
  for (;;) {
    before = await committed(server.base, token, ids);
    if (before >= firstRows * KILL_AT) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  killGroup(server.pid, "SIGKILL");
  await server.stop();
  console.log(`killed with SIGKILL after ${before} of ${firstRows} staged rows were reported committed`);

  server = await start();
  token = await managementToken(server.base);
  for (const text of files.slice(half)) ids.push(await postFile(server.base, token, connection, text));
  console.log(`after the restart: posted the other ${files.length - half} jobs`);
  const deadline = Date.now() + SETTLE_MS;
  let settled = [];
  for (;;) {
    settled = await Promise.all(ids.map((id) => getJob(server.base, token, id)));
    if (settled.every((j) => j.status === "completed" || j.status === "failed") || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const seconds = (Date.now() - startedAt) / 1000;
  const sum = settled.reduce((acc, j) => ({ inserted: acc.inserted + j.summary.inserted, failed: acc.failed + j.summary.failed, total: acc.total + j.summary.total }), { inserted: 0, failed: 0, total: 0 });
  console.log(`all ${ids.length} jobs settled ${seconds.toFixed(1)} s after the first post: ${sum.inserted} inserted, ${sum.failed} failed of ${sum.total} (${Math.round(USERS / seconds)} rows/s overall, kill and restart included)`);
  await server.stop();
  const stored = await storedCounts();
  console.log(`stored: ${stored.users} imported users (${stored.distinctEmails} distinct emails; expected ${valid}), ${stored.errors} row errors (expected ${invalid}), jobs: ${stored.completed} completed, ${stored.failed} failed, ${stored.active} still active`);
  if (stored.users !== valid || stored.distinctEmails !== valid) failures.push(`expected exactly ${valid} imported users, found ${stored.users} (${stored.distinctEmails} distinct)`);
  if (stored.errors !== invalid || sum.failed !== invalid) failures.push(`expected ${invalid} row errors, found ${stored.errors} (summaries: ${sum.failed})`);
  if (stored.active || stored.failed) failures.push(`${stored.active} jobs stuck, ${stored.failed} halted`);
  if (sum.inserted !== valid || sum.total !== USERS) failures.push(`summaries disagree: ${sum.inserted} inserted, ${sum.total} total`);
  if (!failures.length) console.log(`imported exactly once: ${valid} valid rows; invalid rows reported: ${invalid}; nothing stuck`);
} finally {
  await server.stop();
  await remove();
}
if (failures.length) {
  console.error(`IMPORT CRASH TEST FAILED: ${failures.join("; ")}`);
  process.exit(1);
}
console.log("import crash test passed");
