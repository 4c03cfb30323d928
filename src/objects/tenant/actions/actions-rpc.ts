import { ok, type Result } from "../../../shared/errors";
import type { NewAuthorizationCode } from "../../../shared/types";
import type { ActionBindingRecord, ActionEffects, ActionExecutionRecord, ActionPatch, ActionRecord, ActionVersionRecord, ActionWarning, NewAction, NewActionVersion } from "../../../shared/schemas/actions";
import { applyActionEffects } from "./action-effects";
import * as actions from "./actions";
import { audited } from "../core/events";
import { emitWarnings, getExecution, recordExecution } from "./executions";
import { TenantRpc } from "../core/rpc";
import { createAuthorizationCode } from "../login/single-use";
import type { ActionCacheEntry, ActionCacheWrite } from "../../../shared/actions/cache";
import { applyCacheWrites, cacheEntries, type ResumeOutcome, resumeLogin, type SuspendedLoginRow, suspendLogin } from "./action-state";

/**
 * The actions facade (`stub.actions(audit)`): drafts, versions, bindings and executions. Deployments and
 * bindings change what the hot path runs, so those writes bump the configuration version.
 */
export class ActionsRpc extends TenantRpc {
  list(filter: actions.ActionFilter): ActionRecord[] {
    return this.read((sql) => actions.listActions(sql, filter));
  }

  get(id: string): ActionRecord | null {
    return this.read((sql) => actions.getAction(sql, id));
  }

  create(input: NewAction): Result<ActionRecord> {
    return this.commit((tx) => audited(tx, this.audit, actions.createAction(tx.sql, input, tx.now), { entity: "action", action: "created", id: input.id, after: (a) => a }), { config: true });
  }

  update(id: string, patch: ActionPatch): Result<ActionRecord> {
    return this.commit((tx) => {
      const result = actions.updateAction(tx.sql, id, patch, tx.now);
      const before = result.ok ? result.value.before : undefined;
      return audited(tx, this.audit, result.ok ? ok(result.value.after) : result, { entity: "action", action: "updated", id, before, after: (a) => a });
    }, { config: true });
  }

  delete(id: string, force: boolean): Result<ActionRecord> {
    return this.commit((tx) => {
      const result = actions.deleteAction(tx.sql, id, force);
      return audited(tx, this.audit, result, { entity: "action", action: "deleted", id, before: result.ok ? result.value : undefined });
    }, { config: true });
  }

  /** The draft's code, sealed secrets and stamp (for deploy and test in the worker). */
  draft(id: string) {
    return this.read((sql) => actions.draftOf(sql, id));
  }

  deploy(id: string, version: NewActionVersion): Result<ActionVersionRecord> {
    return this.commit(
      (tx) => audited(tx, this.audit, actions.deployDraft(tx.sql, id, version, tx.now), { entity: "action", action: "updated", id, after: (v) => ({ deployed_version: { id: v.id, number: v.number } }) }),
      { config: true },
    );
  }

  deployVersion(actionId: string, versionId: string, updateDraft: boolean): Result<ActionVersionRecord> {
    return this.commit(
      (tx) =>
        audited(tx, this.audit, actions.deployVersion(tx.sql, actionId, versionId, updateDraft, tx.now), {
          entity: "action",
          action: "updated",
          id: actionId,
          after: (v) => ({ deployed_version: { id: v.id, number: v.number } }),
        }),
      { config: true },
    );
  }

  versions(actionId: string): ActionVersionRecord[] | null {
    return this.read((sql) => actions.listVersions(sql, actionId));
  }

  version(actionId: string, versionId: string): ActionVersionRecord | null {
    return this.read((sql) => actions.getVersion(sql, actionId, versionId));
  }

  /** The instrumented module the sandbox loads for a version. */
  compiled(versionId: string): string | null {
    return this.read((sql) => actions.compiledVersion(sql, versionId));
  }

  bindings(triggerId: string): ActionBindingRecord[] {
    return this.read((sql) => actions.listBindings(sql, triggerId));
  }

  replaceBindings(triggerId: string, inputs: actions.BindingInput[]): Result<ActionBindingRecord[]> {
    return this.commit((tx) => {
      const result = actions.replaceBindings(tx.sql, triggerId, inputs, tx.now);
      const brief = (list: ActionBindingRecord[]) => list.map((b) => ({ id: b.id, action_id: b.action.id, display_name: b.display_name }));
      return audited(tx, this.audit, result.ok ? ok(result.value.after) : result, {
        entity: "action_bindings",
        action: "updated",
        id: triggerId,
        before: result.ok ? brief(result.value.before) : undefined,
        after: brief,
      });
    }, { config: true });
  }

  execution(id: string): ActionExecutionRecord | null {
    return this.read((sql) => getExecution(sql, id));
  }

  /**
   * A login's dispatch effects when no other write carries them (silent authentication, refresh), with the
   * authorization code of a silent authentication in the same commit (one RPC per user action).
   */
  applyEffects(userId: string | null, effects: ActionEffects, code?: NewAuthorizationCode): void {
    this.commit((tx) => {
      applyActionEffects(tx, this.audit, userId, effects);
      if (code) createAuthorizationCode(tx.sql, code, tx.now);
    });
  }

  /** A dispatch the worker ran: its execution record and warnings (dropped claims ...) in one commit. */
  recordExecution(execution: ActionExecutionRecord | null, warnings: ActionWarning[] = []): void {
    this.commit((tx) => {
      if (execution) recordExecution(tx.sql, execution, tx.now);
      emitWarnings(tx, warnings);
    });
  }

  /** Stores a login a post-login action sent away (`api.redirect.sendUserTo`) until its `/continue`. */
  suspendLogin(row: SuspendedLoginRow): void {
    this.commit((tx) => suspendLogin(tx.sql, row, tx.now));
  }

  /** Consumes a suspended login once, for the browser it was sent away from. */
  resumeLogin(stateHash: string, bindingHash: string): ResumeOutcome {
    return this.commit((tx) => resumeLogin(tx.sql, stateHash, bindingHash, tx.now));
  }

  /** The live `api.cache` entries of a trigger. */
  cacheEntries(triggerId: string): ActionCacheEntry[] {
    return this.read((sql, now) => cacheEntries(sql, triggerId, now));
  }

  /** Stores a run's `api.cache` writes (checked against the limits by the worker). */
  applyCacheWrites(triggerId: string, writes: ActionCacheWrite[]): void {
    this.commit((tx) => applyCacheWrites(tx.sql, triggerId, writes, tx.now));
  }
}
