import { existsSync, writeFileSync } from "node:fs";
import { capacityTenant, exchange, passwordLogin } from "../capacity.mjs";
const PASSWORD = "capacity-password-123";
async function j(ctx, path) {
  const res = await ctx.fetch(path, { method: "POST" });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}
const wait = async (name) => { writeFileSync(`/tmp/probe-ready-${name}`, ""); while (!existsSync(`/tmp/probe-go-${name}`)) await new Promise((r) => setTimeout(r, 200)); };
export async function probe(ctx) {
  const stamp = Date.now().toString(36);
  const t = await capacityTenant(ctx, `cap-${stamp}`);
  t.email = `capacity-${stamp}@example.com`;
  await t.fetch("/dbconnections/signup", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: t.web.client_id, email: t.email, password: PASSWORD, connection: "Username-Password-Authentication" }) });
  const run = async () => { const { code } = await passwordLogin(t, t.email); await exchange(t, code); };
  await run(); await run();
  await j(ctx, `/__bench/meter/start?tenant=${t.id}`);
  await run();
  await j(ctx, `/__bench/meter/stop?tenant=${t.id}`);
  for (const mode of (process.env.STRACE_MODES ?? "prefix:2,prefix:3").split(",")) {
    await wait(mode);
    const [m, from, pad, flat] = mode.split(":");
    const x = await j(ctx, `/__bench/meter/replay?tenant=${t.id}&n=50&mode=${m}&from=${from ?? 0}&pad=${pad ?? 0}&flat=${flat ?? 0}`);
    console.log(mode, x.us, JSON.stringify(x.per_call_us), x.n);
    writeFileSync(`/tmp/probe-done-${mode}`, JSON.stringify(x));
  }
}
