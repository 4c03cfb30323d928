import { encryptionContext } from "../../../shared/crypto/contexts";
import { fieldCipher } from "../../../shared/crypto/encryption";
import { problem, unwrap } from "../../../shared/errors";
import { createLogStreamBody, type LogStreamSinkInput, updateLogStreamBody } from "../../../shared/schemas/log-streams";
import type { LogStreamInput, LogStreamRecord } from "../../../shared/schemas/log-streams";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { refuseEgress } from "../egress";
import { targetTenant } from "../tenant-scoped";

interface SinkSecrets {
  httpAuthorization?: string;
  httpCustomHeaders?: { header: string; value: string }[];
}

/** The public half of a sink (what responses show) and its credentials sealed under log_stream_sink:<id>. */
async function splitSink(c: AppContext, id: string, sink: LogStreamSinkInput): Promise<{ sink: LogStreamRecord["sink"]; sink_enc: string | null }> {
  const secrets: SinkSecrets = {
    ...(sink.httpAuthorization ? { httpAuthorization: sink.httpAuthorization } : {}),
    ...(sink.httpCustomHeaders?.length ? { httpCustomHeaders: sink.httpCustomHeaders } : {}),
  };
  const sealed = Object.keys(secrets).length ? await (await fieldCipher(c.env.ENCRYPTION_KEY)).encrypt(JSON.stringify(secrets), encryptionContext.logStreamSink(id)) : null;
  return {
    sink: {
      httpEndpoint: sink.httpEndpoint,
      httpContentType: sink.httpContentType ?? "application/json",
      httpContentFormat: sink.httpContentFormat ?? "JSONARRAY",
      ...(sink.httpCustomHeaders?.length ? { httpCustomHeaders: sink.httpCustomHeaders.map((h) => ({ header: h.header })) } : {}),
    },
    sink_enc: sealed,
  };
}

/** The audited request body: credentials never reach a log row. */
const scrubbed = (body: { sink?: Partial<LogStreamSinkInput> | undefined }) =>
  body.sink
    ? {
        ...body,
        sink: {
          ...body.sink,
          ...(body.sink.httpAuthorization !== undefined ? { httpAuthorization: "[REDACTED]" } : {}),
          ...(body.sink.httpCustomHeaders ? { httpCustomHeaders: body.sink.httpCustomHeaders.map((h) => ({ header: h.header, value: "[REDACTED]" })) } : {}),
        },
      }
    : body;

export const logStreamRoutes = [
  defineRoute({
    method: "get",
    path: "/log-streams",
    scope: "read:log_streams",
    summary: "List log streams (credentials never shown)",
    status: 200,
    async handler(c) {
      return c.json(await targetTenant(c).logStreams().list());
    },
  }),
  defineRoute({
    method: "post",
    path: "/log-streams",
    scope: "create:log_streams",
    summary: "Create an http log stream: endpoint, authorization header and custom headers (sealed), content type, format, category filters",
    body: createLogStreamBody,
    status: 201,
    async handler(c, { body }) {
      refuseEgress(c, "sink.httpEndpoint", [body.sink.httpEndpoint]);
      const id = `lst_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
      const split = await splitSink(c, id, body.sink);
      c.set("requestBody", scrubbed(body));
      const input: LogStreamInput = { name: body.name ?? `http-${id.slice(-6)}`, status: "active", isPriority: body.isPriority ?? false, filters: body.filters ?? [], ...split };
      const created = await targetTenant(c).logStreams(auditContext(c)).create(id, input, body.startFrom ? Date.parse(body.startFrom) : null);
      return c.json(created, 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/log-streams/{id}",
    scope: "read:log_streams",
    summary: "Get a log stream",
    status: 200,
    async handler(c, { params }) {
      const stream = await targetTenant(c).logStreams().get(params.id);
      if (!stream) throw problem("inexistent_log_stream");
      return c.json(stream);
    },
  }),
  defineRoute({
    method: "patch",
    path: "/log-streams/{id}",
    scope: "update:log_streams",
    summary: "Update a log stream; status active resumes a paused or suspended one; sink fields not sent are kept",
    body: updateLogStreamBody,
    status: 200,
    async handler(c, { params, body }) {
      refuseEgress(c, "sink.httpEndpoint", [body.sink?.httpEndpoint]);
      const stub = targetTenant(c).logStreams();
      const [current, sealed] = await Promise.all([stub.get(params.id), stub.sealed(params.id)]);
      if (!current) throw problem("inexistent_log_stream");
      let sink: Pick<LogStreamInput, "sink" | "sink_enc"> = { sink: current.sink, sink_enc: sealed };
      if (body.sink) {
        const kept: SinkSecrets = sealed ? JSON.parse(await (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(sealed, encryptionContext.logStreamSink(params.id))) : {};
        const merged = {
          httpEndpoint: body.sink.httpEndpoint ?? current.sink.httpEndpoint,
          httpContentType: body.sink.httpContentType ?? current.sink.httpContentType,
          httpContentFormat: body.sink.httpContentFormat ?? current.sink.httpContentFormat,
          ...((body.sink.httpAuthorization ?? kept.httpAuthorization) !== undefined ? { httpAuthorization: body.sink.httpAuthorization ?? kept.httpAuthorization } : {}),
          ...((body.sink.httpCustomHeaders ?? kept.httpCustomHeaders) ? { httpCustomHeaders: body.sink.httpCustomHeaders ?? kept.httpCustomHeaders } : {}),
        } as LogStreamSinkInput;
        sink = await splitSink(c, params.id, merged);
      }
      c.set("requestBody", scrubbed(body));
      const input: LogStreamInput = {
        name: body.name ?? current.name,
        status: body.status ?? current.status,
        isPriority: body.isPriority ?? current.isPriority,
        filters: body.filters ?? current.filters,
        ...sink,
      };
      return c.json(unwrap(await targetTenant(c).logStreams(auditContext(c)).update(params.id, input)));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/log-streams/{id}",
    scope: "delete:log_streams",
    summary: "Delete a log stream",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).logStreams(auditContext(c)).delete(params.id));
      return c.body(null, 204);
    },
  }),
];
