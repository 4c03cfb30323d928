-- The device a browser session was started from and last used from (the reference platform's session
-- `device`: initial_ip, initial_user_agent, last_ip, last_user_agent), as JSON. Sessions from before this
-- migration have none recorded.
ALTER TABLE sessions ADD COLUMN device TEXT NOT NULL DEFAULT '{}';
