/**
 * A CPU profile of the bench's workerd (docs/benchmarks.md): `node scripts/bench/profile.mjs PORT DELAY_MS
 * DURATION_MS OUT` waits for the inspector that `BENCH_INSPECT=PORT npm run bench ...` opens, lets the load
 * start (DELAY_MS), samples the worker's isolate over the DevTools protocol for DURATION_MS, writes OUT
 * (a .cpuprofile) and prints the 40 functions with the most self time.
 */
import { writeFileSync } from "node:fs";

const [port = "9229", delay = "8000", duration = "12000", out = ".bench/profile.cpuprofile"] = process.argv.slice(2);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let targets = [];
for (let i = 0; i < 600 && !targets.length; i++) {
  targets = await fetch(`http://127.0.0.1:${port}/json`)
    .then((res) => res.json())
    .catch(() => []);
  if (!targets.length) await sleep(500);
}
if (!targets.length) throw new Error(`no inspector on 127.0.0.1:${port}`);
await sleep(Number(delay));
const target = targets.find((t) => /main/.test(t.title ?? "")) ?? targets[0];
const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((resolve, reject) => {
  ws.addEventListener("open", resolve);
  ws.addEventListener("error", reject);
});
let next = 0;
const pending = new Map();
ws.addEventListener("message", (event) => {
  const message = JSON.parse(String(event.data));
  pending.get(message.id)?.(message);
  pending.delete(message.id);
});
const send = (method, params = {}) =>
  new Promise((resolve) => {
    const id = ++next;
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
await send("Profiler.enable");
await send("Profiler.setSamplingInterval", { interval: 200 });
await send("Profiler.start");
await sleep(Number(duration));
const { result } = await send("Profiler.stop");
ws.close();
writeFileSync(out, JSON.stringify(result.profile));

const nodes = new Map(result.profile.nodes.map((n) => [n.id, n]));
const self = new Map();
for (const sample of result.profile.samples) {
  const { functionName, url, lineNumber } = nodes.get(sample).callFrame;
  const key = `${functionName || "(anonymous)"} ${url.split("/").pop()}:${lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + 1);
}
const total = result.profile.samples.length;
console.log(`${total} samples of ${target.title} -> ${out}`);
for (const [key, count] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  console.log(`${((100 * count) / total).toFixed(1).padStart(5)} % ${key}`);
}
