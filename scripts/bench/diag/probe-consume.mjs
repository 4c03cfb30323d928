import { loadavg } from "node:os";
import { capacityTenant, exchange, passwordLogin, ssoCode } from "../capacity.mjs";

const PASSWORD = "capacity-password-123";
async function j(ctx, path) {
  const res = await ctx.fetch(path, { method: "POST" });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}
export async function probe(ctx) {
  console.log("load", loadavg());
  const stamp = Date.now().toString(36);
  const t = await capacityTenant(ctx, `cap-${stamp}`);
  t.email = `capacity-${stamp}@example.com`;
  const signup = await t.fetch("/dbconnections/signup", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: t.web.client_id, email: t.email, password: PASSWORD, connection: "Username-Password-Authentication" }) });
  if (signup.status !== 200) throw new Error("signup " + signup.status);
  const classes = {
    login: async () => { const { code, cookies } = await passwordLogin(t, t.email); t.session = cookies; await exchange(t, code); },
    sso: async () => void (await exchange(t, await ssoCode(t, t.session))),
  };
  const rounds = Number(process.env.PROBE_ROUNDS ?? 3);
  for (const [id, run] of Object.entries(classes)) {
    if (process.env.PROBE_CLASSES && !process.env.PROBE_CLASSES.split(",").includes(id)) { await run(); continue; }
    await run(); await run();
    await j(ctx, `/__bench/meter/start?tenant=${t.id}`);
    await run();
    const counts = await j(ctx, `/__bench/meter/stop?tenant=${t.id}`);
    console.log(id, counts.tenant.recorded.join(", "));
    const o = await j(ctx, `/__bench/meter/replay?tenant=${t.id}&n=50&mode=outcomes`);
    for (const [i, x] of (o.outcomes ?? [o]).entries()) console.log(`  outcome ${counts.tenant.recorded[i]}: ${typeof x === "string" ? x.slice(0, 160) : JSON.stringify(x)}`);
    const modes = (process.env[`PROBE_MODES_${id}`] ?? process.env.PROBE_MODES ?? "prefix,staged").split(",");
    for (let r = 0; r < rounds; r++) {
      for (const mode of modes) {
        const [m, from, pad, flat] = mode.split(":"); const x = await j(ctx, `/__bench/meter/replay?tenant=${t.id}&n=50&mode=${m}&from=${from ?? 0}&pad=${pad ?? 0}&flat=${flat ?? 0}`);
        console.log(`  ${id} ${mode.padEnd(7)} total ${x.us?.toFixed(1)} µs per call ${JSON.stringify(x.per_call_us)} n=${x.n} load=${loadavg()[0].toFixed(2)}`);
      }
    }
  }
}
