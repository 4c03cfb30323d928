import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/e2e-server.mjs";
import { launchChromium, newRecordedContext } from "./helpers/browser";
import { type StartedScript, startScript } from "./helpers/start-script";

/**
 * The README's 5-minute tour works when followed literally (issue 27 point 4). The ```sh blocks under its
 * heading run in order in ONE bash session (as a person pastes them into one terminal, so variables carry over),
 * against the real `npm start` script on a free port with its data in a throwaway GATEHOUSE_LOCAL_DIR. Only what
 * the README says to substitute is substituted: the port for 8787, the printed client_secret, the code from the
 * browser's address bar and the printed `export NODE_EXTRA_CA_CERTS=...` line. A block that is just `npm start`
 * (or `npm start -- --https`) is that terminal's server: the test starts it (and restarts it on the same data).
 * The browser step is headless Chromium opening the URL the tour prints.
 */

const TOUR_HEADING = "## A 5-minute tour";
const SECRET_PLACEHOLDER = "<the Control-plane client_secret npm start printed>";
const CODE_PLACEHOLDER = "<the code from the address bar>";

/** The fenced ```sh blocks of the tour section, in order. */
function tourBlocks(readme: string): string[] {
  const start = readme.indexOf(`\n${TOUR_HEADING}\n`);
  if (start < 0) throw new Error(`README.md has no "${TOUR_HEADING}" section`);
  const rest = readme.slice(start + TOUR_HEADING.length + 2);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1].trimEnd());
}

const BLOCKS = tourBlocks(readFileSync(join(ROOT, "README.md"), "utf8"));

/**
 * One interactive-like bash session: each block is written to its stdin, followed by markers on stdout and
 * stderr; a block is done when both markers have come back.
 */
class Shell {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = "";
  private err = "";
  private seq = 0;

  constructor(env: NodeJS.ProcessEnv) {
    this.child = spawn("bash", ["--noprofile", "--norc"], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.out += chunk.toString();
    });
    this.child.stderr.on("data", (chunk: Buffer) => {
      this.err += chunk.toString();
    });
  }

  run(block: string, timeoutMs = 90_000): Promise<{ status: number; stdout: string; stderr: string }> {
    const marker = `__tour_block_${++this.seq}__`;
    const outFrom = this.out.length;
    const errFrom = this.err.length;
    this.child.stdin.write(`${block}\necho "${marker} $?"; echo "${marker}" >&2\n`);
    return new Promise((resolve, reject) => {
      const started = Date.now();
      const poll = setInterval(() => {
        const out = this.out.slice(outFrom);
        const err = this.err.slice(errFrom);
        const done = new RegExp(`${marker} (\\d+)\\n`).exec(out);
        if (done && err.includes(`${marker}\n`)) {
          clearInterval(poll);
          resolve({ status: Number(done[1]), stdout: out.slice(0, done.index), stderr: err.slice(0, err.indexOf(marker)) });
        } else if (Date.now() - started > timeoutMs || this.child.exitCode !== null) {
          clearInterval(poll);
          reject(new Error(`block did not finish (${this.child.exitCode ?? "timeout"}):\n${block}\nstdout:\n${out}\nstderr:\n${err}`));
        }
      }, 50);
    });
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill("SIGTERM");
  }
}

describe("the README's 5-minute tour, followed literally", () => {
  let server: StartedScript | undefined;
  let localDir: string | undefined;
  let shell: Shell | undefined;
  let browser: Browser | undefined;
  /** Values the tour prints that a later block is told to paste. */
  let secret = "";
  let code = "";
  const used = new Set<string>();

  afterAll(async () => {
    shell?.close();
    await browser?.close();
    await server?.stop({ keepLocalDir: true });
    if (localDir) await rm(localDir, { recursive: true, force: true });
  }, 60_000);

  it("has the blocks a person follows: start, token, tenant, application, user, login, SDK", () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(7);
    expect(BLOCKS[0]).toBe("npm start");
    expect(BLOCKS).toContain("npm start -- --https");
  });

  /** What the README tells the reader to substitute, applied to one block. */
  function substitute(block: string, port: number): string {
    let text = block.replaceAll("8787", String(port));
    if (text.includes(SECRET_PLACEHOLDER)) {
      used.add("secret");
      text = text.replaceAll(SECRET_PLACEHOLDER, secret);
    }
    if (text.includes(CODE_PLACEHOLDER)) {
      used.add("code");
      expect(code, "the tour asks for the code before the browser step gave one").not.toBe("");
      text = text.replaceAll(CODE_PLACEHOLDER, code);
    }
    if (/^export NODE_EXTRA_CA_CERTS=.*$/m.test(text)) {
      used.add("ca");
      const printed = server?.lineAfter("Node clients (the auth0 SDK, openid-client) trust it with:") ?? "";
      expect(printed).toMatch(/^export NODE_EXTRA_CA_CERTS=/);
      text = text.replace(/^export NODE_EXTRA_CA_CERTS=.*$/m, printed);
    }
    return text;
  }

  /** The browser step: open the printed URL, log in with the tour's user, read the code off the callback URL. */
  async function logIn(url: string, email: string, password: string): Promise<string> {
    browser ??= await launchChromium();
    const { context, page } = await newRecordedContext(browser);
    try {
      const callback = new URL(url).searchParams.get("redirect_uri") as string;
      await page.goto(url);
      await page.getByLabel("Email address").fill(email);
      await page.getByLabel("Password", { exact: true }).fill(password);
      const landed = page.waitForRequest((request) => request.url().startsWith(callback));
      await page.getByRole("button", { name: "Continue" }).click();
      const target = new URL((await landed).url());
      expect(target.searchParams.get("state")).toBe("tour");
      return target.searchParams.get("code") as string;
    } finally {
      await context.close();
    }
  }

  BLOCKS.forEach((block, index) => {
    it(`block ${index + 1}: ${block.split("\n")[0]}`, async () => {
      if (block === "npm start" || block === "npm start -- --https") {
        const https = block.endsWith("--https");
        if (server) {
          // Ctrl-C, then the same command again: same port, same data.
          await server.stop({ keepLocalDir: true });
          server = await startScript(https ? ["--https"] : [], {}, { port: server.port, localDir });
        } else {
          server = await startScript(https ? ["--https"] : []);
          // Restarts reuse it; afterAll removes it.
          localDir = server.localDir;
        }
        secret = server.field("Control-plane client_secret:");
        expect(server.field("Issuer:")).toBe(`${https ? "https" : "http"}://localhost:${server.port}/`);
        const { ISSUER: _issuer, HTTPS: _https, NODE_EXTRA_CA_CERTS: _ca, ...env } = process.env;
        shell ??= new Shell(env);
        return;
      }
      if (!server || !shell) throw new Error("the tour runs a command before `npm start`");
      const { status, stdout, stderr } = await shell.run(substitute(block, server.port));
      const context = `block:\n${block}\nstdout:\n${stdout}\nstderr:\n${stderr}`;
      expect(status, context).toBe(0);

      if (block.includes("TOKEN=$(curl") && block.includes("client_credentials")) {
        expect(stdout.trim(), context).toMatch(/^eyJ/); // a JWT: the management token
      } else if (block.includes("/api/v2/tenants")) {
        expect(JSON.parse(stdout), context).toMatchObject({ id: "acme" });
      } else if (block.includes("/api/v2/clients")) {
        expect(stdout.trim(), context).toMatch(/^[A-Za-z0-9_-]{16,}$/); // the printed client_id
      } else if (block.includes("/api/v2/users")) {
        const user = JSON.parse(stdout) as { user_id: string; email: string };
        expect(user.user_id, context).toMatch(/^auth0\|/);
      } else if (block.includes("/authorize?")) {
        const url = stdout.trim().split("\n").at(-1) as string;
        expect(url, context).toMatch(new RegExp(`^http://acme\\.localhost:${server.port}/authorize\\?`));
        // Who logs in: the user the tour created (its email and password in the users block's body).
        const usersBlock = BLOCKS.find((b) => b.includes("/api/v2/users")) as string;
        const email = /"email":"([^"]+)"/.exec(usersBlock)?.[1] as string;
        const password = /"password":"([^"]+)"/.exec(usersBlock)?.[1] as string;
        code = await logIn(url, email, password);
        expect(code).toBeTruthy();
      } else if (block.includes("/userinfo")) {
        expect(JSON.parse(stdout), context).toMatchObject({ email: "ada@example.com", sub: expect.stringMatching(/^auth0\|/) });
      } else if (block.includes("ManagementClient")) {
        expect(stdout, context).toContain("ada@example.com");
        expect(stdout, context).toMatch(/logins_count: 1/);
      } else {
        throw new Error(`a tour block this test does not know how to check:\n${block}`);
      }
    }, 300_000);
  });

  it("substituted exactly what the README says to: the secret, the code and the CA line", () => {
    expect([...used].sort()).toEqual(["ca", "code", "secret"]);
  });
});
