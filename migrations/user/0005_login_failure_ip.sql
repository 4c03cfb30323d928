-- Brute-force protection's `count_per_identifier_and_ip` mode (the reference platform's default): each
-- failure remembers the client IP it came from, so a lockout can hold for that IP only; and the blocks a
-- management read lists (GET /api/v2/user-blocks) name the IP. NULL: the address was not known.
ALTER TABLE login_failures ADD COLUMN ip TEXT;
