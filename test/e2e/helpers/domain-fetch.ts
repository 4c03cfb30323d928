import { request as httpRequest } from "node:http";

/**
 * Node's fetch for one custom domain: the name does not resolve here, so requests to it go to 127.0.0.1 with
 * the real Host header (what a DNS record would do). Other URLs use the global fetch.
 */
export function domainFetch(domain: string): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.hostname !== domain) return fetch(request);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers = Object.fromEntries(request.headers);
    headers.host = url.host;
    if (body) headers["content-length"] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: url.port || 80, method: request.method, path: `${url.pathname}${url.search}`, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const responseHeaders = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
          const nullBody = [204, 304].includes(res.statusCode ?? 0) || request.method === "HEAD";
          resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status: res.statusCode, headers: responseHeaders }));
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  }) as typeof fetch;
}
