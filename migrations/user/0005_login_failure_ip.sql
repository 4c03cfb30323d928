-- Brute-force protection's `count_per_identifier_and_ip` mode (the reference platform's default; Gatehouse
-- keeps `count_per_identifier`, SPEC §5.11): each failure remembers the client IP it came from, so a lockout
-- can hold for that IP only, and the blocks GET /api/v2/user-blocks lists name the IP. NULL: not known.
ALTER TABLE login_failures ADD COLUMN ip TEXT;
