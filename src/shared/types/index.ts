/**
 * Plain data that crosses Durable Object RPC (never class instances). Times are ISO 8601 strings on the
 * wire and in these records; the objects store epoch milliseconds.
 */

/** Any JSON value (RPC-serializable, unlike `unknown`). */
export type Json = string | number | boolean | null | object;

export type * from "./auth";
export type * from "./config";
export type * from "./refresh";
export type * from "./registry";
export type * from "./writes";
