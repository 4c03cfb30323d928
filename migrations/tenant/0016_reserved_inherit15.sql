-- Placeholder on branch import14 only: number reserved for another helper's migration (drop at merge).
SELECT 1;
