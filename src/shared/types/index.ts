/**
 * Plain data that crosses Durable Object RPC (never class instances). Times are ISO 8601 strings on the
 * wire and in these records; the objects store epoch milliseconds.
 */

export type { Json } from "./json";

export type * from "./audit";
export type * from "./auth";
export type * from "./config";
export type * from "./device";
export type * from "./organizations";
export type * from "./jobs";
export type * from "./mfa";
export type * from "./refresh";
export type * from "./proxy-routes";
export type * from "./registry";
export type * from "./roles";
export type * from "./writes";
