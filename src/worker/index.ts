import { createApp } from "./app";
import { pokeOutboxes, renewSigningKeys } from "./cron";
import { maybeResume, resumeStaleOperations } from "./deploy/resume";

export { PlatformObject } from "../objects/platform/platform-object";
export { TenantObject } from "../objects/tenant/tenant-object";
export { UserObject } from "../objects/user/user-object";
export { CodeObject } from "../objects/codes/code-object";
export { EgressGateway } from "./actions/egress-gateway";
export { BulkUpgradeWorkflow } from "./deploy/bulk";
export { TenantDeploymentWorkflow } from "./deploy/workflow";

const app = createApp();

export default {
  async fetch(request, env, ctx) {
    maybeResume(env, ctx);
    const response = await app.fetch(request, env, ctx);
    // A tenant's copy names the release it runs (issue 16): operators and the e2e test read it per response.
    if (!env.WORKER_VERSION) return response;
    const tagged = new Response(response.body, response);
    tagged.headers.set("x-gatehouse-release", `${env.BUNDLE_CONFIGURATION ?? "default"}/${env.WORKER_VERSION}`);
    return tagged;
  },
  // Cron safety net only: every tenant object relays from its own alarm (docs/outbox-and-logs.md).
  scheduled(controller, env, ctx) {
    ctx.waitUntil(pokeOutboxes(env));
    ctx.waitUntil(resumeStaleOperations(env).then(() => undefined, (error) => console.warn(`resume: ${String(error)}`)));
    // Hourly (the trigger runs every minute): certificates of signing keys about to expire are renewed.
    if (new Date(controller.scheduledTime).getUTCMinutes() === 0) ctx.waitUntil(renewSigningKeys(env).then(() => undefined));
  },
} satisfies ExportedHandler<Env>;
