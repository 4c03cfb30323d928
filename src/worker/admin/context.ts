import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { ApiClient } from "./api";

/** The operator behind a console request (issue 30): who, and the session's CSRF token. */
export interface Operator {
  userId: string;
  name: string;
  email: string;
  csrf: string;
  /** When the operator last typed their credentials (the ID token's auth_time, seconds): step-up reads it. */
  authTime: number;
  /** The session's key (the cookie secret's hash), for logout. */
  idHash: string;
  /** Tenants this session opened, most recent first (the tenant switcher). */
  recentTenants: string[];
}

/** In-process dispatch into the service's own route table: every console action is a real request to it. */
export type Dispatch = (request: Request, c: Context) => Response | Promise<Response>;

/** The console's Hono environment: the app's, plus the signed-in operator and their API client. */
export type ConsoleEnv = {
  Bindings: Env;
  Variables: AppEnv["Variables"] & { operator: Operator; api: ApiClient; dispatch: Dispatch };
};

export type ConsoleContext = Context<ConsoleEnv>;
