import { problem } from "../../shared/errors";
import type { AppContext } from "../context";
import { tenantObject } from "../tenant/stubs";
import { exportFileName, linkIsValid } from "./export-link";

/** Lines fetched from the tenant object per round trip while streaming. @default 2,000 */
const PAGE_LINES = 2_000;

const FILE = /^(job_[A-Za-z0-9]{16})\.(json|csv)\.gz$/;

/**
 * GET /jobs-exports/{tenant}/{job}.{json|csv}.gz: a completed export, gzip-compressed, streamed page by page
 * from the tenant object. Only a genuine, unexpired signed link opens it (export-link.ts); anything else,
 * including an unknown job, answers the same 403 so links cannot be probed.
 */
export async function exportDownload(c: AppContext): Promise<Response> {
  const tenant = c.req.param("tenant") ?? "";
  const match = FILE.exec(c.req.param("file") ?? "");
  if (!match) throw problem("export_link_invalid");
  const [, jobId, format] = match as unknown as [string, string, "json" | "csv"];
  if (!(await linkIsValid(c.env.ENCRYPTION_KEY, tenant, jobId, c.req.query("expires"), c.req.query("signature")))) throw problem("export_link_invalid");
  const jobs = tenantObject(c.env, tenant).jobs();
  const first = await jobs.exportLines(jobId, 0, PAGE_LINES);
  if (!first.ok) throw problem("export_link_invalid");
  const encoder = new TextEncoder();
  let from = 0;
  let page: string[] | null = first.value;
  const lines = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (page === null) {
        const next = await jobs.exportLines(jobId, from, PAGE_LINES);
        page = next.ok ? next.value : [];
      }
      if (page.length === 0) {
        controller.close();
        return;
      }
      controller.enqueue(encoder.encode(`${page.join("\n")}\n`));
      from += page.length;
      page = page.length < PAGE_LINES ? [] : null;
    },
  });
  return new Response(lines.pipeThrough(new CompressionStream("gzip")), {
    headers: {
      "Content-Type": "application/gzip",
      "Content-Disposition": `attachment; filename="${exportFileName(jobId, format)}"`,
      "Cache-Control": "no-store",
    },
  });
}
