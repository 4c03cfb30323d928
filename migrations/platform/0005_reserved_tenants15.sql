-- Placeholder on branch deploy16 only: number reserved for another helper's migration (drop at merge).
SELECT 1;
