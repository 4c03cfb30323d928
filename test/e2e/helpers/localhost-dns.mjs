/**
 * Preloaded (`node --import`) by child processes that reach tenants at `{tenant}.localhost`: resolves every
 * `*.localhost` name to the loopback address, as browsers do (RFC 6761 §6.3), since this machine's resolver
 * does not. Everything else resolves as usual.
 */
import dns from "node:dns";

const original = dns.lookup;
dns.lookup = function lookup(hostname, options, callback) {
  const cb = typeof options === "function" ? options : callback;
  const opts = typeof options === "function" ? {} : typeof options === "number" ? { family: options } : (options ?? {});
  if (typeof hostname === "string" && hostname.endsWith(".localhost")) {
    return process.nextTick(() => (opts.all ? cb(null, [{ address: "127.0.0.1", family: 4 }]) : cb(null, "127.0.0.1", 4)));
  }
  return original.call(dns, hostname, options, callback);
};
