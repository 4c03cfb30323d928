import { WorkerEntrypoint } from "cloudflare:workers";
import { type EgressProps, egressLimitsFrom, gatewayFetch } from "../../shared/actions/egress";
import { egressPolicyFrom } from "../../shared/egress-policy";

/**
 * The `globalOutbound` of every sandbox isolate (issue 32 point 1, ARCHITECTURE.md §9), reached through
 * `ctx.exports.EgressGateway({ props })` from the front worker and the tenant object alike. It reads only
 * the deployment's egress variables (ALLOW_LOOPBACK_EGRESS, ISSUER, ACTIONS_EGRESS_*); the rest is
 * `gatewayFetch`.
 */
export class EgressGateway extends WorkerEntrypoint<Env, EgressProps> {
  override async fetch(request: Request): Promise<Response> {
    const vars = this.env as unknown as Record<string, unknown>;
    return gatewayFetch(request, this.ctx.props, egressPolicyFrom(this.env), egressLimitsFrom(vars));
  }
}
