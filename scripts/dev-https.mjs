/**
 * Local HTTPS for `npm start -- --https`: a development certificate authority, created once under
 * `.wrangler/dev-ca/` (git-ignored), and a TLS front on PORT that presents a certificate for whichever
 * `*.localhost` name the client asks for.
 *
 * Why a front and not only `wrangler dev --local-protocol https`: wrangler takes one certificate, and a
 * wildcard `*.localhost` is refused by Node, OpenSSL and Chromium alike (a wildcard needs two labels to its
 * right, RFC 6125 §7.2 and the CA/Browser Forum rules), so `https://acme.localhost:PORT` would fail
 * verification. The front issues a leaf per SNI name (cached) and pipes the bytes to wrangler, which itself
 * serves https on an internal port with the `localhost` leaf: the worker still sees `https://` request URLs
 * and the client's own Host header.
 *
 * The CA is name-constrained (RFC 5280 §4.2.1.10) to `localhost`, its subdomains and loopback addresses, so
 * trusting it (NODE_EXTRA_CA_CERTS, a browser's store) cannot vouch for any other site.
 */
import { webcrypto } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, createSecureContext, createServer } from "node:tls";
import { join } from "node:path";
// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata polyfill loaded first.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto);

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const DAY_MS = 86_400_000;
/** @default 3650 days: the CA outlives any checkout. */
const CA_VALIDITY_DAYS = 3650;
/** @default 397 days: the longest leaf lifetime browsers accept (CA/Browser Forum baseline requirements). */
const LEAF_VALIDITY_DAYS = 397;

const pem = (label, der) => `-----BEGIN ${label}-----\n${Buffer.from(der).toString("base64").replace(/(.{64})/g, "$1\n").trimEnd()}\n-----END ${label}-----\n`;
const serial = () => `01${Buffer.from(webcrypto.getRandomValues(new Uint8Array(15))).toString("hex")}`;

/** One DER TLV (short or long length form). */
function tlv(tag, ...parts) {
  const body = Buffer.concat(parts);
  const len = body.length < 0x80 ? Buffer.of(body.length) : Buffer.of(0x81, body.length);
  return Buffer.concat([Buffer.of(tag), len, body]);
}

/**
 * nameConstraints, critical: permitted dNSName `localhost` (which covers every `*.localhost`), iPAddress
 * 127.0.0.0/8 and ::1/128. @peculiar/x509 has no class for this extension, so it is encoded here.
 */
function nameConstraints() {
  const v6 = Buffer.alloc(32, 0);
  v6[15] = 1;
  v6.fill(0xff, 16);
  const subtrees = [
    tlv(0x82, Buffer.from("localhost")),
    tlv(0x87, Buffer.of(127, 0, 0, 0, 255, 0, 0, 0)),
    tlv(0x87, v6),
  ].map((name) => tlv(0x30, name));
  return new x509.Extension("2.5.29.30", true, tlv(0x30, tlv(0xa0, ...subtrees)));
}

async function privatePem(key) {
  return pem("PRIVATE KEY", await webcrypto.subtle.exportKey("pkcs8", key));
}

/**
 * The development CA in `dir` (`ca.pem`, `ca-key.pem`), created on first use and reused afterwards.
 * @param {string} dir
 * @returns {Promise<{certPath: string, certPem: string, cert: x509.X509Certificate, key: CryptoKey, created: boolean}>}
 */
export async function ensureDevCa(dir) {
  const certPath = join(dir, "ca.pem");
  const keyPath = join(dir, "ca-key.pem");
  let created = false;
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const keys = await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
    const now = Date.now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: "CN=Gatehouse local development CA, O=Gatehouse (npm start --https)",
      notBefore: new Date(now - DAY_MS),
      notAfter: new Date(now + CA_VALIDITY_DAYS * DAY_MS),
      keys,
      signingAlgorithm: ALG,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        nameConstraints(),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    writeFileSync(keyPath, await privatePem(keys.privateKey), { mode: 0o600 });
    writeFileSync(certPath, cert.toString("pem"));
    created = true;
  }
  const certPem = readFileSync(certPath, "utf8");
  const keyDer = Buffer.from(readFileSync(keyPath, "utf8").replace(/-----[^-]+-----|\s/g, ""), "base64");
  const key = await webcrypto.subtle.importKey("pkcs8", keyDer, ALG, false, ["sign"]);
  return { certPath, certPem, cert: new x509.X509Certificate(certPem), key, created };
}

/**
 * A server certificate signed by the CA for `hostnames` (DNS names or IPv4/IPv6 literals), with a new P-256 key.
 * @returns {Promise<{key: string, cert: string}>} PEM private key and PEM certificate followed by the CA's
 */
export async function issueLeaf(ca, hostnames) {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
  const now = Date.now();
  const isIp = (h) => /^[\d.]+$/.test(h) || h.includes(":");
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${hostnames[0]}`,
    issuer: ca.cert.subject,
    notBefore: new Date(now - DAY_MS),
    notAfter: new Date(now + LEAF_VALIDITY_DAYS * DAY_MS),
    signingKey: ca.key,
    publicKey: keys.publicKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(hostnames.map((h) => ({ type: isIp(h) ? "ip" : "dns", value: h }))),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  return { key: await privatePem(keys.privateKey), cert: `${cert.toString("pem")}\n${ca.certPem}` };
}

/** The apex leaf: `localhost`, `*.localhost` (for clients that accept it), 127.0.0.1 and ::1. */
export const APEX_NAMES = ["localhost", "*.localhost", "127.0.0.1", "::1"];

/**
 * Writes the apex leaf for wrangler's own https listener (`--https-key-path`, `--https-cert-path`); a new one
 * each start (it costs milliseconds, and never expires under a long-lived checkout).
 */
export async function writeApexLeaf(ca, dir) {
  const leaf = await issueLeaf(ca, APEX_NAMES);
  const keyPath = join(dir, "localhost-key.pem");
  const certPath = join(dir, "localhost.pem");
  writeFileSync(keyPath, leaf.key, { mode: 0o600 });
  writeFileSync(certPath, leaf.cert);
  return { ...leaf, keyPath, certPath };
}

/**
 * An upstream close that comes this long after the last byte either way is wrangler retiring an idle keep-alive
 * connection (it does so after 15 s), not the end of a response delimited by the close. @default 1000 ms
 */
const UPSTREAM_IDLE_CLOSE_MS = 1_000;
/** A client connection with no traffic either way for this long is closed by the front. @default 300000 ms */
const CLIENT_IDLE_TIMEOUT_MS = 300_000;

/**
 * One client connection's bytes to and from wrangler. wrangler closes a keep-alive connection after 15 s idle; a
 * client whose event loop was busy for longer than that (auth0-deploy-cli compiles its JSON schema for tens of
 * seconds before its first request to a tenant) still holds the connection as idle and sends its next request on
 * it, and closing the client side with the upstream made that request fail with "other side closed" before it
 * reached the worker. So an upstream retired while idle is dropped quietly and the next request opens a new one;
 * an upstream that closes while traffic flows (a response delimited by the close) still ends the client's side.
 */
function relay(socket, openUpstream) {
  let upstream = null;
  let lastTraffic = Date.now();
  const attach = () => {
    const up = openUpstream();
    up.on("data", () => {
      lastTraffic = Date.now();
    });
    up.pipe(socket, { end: false });
    const retired = () => {
      if (upstream !== up) return;
      upstream = null;
      up.unpipe(socket);
      if (Date.now() - lastTraffic < UPSTREAM_IDLE_CLOSE_MS) socket.end();
    };
    up.on("end", retired);
    up.on("error", () => {
      retired();
      up.destroy();
    });
    up.on("close", retired);
    return up;
  };
  socket.setTimeout(CLIENT_IDLE_TIMEOUT_MS, () => socket.destroy());
  socket.on("data", (chunk) => {
    lastTraffic = Date.now();
    upstream ??= attach();
    if (!upstream.write(chunk)) {
      socket.pause();
      upstream.once("drain", () => socket.resume());
    }
  });
  socket.on("end", () => upstream?.end());
  socket.on("error", () => socket.destroy());
  socket.on("close", () => upstream?.destroy());
}

/**
 * The TLS front on 127.0.0.1:`port`: terminates TLS with a leaf for the client's SNI name when it is
 * `localhost` or a `*.localhost` name (the apex leaf otherwise), then re-encrypts to wrangler's https
 * listener on `upstreamPort` and relays both ways (see `relay` for keep-alive connections wrangler retires).
 * @returns {Promise<import("node:tls").Server>}
 */
export async function startTlsFront({ port, upstreamPort, ca, apex }) {
  const contexts = new Map();
  const contextFor = (servername) => {
    const name = servername.toLowerCase();
    if (name !== "localhost" && !/^[a-z0-9-]+(\.[a-z0-9-]+)*\.localhost$/.test(name)) return null;
    if (!contexts.has(name)) contexts.set(name, issueLeaf(ca, [name]).then((leaf) => createSecureContext(leaf)));
    return contexts.get(name);
  };
  const server = createServer(
    {
      key: apex.key,
      cert: apex.cert,
      SNICallback: (servername, done) => {
        const context = contextFor(servername);
        if (!context) return done(null, undefined);
        context.then((c) => done(null, c), done);
      },
    },
    (socket) => relay(socket, () => connect({ host: "127.0.0.1", port: upstreamPort, servername: "localhost", ca: ca.certPem })),
  );
  server.on("tlsClientError", () => {
    // A client that distrusts the CA hangs up mid-handshake: nothing to report here, the client says why.
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  return server;
}
