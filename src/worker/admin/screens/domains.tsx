import type { ConsoleContext } from "../context";
import { can } from "../grants";
import { stepUpRequired } from "../login";
import { Csrf } from "../pages/layout";
import { type Outcome, outcomeOf, readStatus, statusOf, tenantOf } from "../pages/outcome";
import { ApiError, Field, Notice, str, tenantPath, when } from "../pages/parts";
import { DataTable } from "../pages/table";
import { sendConsolePage, shellOf } from "../render";

interface Domain {
  custom_domain_id: string;
  domain: string;
  primary?: boolean;
  status: string;
  type: string;
  origin_domain_name?: string;
  verification?: { methods?: { name: string; record: string; domain?: string }[]; status?: string; error_msg?: string; last_verified_at?: string };
  certificate?: { status?: string; error_msg?: string };
  tls_policy?: string;
}

const TYPES = [
  ["auth0_managed_certs", "Managed certificate"],
  ["self_managed_certs", "Self-managed certificate"],
] as const;

const idOf = (c: ConsoleContext) => encodeURIComponent(c.req.param("id") as string);

/** GET /admin/t/:tenant/domains: the custom domains (GET /custom-domains) and the add form. */
export async function domainsScreen(c: ConsoleContext, outcome: Outcome = {}): Promise<Response> {
  const tenant = tenantOf(c);
  const list = await c.var.api.get<Domain[]>(tenant, "/custom-domains");
  const domains = list.ok && Array.isArray(list.body) ? list.body : [];
  return sendConsolePage(
    c,
    shellOf(c, "Custom domains", { tenant, section: "domains" }),
    <>
      <h1>Custom domains</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error ?? list.error} />
      <DataTable
        caption={`Custom domains of ${tenant}`}
        rows={domains}
        columns={[
          { label: "Domain", cell: (d) => <a href={tenantPath(tenant, `/domains/${encodeURIComponent(d.custom_domain_id)}`)}>{d.domain}</a> },
          { label: "Status", cell: (d) => d.status },
          { label: "Verification", cell: (d) => d.verification?.status ?? "" },
          { label: "Certificate", cell: (d) => TYPES.find(([v]) => v === d.type)?.[1] ?? d.type },
          { label: "Primary", cell: (d) => (d.primary ? "Yes" : "") },
        ]}
        empty="No custom domain yet: the tenant answers on its Gatehouse host only."
      />
      {can(c, "create:custom_domains") ? (
        <>
          <h2>Add a custom domain</h2>
          <form method="post" action={tenantPath(tenant, "/domains")} class="card">
            <Csrf token={c.var.operator.csrf} />
            <Field name="domain" label="Domain" required hint="For example login.example.com. You then add the DNS record the domain's page shows." />
            <div class="field">
              <label for="f-type">Certificate</label>
              <select id="f-type" name="type">
                {TYPES.map(([value, label]) => (
                  <option value={value}>{label}</option>
                ))}
              </select>
            </div>
            <button type="submit">Add domain</button>
          </form>
        </>
      ) : null}
    </>,
    outcome.status ?? readStatus(list),
  );
}

/** POST .../domains: POST /custom-domains, then the new domain's page (its DNS records). */
export async function addDomain(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const form = await c.req.parseBody();
  const created = await c.var.api.post<Domain>(tenant, "/custom-domains", { domain: str(form.domain).trim(), type: str(form.type) });
  if (!created.ok) return domainsScreen(c, { error: created.error, status: statusOf(created.status) });
  return c.redirect(tenantPath(tenant, `/domains/${encodeURIComponent(created.body.custom_domain_id)}`), 303);
}

/** GET /admin/t/:tenant/domains/:id: one domain's status, its DNS records, verify and delete (GET /custom-domains/{id}). */
export async function domainScreen(c: ConsoleContext, outcome: Outcome = {}, known?: Domain): Promise<Response> {
  const tenant = tenantOf(c);
  const read = known ? { ok: true, status: 200, body: known, error: null } : await c.var.api.get<Domain>(tenant, `/custom-domains/${idOf(c)}`);
  if (!read.ok) return domainsScreen(c, { error: read.error, status: statusOf(read.status) });
  const d = read.body;
  const base = tenantPath(tenant, `/domains/${idOf(c)}`);
  const csrf = c.var.operator.csrf;
  return sendConsolePage(
    c,
    shellOf(c, d.domain, { tenant, section: "domains" }),
    <>
      <p>
        <a href={tenantPath(tenant, "/domains")}>All custom domains</a>
      </p>
      <h1>{d.domain}</h1>
      <Notice message={outcome.notice} />
      <ApiError message={outcome.error} />
      <div class="card">
        <p>
          Status: <strong>{d.status}</strong> · Verification: {d.verification?.status ?? "not run"}
          {d.verification?.last_verified_at ? ` (last ${when(d.verification.last_verified_at)})` : ""}
          {d.certificate?.status ? ` · Certificate: ${d.certificate.status}` : ""}
          {d.primary ? " · Primary" : ""}
        </p>
        {d.verification?.error_msg ? <p class="error">{d.verification.error_msg}</p> : null}
        {d.certificate?.error_msg ? <p class="error">{d.certificate.error_msg}</p> : null}
        {d.origin_domain_name ? (
          <p>
            Origin: <code>{d.origin_domain_name}</code>
          </p>
        ) : null}
      </div>
      <h2>DNS records</h2>
      <DataTable
        caption={`DNS records that verify ${d.domain}`}
        rows={d.verification?.methods ?? []}
        columns={[
          { label: "Type", cell: (m) => m.name.toUpperCase() },
          { label: "Name", cell: (m) => <code>{m.domain ?? d.domain}</code> },
          { label: "Value", cell: (m) => <code>{m.record}</code> },
        ]}
        empty="No record to add."
      />
      {can(c, "create:custom_domains") ? (
        <form method="post" action={`${base}/verify`} class="card">
          <Csrf token={csrf} />
          <p>Once the record is in DNS, verification checks it and the certificate is issued.</p>
          <button type="submit">Verify now</button>
        </form>
      ) : null}
      {can(c, "delete:custom_domains") ? (
        <>
          <h2>Danger zone</h2>
          <form method="post" action={`${base}/delete`} class="card">
            <Csrf token={csrf} />
            <p>The tenant stops answering on this domain at once. Deleting asks for your password again unless you logged in during the last five minutes.</p>
            <button type="submit" class="danger">
              Delete domain
            </button>
          </form>
        </>
      ) : null}
    </>,
    outcome.status ?? 200,
  );
}

/** POST .../domains/:id/verify: POST /custom-domains/{id}/verify; the page shows the answer's status. */
export async function verifyDomain(c: ConsoleContext): Promise<Response> {
  const verified = await c.var.api.post<Domain>(tenantOf(c), `/custom-domains/${idOf(c)}/verify`);
  if (!verified.ok) return domainScreen(c, outcomeOf(verified, ""));
  return domainScreen(c, { notice: `Verification ran: the domain is ${verified.body.status}.` }, verified.body);
}

/** POST .../domains/:id/delete: step-up, then DELETE /custom-domains/{id}. */
export async function deleteDomain(c: ConsoleContext): Promise<Response> {
  const tenant = tenantOf(c);
  const stepUp = stepUpRequired(c, tenantPath(tenant, `/domains/${idOf(c)}`));
  if (stepUp) return stepUp;
  const deleted = await c.var.api.delete(tenant, `/custom-domains/${idOf(c)}`);
  if (!deleted.ok) return domainScreen(c, outcomeOf(deleted, ""));
  return domainsScreen(c, { notice: "Domain deleted." });
}
