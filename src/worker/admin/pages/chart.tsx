import type { FC } from "hono/jsx";

/** One point of a daily series: the day (YYYY-MM-DD) and its count. */
export interface DayCount {
  day: string;
  value: number;
}

const WIDTH = 640;
const HEIGHT = 180;
const PAD = { left: 44, right: 12, top: 14, bottom: 28 };

/** A round upper bound for the axis (1, 2, 5 × 10^n), never below 1. */
export function axisMax(max: number): number {
  if (max <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * A server-rendered bar chart of one daily series (issue 30 home): an SVG with `role="img"`, its title and a
 * description that states the figures (total, busiest day), so a screen reader has the chart's content; the
 * page's data table is the full fallback. Colours are presentation attributes (the CSP admits no inline style).
 */
export const DailyChart: FC<{ id: string; title: string; series: DayCount[]; colour: string }> = ({ id, title, series, colour }) => {
  const max = axisMax(Math.max(0, ...series.map((p) => p.value)));
  const total = series.reduce((sum, p) => sum + p.value, 0);
  const busiest = series.reduce<DayCount | null>((best, p) => (p.value > (best?.value ?? 0) ? p : best), null);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, series.length);
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const first = series[0]?.day ?? "";
  const last = series.at(-1)?.day ?? "";
  const description = `${total} in all from ${first} to ${last}${busiest ? `; the busiest day was ${busiest.day} with ${busiest.value}` : ""}.`;
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${id}-title ${id}-desc`} width="100%" preserveAspectRatio="xMidYMid meet">
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>{description}</desc>
        {[0, max / 2, max].map((v) => (
          <g>
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(v)} y2={y(v)} stroke="#d0d7de" stroke-width="1" />
            <text x={PAD.left - 6} y={y(v) + 4} text-anchor="end" font-size="11" fill="#57606a">
              {Number.isInteger(v) ? String(v) : v.toFixed(1)}
            </text>
          </g>
        ))}
        {series.map((p, i) => (
          <rect x={PAD.left + i * slot + (slot - barW) / 2} y={y(p.value)} width={barW} height={Math.max(0, PAD.top + plotH - y(p.value))} fill={colour}>
            <title>{`${p.day}: ${p.value}`}</title>
          </rect>
        ))}
        <text x={PAD.left} y={HEIGHT - 8} font-size="11" fill="#57606a">
          {first}
        </text>
        <text x={WIDTH - PAD.right} y={HEIGHT - 8} font-size="11" fill="#57606a" text-anchor="end">
          {last}
        </text>
      </svg>
      <figcaption>
        <strong>{title}</strong> <span class="muted">{description}</span>
      </figcaption>
    </figure>
  );
};
