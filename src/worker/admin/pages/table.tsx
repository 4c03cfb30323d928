import type { Child } from "hono/jsx";
import type { JSX } from "hono/jsx/jsx-runtime";

/** A column of a console table: its heading and what a row shows in it (text or markup, such as a link). */
export interface Column<R> {
  label: string;
  cell: (row: R) => Child;
}

/**
 * The console's one table (issue 30): a caption, a header row of `scope="col"` headings, a row per record,
 * and an optional line when there is no record. Every list screen (tenants, users, logs, the generic lists)
 * renders through it.
 */
export function DataTable<R>(props: { caption: string; columns: Column<R>[]; rows: R[]; empty?: string }): JSX.Element {
  return (
    <>
      <table>
        <caption class="muted">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((col) => (
              <th scope="col">{col.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr>
              {props.columns.map((col) => (
                <td>{col.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {props.empty && !props.rows.length ? <p class="muted">{props.empty}</p> : null}
    </>
  );
}
