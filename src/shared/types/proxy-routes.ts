import type { ProxyHandler } from "../schemas/platform/proxy-routes";

/** A proxy route (SPEC §2.3) as the API shows it; basic_auth passwords appear only as their SHA-256. */
export interface ProxyRoute {
  id: string;
  tenant_id: string;
  /** Null: the route applies to every host of the tenant (its platform subdomain and its domains). */
  custom_domain_id: string | null;
  priority: number;
  match: { path?: string; methods?: string[] };
  handlers: ProxyHandler[];
  created_at: string;
  updated_at: string;
}

/** What the dispatcher needs to serve a host (HostDirectory.lookup). */
export interface HostEntry {
  host: string;
  tenant: {
    id: string;
    deployment_type: "shared" | "wfp";
    provisioning_state: "pending" | "ready" | "failed";
    worker_script_name: string;
    worker_version: string;
  };
  custom_domain: { id: string; domain: string } | null;
  /** Ascending priority (then oldest first): the first match wins. */
  routes: ProxyRoute[];
}
