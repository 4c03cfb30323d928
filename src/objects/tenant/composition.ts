/**
 * The tenant object's composition root (issue 26 point 3): builds the object's parts from `env` in one
 * place, so "what does a tenant object consist of?" has a one-screen answer. The write path and relay
 * (core/publisher.ts) with its destinations in relay order, its reactions and its alarm jobs, and the
 * `TenantCore` every facade is built on. TenantObject (tenant-object.ts) is then a list of facades.
 */
import type { Sql } from "../sql";
import { metricsSinkFrom } from "./core/metrics";
import { outboxOptionsFrom, Publisher } from "./core/publisher";
import type { Destination } from "./core/relay";
import type { TenantCore } from "./core/rpc";
import { getSetting, INHERITS_FROM } from "./core/settings";
import { type PipelineConfig, tenantExtensions } from "./extensions";
import { finishVerificationEmail } from "./jobs/email-verification";
import { JobLane } from "./jobs/job-lane";
import { reactToUserWrite } from "./login/cascade";
import { cascadeDestinations } from "./login/cascade-destinations";
import { recordDevMessage } from "./login/challenges";
import { TenantCleanup } from "./login/cleanup";
import { defaultDestinations, type ParentHooks } from "./outbox/destinations";
import { emailDestination } from "./outbox/email-outbox";
import { controlPlaneSyncDestination, type SyncState } from "./settings/control-plane-sync";

/** The parts of one tenant object. */
export interface TenantParts {
  core: TenantCore;
  /** Write path, outbox relay and alarm (clock and jitter injectable for tests). */
  outbox: Publisher;
  /** Expired-row cleanup, a job of the same alarm (SPEC §8). */
  cleanup: TenantCleanup;
  /** User import and export jobs, one chunk per alarm run (issue 14 point 5). */
  jobLane: JobLane;
  /** The log-stream pipeline the extensions configure (synced at start). */
  pipeline: PipelineConfig;
}

/** The parent's webhooks, read at delivery time through its object (the link is the worker's, issue 15). */
function parentHooksOf(sql: Sql, tenantId: string, env: Env): ParentHooks {
  const parentOf = () => {
    const parent = getSetting<string | null>(sql, INHERITS_FROM, null);
    return parent && parent !== tenantId ? parent : null;
  };
  return {
    linked: () => parentOf() !== null,
    async enabled(trigger) {
      const parent = parentOf();
      return parent ? await env.TENANT.getByName(parent).hooks().enabled(trigger) : [];
    },
  };
}

/** Control-plane sync (issue 15 point 2): the control plane's relay brings every child in step. */
function syncTargetsOf(tenantId: string, env: Env) {
  return {
    async children() {
      const registry = env.PLATFORM.getByName("platform").tenants();
      const ids: string[] = [];
      for (let offset = 0; ; offset += 100) {
        const page = await registry.list({ offset, limit: 100 });
        // A `wfp` tenant's data lives in its own deployment (which runs its own seed on upgrade): not here.
        ids.push(...page.items.filter((t) => t.deployment_type !== "wfp").map((t) => t.id));
        if (page.items.length < 100) break;
      }
      return ids.filter((id) => id !== tenantId);
    },
    apply: (child: string, state: SyncState) => env.TENANT.getByName(child).controlPlaneSync().apply(state),
  };
}

/** Builds one tenant object's parts over its storage. */
export function composeTenant(storage: DurableObjectStorage, sql: Sql, tenantId: string, env: Env, exports?: unknown): TenantParts {
  const vars = env as unknown as Record<string, unknown>;
  // `exports`: the object's ctx.exports, whose EgressGateway is tenant code's way out (issue 32).
  const extensions = tenantExtensions(sql, tenantId, env, exports);
  const cascade = { users: env.USER, encryptionKey: env.ENCRYPTION_KEY, issuer: env.ISSUER, egress: extensions.egress };
  // Relay order: logs, webhooks, code hooks, registration finalizer (SPEC §6.2), then the internal ones.
  const destinations: Destination[] = [
    ...defaultDestinations(sql, tenantId, extensions.codeHooks, parentHooksOf(sql, tenantId, env), extensions.egress),
    ...cascadeDestinations(sql, tenantId, cascade),
    controlPlaneSyncDestination(sql, syncTargetsOf(tenantId, env)),
    // Emails the object sends itself (job completion): delivered by the relay, after the commit that decided them.
    emailDestination(sql, env, { recordDevMessage, finishVerificationEmail }),
  ];
  const outbox = new Publisher(storage, sql, tenantId, outboxOptionsFrom(vars), destinations);
  outbox.metrics = metricsSinkFrom(vars);
  // Blocking or deleting a user ends its sessions in the same commit (cascade.ts); cleanup shares the alarm.
  outbox.reactions = [reactToUserWrite];
  const cleanup = new TenantCleanup(sql, (fn) => outbox.commit(fn));
  const jobLane = new JobLane(sql, storage, (fn) => outbox.commit(fn), tenantId);
  outbox.jobs = [cleanup, jobLane, ...extensions.jobs];
  const core: TenantCore = {
    sql,
    storage,
    now: () => outbox.now(),
    afterCommit: () => outbox.afterCommit(outbox.now()),
    commit: (fn) => outbox.commit(fn),
  };
  return { core, outbox, cleanup, jobLane, pipeline: extensions.pipeline };
}
