import { problem, type Result, unwrap } from "../../../shared/errors";
import { createExportBody, verificationEmailBody } from "../../../shared/schemas/jobs";
import type { ImportRowFailure, JobRecord } from "../../../shared/types";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { exportLocation } from "../../jobs/export-link";
import { readImportRequest } from "../../jobs/import-request";
import { presentJob } from "../../jobs/present";
import { sendVerificationEmail } from "../../jobs/verification-email";
import { configOf } from "../../login/connection";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";

/** A job as answered, with a fresh signed download link when it is a completed export. */
async function answerJob(c: AppContext, job: JobRecord): Promise<Record<string, unknown>> {
  const location =
    job.type === "users_export" && job.status === "completed"
      ? await exportLocation(new URL(c.req.url).origin, c.env.ENCRYPTION_KEY, c.var.tenant.id, job.id, job.format ?? "json")
      : undefined;
  return presentJob(job, location);
}

/**
 * Bulk user import and export jobs (issue 14 point 5; SPEC §4.2 "Failed events and jobs"). Scopes as the
 * reference platform documents them: imports `create:users`, exports `read:users`, job reads `read:users`
 * or `create:users`.
 */
export const jobRoutes = [
  defineRoute({
    method: "post",
    path: "/jobs/users-imports",
    scope: "create:users",
    summary:
      "Import users from a JSON file (multipart: users, connection_id, upsert, external_id, send_completion_email) into a database connection; the rows are staged before the answer and processed in chunks",
    status: 201,
    async handler(c) {
      const request = await readImportRequest(c);
      const job = await targetTenant(c)
        .jobs(auditContext(c))
        .stageImport({
          connection_id: request.connection.id,
          connection: request.connection.name,
          upsert: request.upsert,
          external_id: request.external_id,
          send_completion_email: request.send_completion_email,
          rows: request.rows,
          audit: auditContext(c),
        });
      return c.json(presentJob(job), 201);
    },
  }),
  defineRoute({
    method: "post",
    path: "/jobs/users-exports",
    scope: "read:users",
    summary: "Export the tenant's users (or one connection's) as gzipped JSON lines or CSV, downloadable from the job's signed location",
    body: createExportBody,
    status: 201,
    async handler(c, { body }) {
      let connection: { id: string; name: string } | null = null;
      if (body.connection_id !== undefined) {
        const found = (await configOf(c)).connections.find((x) => x.id === body.connection_id);
        if (!found) throw problem("import_connection_not_found");
        connection = found;
      }
      const job = await targetTenant(c)
        .jobs(auditContext(c))
        .queueExport({
          connection_id: connection?.id ?? null,
          connection: connection?.name ?? null,
          format: body.format ?? "csv",
          limit: body.limit ?? null,
          fields: body.fields ?? null,
          audit: auditContext(c),
        });
      return c.json(presentJob(job), 201);
    },
  }),
  defineRoute({
    method: "post",
    path: "/jobs/verification-email",
    scope: "update:users",
    summary:
      "Send the user (or the chosen identity) an email with a single-use link, valid 5 days, that marks the address verified; answers the verification_email job, pending until the relay sent the email (then completed, or failed once it gives up)",
    body: verificationEmailBody,
    status: 201,
    async handler(c, { body }) {
      return c.json(presentJob(await sendVerificationEmail(c, body)), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/jobs/{id}",
    scope: "read:users",
    alsoScopes: ["create:users"],
    summary: "A job's status, progress (percentage_done, summary) and, for a completed export, its download location",
    status: 200,
    async handler(c, { params }) {
      const job = await targetTenant(c).jobs().get(params.id);
      if (!job) throw problem("inexistent_job");
      return c.json(await answerJob(c, job));
    },
  }),
  defineRoute({
    method: "get",
    path: "/jobs/{id}/errors",
    scope: "read:users",
    alsoScopes: ["create:users"],
    summary: "An import's failed rows ([{user, errors: [{code, message, path}]}], password hashes removed); 204 when there are none",
    status: 200,
    async handler(c, { params }) {
      const tenant = targetTenant(c);
      const failures: ImportRowFailure[] = unwrap((await tenant.jobs().errors(params.id)) as Result<ImportRowFailure[]>);
      if (failures.length) return c.json(failures);
      const job = await tenant.jobs().get(params.id);
      // A halted job without row errors answers the job itself, with its status details (the reference shape).
      if (job?.status === "failed") return c.json(await answerJob(c, job));
      return c.body(null, 204);
    },
  }),
];
