/** Any JSON value (RPC-serializable, unlike `unknown`). Its own file so the type modules import no index. */
export type Json = string | number | boolean | null | object;
