import { createApp } from "./app";
import { pokeOutboxes } from "./cron";

export { PlatformObject } from "../objects/platform/platform-object";
export { TenantObject } from "../objects/tenant/tenant-object";
export { UserObject } from "../objects/user/user-object";

const app = createApp();

export default {
  fetch: app.fetch,
  // Cron safety net only: every tenant object relays from its own alarm (README "Outbox and relay").
  scheduled(_controller, env, ctx) {
    ctx.waitUntil(pokeOutboxes(env));
  },
} satisfies ExportedHandler<Env>;
