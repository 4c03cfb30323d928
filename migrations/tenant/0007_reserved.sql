-- Placeholder on the orgs branch only: number 0007 is reserved for another branch's migration (see
-- src/objects/tenant/migrations.ts). Replace it with that migration when it lands in main.
SELECT 1;
