/**
 * A local webhook receiver for tests, the crash script and the benchmark (plain Node, no dependencies).
 *
 *   POST /hook/{name}[?fail=N][&status=S][&deny=reason][&delay=ms]
 *        records the delivery (Idempotency-Key header and JSON body; a form body such as a back-channel
 *        `logout_token=...` as `form`, with its content type) under {name}; the first N requests
 *        of that name answer S (default 500), `deny` answers 200 {"deny":{"reason":...}}, `delay` waits.
 *   GET  /log/{name}   the recorded deliveries of {name}: [{ key, body, raw, form, contentType, headers, status, at }]
 *                      (headers: authorization, contentType and x-custom, for log-stream tests)
 *   GET  /counts       { name: { deliveries, keys } } for every name
 *   ANY  /data/{name}[?status=S][&delay=ms][&size=bytes][&to=url]
 *        tenant code's outbound calls (issue 32): recorded under {name} like a hook; answers S (200) with
 *        { name, method, query, body }, or `size` bytes of text, or a 302 to `to`; `delay` waits first.
 *   ANY  /legacy/...   a legacy user store (test/receiver/legacy-store.mjs) for custom database scripts.
 *
 * Only 127.0.0.1 is bound.
 */
import { createServer } from "node:http";
import { legacyStore } from "../test/receiver/legacy-store.mjs";

export async function startReceiver({ port = 0, host = "127.0.0.1", quiet = true } = {}) {
  const deliveries = new Map();
  const seen = new Map();
  const legacy = legacyStore();
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://receiver");
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", async () => {
      const [, kind, name = ""] = url.pathname.split("/");
      const send = (status, body) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "GET" && kind === "log") return send(200, deliveries.get(name) ?? []);
      if (req.method === "GET" && kind === "counts") {
        const out = {};
        for (const [n, list] of deliveries) out[n] = { deliveries: list.length, keys: new Set(list.map((d) => d.key)).size };
        return send(200, out);
      }
      if (kind === "legacy") return legacy.handle(req, res, url, Buffer.concat(chunks).toString("utf8"));
      if (kind === "data") {
        const raw = Buffer.concat(chunks).toString("utf8");
        const list = deliveries.get(name) ?? [];
        list.push({ key: null, body: null, raw, form: null, contentType: req.headers["content-type"] ?? null, headers: { authorization: req.headers.authorization ?? null, contentType: req.headers["content-type"] ?? null, custom: req.headers["x-custom"] ?? null }, status: 200, at: Date.now() });
        deliveries.set(name, list);
        const delay = Number(url.searchParams.get("delay") ?? 0);
        if (delay) await new Promise((r) => setTimeout(r, delay));
        const to = url.searchParams.get("to");
        if (to) {
          res.writeHead(302, { location: to });
          return res.end();
        }
        const size = Number(url.searchParams.get("size") ?? 0);
        if (size) {
          res.writeHead(200, { "content-type": "text/plain" });
          return res.end("x".repeat(size));
        }
        return send(Number(url.searchParams.get("status") ?? 200), { name, method: req.method, query: Object.fromEntries(url.searchParams), body: raw });
      }
      if (req.method !== "POST" || kind !== "hook") return send(404, { error: "not found" });
      const count = (seen.get(name) ?? 0) + 1;
      seen.set(name, count);
      const fail = Number(url.searchParams.get("fail") ?? 0);
      const status = count <= fail ? Number(url.searchParams.get("status") ?? 500) : 200;
      const raw = Buffer.concat(chunks).toString("utf8");
      const contentType = req.headers["content-type"] ?? null;
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {}
      const form = contentType?.startsWith("application/x-www-form-urlencoded") ? Object.fromEntries(new URLSearchParams(raw)) : null;
      const list = deliveries.get(name) ?? [];
      const headers = { authorization: req.headers.authorization ?? null, contentType, custom: req.headers["x-custom"] ?? null };
      list.push({ key: req.headers["idempotency-key"] ?? null, body, raw, form, contentType, headers, status, at: Date.now() });
      deliveries.set(name, list);
      const delay = Number(url.searchParams.get("delay") ?? 0);
      if (delay) await new Promise((r) => setTimeout(r, delay));
      if (status !== 200) return send(status, { error: "failing on purpose" });
      const deny = url.searchParams.get("deny");
      return send(200, deny ? { deny: { reason: deny } } : { ok: true });
    });
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const address = server.address();
  if (!quiet) console.log(`receiver on http://${host}:${address.port}`);
  return {
    url: `http://${host}:${address.port}`,
    deliveries,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
