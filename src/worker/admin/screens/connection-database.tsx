import type { FC } from "hono/jsx";
import { DB_SCRIPTS, type ScriptName, SCRIPT_NAMES } from "../../../shared/actions/db-scripts";
import type { MigrationReport } from "../../../shared/actions/migration-report";
import { Csrf } from "../pages/layout";
import { str } from "../pages/parts";
import { DataTable } from "../pages/table";

/**
 * The custom database part of a database connection's console page (issue 32 points 2 and 4): the scripts
 * and `configuration` (edited with the actions' editor, saved through PATCH /connections/{id}), and the
 * migration report of GET /connections/{id}/status in import mode. Configuration values are never shown:
 * the API answers them encrypted, and the page shows only their names; a value left empty keeps the stored one.
 */

/** How many new configuration entries the form offers at once. */
const NEW_ENTRIES = 2;

/** What the form edits, as read (or as submitted, when the API refused it). */
export interface DatabaseDraft {
  enabled: boolean;
  importMode: boolean;
  scripts: Partial<Record<ScriptName, string>>;
  /** The names of the stored configuration entries. */
  configurationKeys: string[];
}

export function draftOf(options: Record<string, unknown>): DatabaseDraft {
  const scripts = (options.customScripts && typeof options.customScripts === "object" ? options.customScripts : {}) as Record<string, unknown>;
  const configuration = (options.configuration && typeof options.configuration === "object" ? options.configuration : {}) as Record<string, unknown>;
  return {
    enabled: options.enabledDatabaseCustomization === true,
    importMode: options.import_mode === true,
    scripts: Object.fromEntries(SCRIPT_NAMES.filter((n) => typeof scripts[n] === "string").map((n) => [n, scripts[n] as string])),
    configurationKeys: Object.keys(configuration).sort(),
  };
}

/**
 * The options to PATCH from the form: the stored options, the form's switches and scripts (an empty one is
 * removed), and the configuration: a kept entry goes back as read (encrypted, so the API keeps the stored
 * value), a typed value replaces it, a ticked one is removed, and new name/value pairs are added.
 */
export function optionsFromForm(stored: Record<string, unknown>, form: Record<string, unknown>): { options: Record<string, unknown>; draft: DatabaseDraft } {
  const scripts: Partial<Record<ScriptName, string>> = {};
  for (const name of SCRIPT_NAMES) {
    const source = str(form[`script_${name}`]).replace(/\r\n/g, "\n");
    if (source.trim()) scripts[name] = source;
  }
  const read = (stored.configuration && typeof stored.configuration === "object" ? stored.configuration : {}) as Record<string, unknown>;
  const configuration: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(read)) {
    if (form[`remove_${key}`] === "true") continue;
    const typed = str(form[`config_${key}`]);
    configuration[key] = typed ? typed : value;
  }
  for (let i = 0; i < NEW_ENTRIES; i++) {
    const key = str(form[`new_key_${i}`]).trim();
    if (key) configuration[key] = str(form[`new_value_${i}`]);
  }
  const enabled = form.enabledDatabaseCustomization === "true";
  const importMode = form.import_mode === "true";
  const options: Record<string, unknown> = { ...stored, enabledDatabaseCustomization: enabled, import_mode: importMode, customScripts: scripts, configuration };
  return { options, draft: { enabled, importMode, scripts, configurationKeys: Object.keys(configuration).sort() } };
}

/** The scripts and configuration form. */
export const DatabaseForm: FC<{ action: string; csrf: string; draft: DatabaseDraft }> = ({ action, csrf, draft }) => (
  <form method="post" action={action} class="card">
    <Csrf token={csrf} />
    <div class="field">
      <label>
        <input type="checkbox" name="enabledDatabaseCustomization" value="true" checked={draft.enabled} /> Use my own database (the scripts below are the user store)
      </label>
    </div>
    <div class="field">
      <label>
        <input type="checkbox" name="import_mode" value="true" checked={draft.importMode} /> Import users to Gatehouse (each user moves, with their password, at their first login)
      </label>
    </div>
    {SCRIPT_NAMES.map((name) => (
      <div class="field">
        <label for={`f-script-${name}`}>
          {name} <code class="muted">{DB_SCRIPTS[name].signature}</code>
        </label>
        <textarea id={`f-script-${name}`} name={`script_${name}`} class="code" data-editor="javascript" spellcheck={false}>
          {draft.scripts[name] ?? ""}
        </textarea>
      </div>
    ))}
    <fieldset>
      <legend>Configuration (the scripts read it as `configuration`; values are stored encrypted and never shown)</legend>
      {draft.configurationKeys.map((key) => (
        <div class="field">
          <label for={`f-config-${key}`}>
            <code>{key}</code>
          </label>
          <input id={`f-config-${key}`} name={`config_${key}`} type="password" autocomplete="off" placeholder="(set; leave empty to keep)" value="" />
          <label>
            <input type="checkbox" name={`remove_${key}`} value="true" /> Remove {key}
          </label>
        </div>
      ))}
      {Array.from({ length: NEW_ENTRIES }, (_, i) => (
        <div class="field">
          <label for={`f-new-key-${i}`}>New entry: name</label>
          <input id={`f-new-key-${i}`} name={`new_key_${i}`} autocomplete="off" />
          <label for={`f-new-value-${i}`}>Value</label>
          <input id={`f-new-value-${i}`} name={`new_value_${i}`} type="password" autocomplete="off" />
        </div>
      ))}
    </fieldset>
    <button type="submit">Save custom database</button>
  </form>
);

/** The same settings for an operator without `update:connections`: read only, no form (configuration by name only). */
export const DatabaseSummary: FC<{ draft: DatabaseDraft }> = ({ draft }) => (
  <div class="card">
    <p>
      Use my own database: <strong>{draft.enabled ? "Yes" : "No"}</strong> · Import users to Gatehouse: <strong>{draft.importMode ? "Yes" : "No"}</strong>
    </p>
    {SCRIPT_NAMES.filter((name) => draft.scripts[name]).map((name) => (
      <>
        <h3>
          {name} <code class="muted">{DB_SCRIPTS[name].signature}</code>
        </h3>
        <pre>{draft.scripts[name]}</pre>
      </>
    ))}
    <p>Configuration: {draft.configurationKeys.length ? draft.configurationKeys.map((key) => <code>{key} </code>) : "none"}</p>
  </div>
);

/** The migration report (GET /connections/{id}/status → `gatehouse_migration`). */
export const MigrationPanel: FC<{ report: MigrationReport }> = ({ report }) => {
  const active = report.days.filter((d) => d.script_logins > 0);
  return (
    <>
      <h2>Migration progress</h2>
      <p class="card">
        Users moved: <strong>{report.users_moved}</strong> ({report.users_without_password} without a password yet) · Logins through the login script in the last 30
        days: <strong>{report.script_logins_last_30_days}</strong> · Last login through the script:{" "}
        <strong>{report.last_script_login_at ?? "never"}</strong>
      </p>
      <p class="muted">When no login has needed the script for a while, the legacy store can be switched off: every moved user logs in here.</p>
      <DataTable
        caption="Logins through the login script per day (UTC), last 30 days"
        rows={active}
        columns={[
          { label: "Day", cell: (d) => d.date },
          { label: "Script logins", cell: (d) => String(d.script_logins) },
          { label: "Moved", cell: (d) => String(d.moved) },
          { label: "Failed", cell: (d) => String(d.failed) },
        ]}
        empty="No login went through the script in the last 30 days."
      />
    </>
  );
};
