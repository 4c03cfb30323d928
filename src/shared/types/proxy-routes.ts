// Declared with the resource's schema (issue 26 point 4); re-exported for callers.
export type { HostEntry, ProxyRoute } from "../schemas/platform/proxy-routes";
