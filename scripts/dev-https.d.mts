/** Types for scripts/dev-https.mjs (test/e2e/https.e2e.test.ts imports it). */
import type { Server } from "node:tls";

export interface DevCa {
  certPath: string;
  certPem: string;
  cert: unknown;
  key: CryptoKey;
  created: boolean;
}

export interface Leaf {
  key: string;
  cert: string;
}

/** The development CA in `dir`, created on first use. */
export function ensureDevCa(dir: string): Promise<DevCa>;
/** A server certificate signed by the CA for `hostnames`. */
export function issueLeaf(ca: DevCa, hostnames: string[]): Promise<Leaf>;
/** The apex leaf written to `dir` for wrangler's own https listener. */
export function writeApexLeaf(ca: DevCa, dir: string): Promise<Leaf & { keyPath: string; certPath: string }>;
/** The TLS front on 127.0.0.1:`port` relaying to the https listener on `upstreamPort`. */
export function startTlsFront(options: { port: number; upstreamPort: number; ca: DevCa; apex: Leaf }): Promise<Server>;
export const APEX_NAMES: string[];
