-- One store for which applications may use a connection (issue 28 point 1): each client's ordered
-- `extra.enabled_connections` (login reads it; absent = every connection). Connections used to keep an
-- `enabled_clients` copy in their options that login never read. Folded in without taking anything away:
-- a client with an explicit list gains each connection whose copy named it (appended in the tenant's order);
-- a client offering every connection already has it. Then the copies are dropped.
-- Data only: code of this release ignores the copy, so an object left before this migration is served too.
UPDATE clients SET extra = json_set(extra, '$.enabled_connections', json((
  SELECT json_group_array(id) FROM (
    SELECT e.value AS id, 0 AS grp, e.key AS ord FROM json_each(clients.extra, '$.enabled_connections') AS e
    UNION ALL
    SELECT c.id AS id, 1 AS grp, c.created_at AS ord
      FROM connections AS c, json_each(c.options, '$.enabled_clients') AS n
      WHERE json_type(c.options, '$.enabled_clients') = 'array'
        AND n.value = clients.client_id
        AND c.id NOT IN (SELECT value FROM json_each(clients.extra, '$.enabled_connections'))
    ORDER BY grp, ord
  )
)))
WHERE json_type(extra, '$.enabled_connections') = 'array';

UPDATE connections SET options = json_remove(options, '$.enabled_clients')
WHERE json_type(options, '$.enabled_clients') IS NOT NULL;

-- Organizations a client grant may be used for (issue 28 point 2: /organizations/{id}/client-grants and
-- GET /client-grants/{id}/organizations), and the grant's own organization settings. Expand-only: code of
-- this release writes the new columns only when a caller sets them.
ALTER TABLE client_grants ADD COLUMN organization_usage TEXT;
ALTER TABLE client_grants ADD COLUMN allow_any_organization INTEGER;

CREATE TABLE organization_client_grants (
  organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  grant_id TEXT NOT NULL REFERENCES client_grants (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (organization_id, grant_id)
);
CREATE INDEX organization_client_grants_grant ON organization_client_grants (grant_id, organization_id);

-- Public keys of a client for private_key_jwt (issue 28 point 2: /clients/{id}/credentials), beside the
-- client's `jwks`. Only the public JWK is kept; an expired credential no longer verifies.
CREATE TABLE client_credentials (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE,
  name TEXT,
  credential_type TEXT NOT NULL,
  kid TEXT NOT NULL,
  alg TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX client_credentials_client ON client_credentials (client_id, created_at);
