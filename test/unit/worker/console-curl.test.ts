import { describe, expect, it } from "vitest";
import { ApiClient, curlOf } from "../../../src/worker/admin/api";

/** A client whose transport records the request it sends and answers `status` with `body`. */
function clientAnswering(status: number, body: unknown) {
  const sent: Request[] = [];
  const client = new ApiClient(
    {
      issuer: "https://id.example.com/",
      forwarded: {},
      send: async (request) => {
        sent.push(request);
        return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
      },
    },
    "token-123",
  );
  return { client, sent };
}

describe("the console's multipart API call and its curl (issue 30 'Show the API call')", () => {
  it("sends multipart/form-data with the file, and prints the file as -F users=@file.json, never its content", async () => {
    const { client, sent } = clientAnswering(201, { id: "job_1", status: "pending" });
    const form = new FormData();
    form.append("users", new Blob(['[{"email":"ann@example.com"}]'], { type: "application/json" }), "people.json");
    form.append("connection_id", "con_1");
    form.append("upsert", "true");
    form.append("external_id", "@not-a-file 'quoted'");
    const result = await client.postForm("acme", "/jobs/users-imports", form);
    expect(result).toMatchObject({ ok: true, status: 201, body: { id: "job_1" }, error: null });
    const request = sent[0] as Request;
    expect(request.headers.get("content-type")).toMatch(/^multipart\/form-data; boundary=/);
    expect(request.headers.get("authorization")).toBe("Bearer token-123");
    const received = await request.formData();
    expect(await (received.get("users") as File).text()).toBe('[{"email":"ann@example.com"}]');
    expect(received.get("connection_id")).toBe("con_1");
    const curl = curlOf(client.calls[0] as NonNullable<(typeof client.calls)[0]>);
    expect(curl).toBe(
      [
        "curl -X POST 'https://id.example.com/api/v2/jobs/users-imports'",
        `-H "authorization: Bearer $TOKEN"`,
        "-H 'tenant-id: acme'",
        "-F users=@file.json",
        "-F 'connection_id=con_1'",
        "-F 'upsert=true'",
        "--form-string 'external_id=@not-a-file '\\''quoted'\\'''",
      ].join(" \\\n  "),
    );
    expect(curl).not.toContain("ann@example.com");
  });

  it("keeps the API's refusal and status for a multipart call, as for JSON calls", async () => {
    const { client } = clientAnswering(413, { statusCode: 413, error: "Payload Too Large", message: "The users file exceeds 512000 bytes; split it into several jobs", errorCode: "payload_too_large" });
    const result = await client.postForm("acme", "/jobs/users-imports", new FormData());
    expect(result).toMatchObject({ ok: false, status: 413, error: "The users file exceeds 512000 bytes; split it into several jobs" });
    expect(client.calls[0]).toMatchObject({ method: "POST", status: 413, form: [] });
  });

  it("redacts a log stream's authorization header and custom headers in the printed JSON body", async () => {
    const { client } = clientAnswering(201, { id: "lst_1" });
    await client.post("acme", "/log-streams", { type: "http", sink: { httpEndpoint: "https://logs.example.com/", httpAuthorization: "Bearer s3cret", httpCustomHeaders: [{ header: "x-key", value: "k3y" }] } });
    const curl = curlOf(client.calls[0] as NonNullable<(typeof client.calls)[0]>);
    expect(curl).toContain('"httpAuthorization":"REDACTED"');
    expect(curl).toContain('"httpCustomHeaders":"REDACTED"');
    expect(curl).not.toMatch(/s3cret|k3y/);
  });
});
