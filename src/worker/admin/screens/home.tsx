import type { ConsoleContext } from "../context";
import { DailyChart, type DayCount } from "../pages/chart";
import { ApiError, tenantPath } from "../pages/parts";
import { sendConsolePage, shellOf } from "../render";

interface DailyStat {
  date: string;
  logins?: number;
  signups?: number;
  failed_logins?: number;
}

const DAY_MS = 86_400_000;
const RANGES = [7, 30, 90] as const;
const yyyymmdd = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll("-", "");

/** Every UTC day of the range with its counts, zero where the API has no record (it answers active days only). */
export function denseDays(stats: DailyStat[], days: number, today: number): { day: string; logins: number; signups: number; failed: number }[] {
  const byDay = new Map(stats.map((s) => [s.date.slice(0, 10), s]));
  const start = Math.floor(today / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
  return Array.from({ length: days }, (_, i) => {
    const day = new Date(start + i * DAY_MS).toISOString().slice(0, 10);
    const s = byDay.get(day);
    return { day, logins: s?.logins ?? 0, signups: s?.signups ?? 0, failed: s?.failed_logins ?? 0 };
  });
}

/**
 * GET /admin/t/:tenant/home: the tenant at a glance (issue 30): active users, and charts of logins, sign-ups
 * and failed logins per day, from GET /api/v2/stats/daily and /stats/active-users; a table holds the same data.
 */
export async function homeScreen(c: ConsoleContext): Promise<Response> {
  const tenant = c.req.param("tenant") as string;
  const asked = Number(c.req.query("days"));
  const days = (RANGES as readonly number[]).includes(asked) ? asked : 30;
  const today = Date.now();
  const [daily, active] = await Promise.all([
    c.var.api.get<DailyStat[]>(tenant, "/stats/daily", { from: yyyymmdd(today - (days - 1) * DAY_MS), to: yyyymmdd(today) }),
    c.var.api.get<number>(tenant, "/stats/active-users"),
  ]);
  const rows = daily.ok && Array.isArray(daily.body) ? denseDays(daily.body, days, today) : [];
  const series = (key: "logins" | "signups" | "failed"): DayCount[] => rows.map((r) => ({ day: r.day, value: r[key] }));
  const shell = shellOf(c, "Home", { tenant, section: "home" });
  // The API's refusal is the page's status (a tenant that does not exist or is not the operator's).
  const status = daily.ok || (daily.status !== 403 && daily.status !== 404) ? 200 : daily.status;
  return sendConsolePage(
    c,
    shell,
    <>
      <h1>Home</h1>
      <ApiError message={daily.error ?? active.error} />
      {active.ok ? (
        <p class="card stat">
          <span class="figure">{String(active.body)}</span> active users <span class="muted">(distinct users who logged in during the last 30 days)</span>
        </p>
      ) : null}
      <nav class="row" aria-label="Range">
        {RANGES.map((n) => (
          <a href={tenantPath(tenant, `/home?days=${n}`)} aria-current={n === days ? "page" : undefined}>
            Last {n} days
          </a>
        ))}
        <a href={tenantPath(tenant, `/logs`)}>Logs</a>
      </nav>
      {daily.ok ? (
        <>
          <div class="charts">
            <DailyChart id="chart-logins" title={`Logins per day, last ${days} days`} series={series("logins")} colour="#0969da" />
            <DailyChart id="chart-signups" title={`Sign-ups per day, last ${days} days`} series={series("signups")} colour="#1a7f37" />
            <DailyChart id="chart-failed" title={`Failed logins per day, last ${days} days`} series={series("failed")} colour="#cf222e" />
          </div>
          <details>
            <summary>The same figures as a table</summary>
            <table>
              <caption class="muted">{`Logins, sign-ups and failed logins per day (UTC) of ${tenant}`}</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Logins</th>
                  <th scope="col">Sign-ups</th>
                  <th scope="col">Failed logins</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr>
                    <th scope="row">{r.day}</th>
                    <td>{String(r.logins)}</td>
                    <td>{String(r.signups)}</td>
                    <td>{String(r.failed)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      ) : null}
    </>,
    status,
  );
}
