import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { stepUpRequired } from "../login";
import { Csrf } from "../pages/layout";
import { numeric, type Outcome, outcomeOf, readStatus, statusOf, tenantOf } from "../pages/outcome";
import { ApiError, Field, Notice, str, tenantPath, when } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";

/** A signing key as GET /keys/signing shows it: public certificate forms and its role, never private material. */
interface SigningKey {
  kid: string;
  alg?: string;
  thumbprint?: string | null;
  current?: boolean;
  next?: boolean;
  previous?: boolean;
  revoked?: boolean;
  expired?: boolean;
  inherited?: boolean;
  current_since?: string;
  expires_at?: string;
  revoked_at?: string;
}

/** The key's role now, in the order the reference platform's dashboard names them. */
export function roleOf(key: SigningKey): string {
  if (key.revoked) return "Revoked";
  if (key.current) return "Current";
  if (key.next) return "Next";
  if (key.previous) return "Previous";
  if (key.expired) return "Expired";
  return "Published";
}

const ORDER = ["Current", "Next", "Previous", "Published", "Expired", "Revoked"];

/** GET /admin/t/:tenant/keys: the signing keys (GET /keys/signing), rotation and revocation. */
export async function keysScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const list = await c.var.api.get<SigningKey[]>(tenant, "/keys/signing");
  const keys = list.ok && Array.isArray(list.body) ? [...list.body].sort((a, b) => ORDER.indexOf(roleOf(a)) - ORDER.indexOf(roleOf(b))) : [];
  const base = tenantPath(tenant, "/keys");
  const csrf = c.var.operator.csrf;
  const mayRevoke = can(c, "update:signing_keys");
  return sendConsolePage(
    c,
    shellOf(c, "Signing keys", { tenant, section: "keys" }),
    <>
      <h1>Signing keys</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? list.error} />
      <p class="muted">
        The keys that sign this tenant's tokens. The current key signs now; the next is published ahead of its activation; the previous
        stays published so tokens it signed still verify. Private keys never leave the tenant.
      </p>
      <DataTable
        caption={`Signing keys of ${tenant}`}
        rows={keys}
        columns={[
          { label: "Key ID", cell: (k) => <code>{k.kid}</code> },
          { label: "Role", cell: (k) => `${roleOf(k)}${k.inherited ? " (inherited)" : ""}` },
          { label: "Algorithm", cell: (k) => k.alg ?? "" },
          { label: "Current since", cell: (k) => when(k.current_since) },
          { label: "Expires", cell: (k) => when(k.expires_at) },
          { label: "Thumbprint", cell: (k) => <code>{k.thumbprint ?? ""}</code> },
          ...(mayRevoke
            ? [
                {
                  label: "Revoke",
                  cell: (k: SigningKey) =>
                    k.revoked || k.inherited ? (
                      ""
                    ) : (
                      <form method="post" action={`${base}/${encodeURIComponent(k.kid)}/revoke`} class="inline">
                        <Csrf token={csrf} />
                        <button type="submit" class="danger" aria-label={`Revoke key ${k.kid}`}>
                          Revoke
                        </button>
                      </form>
                    ),
                },
              ]
            : []),
        ]}
        empty="No signing key yet."
      />
      {mayRevoke ? (
        <p class="hint">
          Revoking unpublishes the key at once: tokens it signed stop verifying. Revoking the current key puts a new key in its place. It asks
          for your password again unless you logged in during the last five minutes.
        </p>
      ) : null}
      {can(c, "create:signing_keys") ? (
        <>
          <h2>Rotate</h2>
          <form method="post" action={`${base}/rotate`} class="card">
            <Csrf token={csrf} />
            <p>A new key is generated for every algorithm in use. It signs after the activation delay; the old key stays published during the grace period.</p>
            <Field name="activate_in_days" label="Activate in (days)" type="number" value="0" hint="0 signs with the new key at once." />
            <button type="submit">Rotate signing keys</button>
          </form>
        </>
      ) : null}
    </>,
    outcome.status ?? readStatus(list),
  );
}

/** POST .../keys/rotate: POST /keys/signing/rotate (with activate_in_days when given). */
export async function rotateKeys(c: ConsoleContext): Promise<Response> {
  const form = await c.req.parseBody();
  const days = str(form.activate_in_days).trim();
  const body = days && days !== "0" ? { activate_in_days: numeric(days) } : {};
  const rotated = await c.var.api.post<{ kid: string }>(tenantOf(c), "/keys/signing/rotate", body);
  return keysScreen(c, outcomeOf(rotated, rotated.ok ? `Rotated: the new key is ${rotated.body.kid}.` : ""));
}

/** POST .../keys/:kid/revoke: step-up, then PUT /keys/signing/{kid}/revoke. */
export async function revokeKey(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const stepUp = stepUpRequired(c, tenantPath(tenant, "/keys"));
  if (stepUp) return stepUp;
  const kid = c.req.param("kid") as string;
  const revoked = await c.var.api.put(tenant, `/keys/signing/${encodeURIComponent(kid)}/revoke`);
  if (!revoked.ok) return keysScreen(c, { error: revoked.error, status: statusOf(revoked.status) });
  return keysScreen(c, { notice: `Key ${kid} revoked.` });
}
