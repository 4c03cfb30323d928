/**
 * A legacy user store with its own HTTP API and its own bcrypt hashes (issue 32): what a custom database
 * connection's scripts talk to in the tests, the e2e run and the benchmark. Plain Node; state per store name.
 *
 *   POST   /legacy/{store}/seed      { users: [{ email, password, name?, ...profile }] }   adds users (hashes them)
 *   POST   /legacy/{store}/login     { email, password }   200 profile | 401 { error: "wrong_credentials" }
 *   GET    /legacy/{store}/users?email=                     200 profile | 404
 *   POST   /legacy/{store}/users     { email, password, ...profile }   201 profile | 409 { error: "exists" }
 *   POST   /legacy/{store}/verify    { email }              200 | 404
 *   POST   /legacy/{store}/password  { email, password }    200 | 404
 *   POST   /legacy/{store}/email     { email, new_email, verified }   200 | 404
 *   DELETE /legacy/{store}/users/{id}                       204 | 404
 *   POST   /legacy/{store}/off                              every later call answers 503 (the store is "switched off")
 *   GET    /legacy/{store}/calls                            { login: n, get_user: n, ... } calls so far
 */
import bcrypt from "bcryptjs";

export function legacyStore() {
  const stores = new Map();
  const storeOf = (name) => {
    let store = stores.get(name);
    if (!store) {
      store = { users: new Map(), off: false, calls: {}, next: 1000 };
      stores.set(name, store);
    }
    return store;
  };
  const profile = (u) => ({ user_id: u.id, email: u.email, email_verified: u.email_verified, name: u.name, ...u.extra });

  return {
    async handle(req, res, url, raw) {
      const [, , name = "", op = "", id = ""] = url.pathname.split("/");
      const store = storeOf(name);
      const send = (status, body) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(body === undefined ? "" : JSON.stringify(body));
      };
      let body = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        return send(400, { error: "bad_json" });
      }
      const key = `${req.method} ${op}`;
      if (key === "GET calls") return send(200, store.calls);
      if (key === "POST off") {
        store.off = true;
        return send(200, { off: true });
      }
      if (key === "POST seed") {
        for (const u of body.users ?? []) {
          const { email, password, name: display, email_verified = true, ...extra } = u;
          store.users.set(email.toLowerCase(), { id: String(store.next++), email, name: display ?? email, email_verified, extra, hash: bcrypt.hashSync(password, 8) });
        }
        return send(200, { seeded: store.users.size });
      }
      const callName = { "POST login": "login", "GET users": "get_user", "POST users": "create", "POST verify": "verify", "POST password": "change_password", "POST email": "change_email", "DELETE users": "delete" }[key];
      if (!callName) return send(404, { error: "not_found" });
      store.calls[callName] = (store.calls[callName] ?? 0) + 1;
      if (store.off) return send(503, { error: "switched_off" });
      const find = (email) => store.users.get(String(email ?? "").toLowerCase());
      switch (callName) {
        case "login": {
          const u = find(body.email);
          if (!u || !bcrypt.compareSync(String(body.password ?? ""), u.hash)) return send(401, { error: "wrong_credentials" });
          return send(200, profile(u));
        }
        case "get_user": {
          const u = find(url.searchParams.get("email"));
          return u ? send(200, profile(u)) : send(404, { error: "not_found" });
        }
        case "create": {
          if (find(body.email)) return send(409, { error: "exists" });
          const { email, password, ...extra } = body;
          const u = { id: String(store.next++), email, name: email, email_verified: false, extra: {}, hash: bcrypt.hashSync(String(password), 8) };
          u.extra = Object.fromEntries(Object.entries(extra).filter(([k]) => k !== "name"));
          store.users.set(email.toLowerCase(), u);
          return send(201, profile(u));
        }
        case "verify": {
          const u = find(body.email);
          if (!u) return send(404, { error: "not_found" });
          u.email_verified = true;
          return send(200, profile(u));
        }
        case "change_password": {
          const u = find(body.email);
          if (!u) return send(404, { error: "not_found" });
          u.hash = bcrypt.hashSync(String(body.password), 8);
          return send(200, { changed: true });
        }
        case "change_email": {
          const u = find(body.email);
          if (!u) return send(404, { error: "not_found" });
          store.users.delete(u.email.toLowerCase());
          u.email = body.new_email;
          u.email_verified = body.verified === true;
          store.users.set(u.email.toLowerCase(), u);
          return send(200, profile(u));
        }
        case "delete": {
          const u = [...store.users.values()].find((x) => x.id === id);
          if (!u) return send(404, { error: "not_found" });
          store.users.delete(u.email.toLowerCase());
          return send(204);
        }
      }
      return send(404, { error: "not_found" });
    },
  };
}
