/**
 * Version 1 of agentd's tables on PostgreSQL: the sessions' logs, their indexes, leases and fencing tokens. Run by
 * migrations.ts with `search_path` set to the configured schema; the functions keep that path (`FROM CURRENT`), so
 * they see these tables whatever path a connection has. README.md beside this file states the contracts.
 */
export const SCHEMA_V1 = `
CREATE TABLE agentd_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO agentd_meta (key, value) VALUES ('store_id', gen_random_uuid()::text);

CREATE SEQUENCE agentd_fence_seq;

CREATE TABLE agentd_sessions (
  session_id bytea PRIMARY KEY,
  owner text COLLATE "C" NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  updated_at text COLLATE "C" NOT NULL DEFAULT '',
  turns bigint NOT NULL DEFAULT 0,
  shard smallint NOT NULL DEFAULT floor(random() * 16)::smallint,
  fence bigint NOT NULL DEFAULT 0,
  lease_holder text,
  lease_until timestamptz
);
CREATE INDEX agentd_sessions_recent ON agentd_sessions (updated_at DESC, session_id) WHERE last_seq > 0;
CREATE INDEX agentd_sessions_recent_by_owner ON agentd_sessions (owner, updated_at DESC, session_id)
  WHERE last_seq > 0;

CREATE TABLE agentd_events (
  session_id bytea NOT NULL,
  seq bigint NOT NULL,
  type text NOT NULL,
  turn_id text,
  ts text NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE agentd_turns (
  session_id bytea NOT NULL,
  turn_id text NOT NULL,
  first_seq bigint NOT NULL,
  last_seq bigint NOT NULL,
  PRIMARY KEY (session_id, turn_id)
);
CREATE INDEX agentd_turns_order ON agentd_turns (session_id, first_seq);

CREATE TABLE agentd_totals (
  scope text COLLATE "C" NOT NULL,
  shard smallint NOT NULL,
  sessions bigint NOT NULL DEFAULT 0,
  turns bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, shard)
);

CREATE TABLE agentd_open_turns (session_id bytea PRIMARY KEY);

CREATE FUNCTION agentd_count(p_owner text, p_shard smallint, d_sessions bigint, d_turns bigint) RETURNS void
LANGUAGE sql SET search_path FROM CURRENT AS $$
  INSERT INTO agentd_totals AS t (scope, shard, sessions, turns)
  VALUES ('*', p_shard, d_sessions, d_turns), ('o:' || p_owner, p_shard, d_sessions, d_turns)
  ON CONFLICT (scope, shard) DO UPDATE SET sessions = t.sessions + EXCLUDED.sessions, turns = t.turns + EXCLUDED.turns
$$;

CREATE FUNCTION agentd_index_turns(p_id bytea, p_seqs bigint[], p_turns text[]) RETURNS bigint
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE added bigint;
BEGIN
  WITH spans AS (
    SELECT turn, min(seq) AS first_seq, max(seq) AS last_seq FROM unnest(p_seqs, p_turns) AS e(seq, turn)
    WHERE turn <> '' GROUP BY turn
  ), up AS (
    INSERT INTO agentd_turns AS t (session_id, turn_id, first_seq, last_seq)
    SELECT p_id, turn, first_seq, last_seq FROM spans
    ON CONFLICT (session_id, turn_id) DO UPDATE SET last_seq = EXCLUDED.last_seq
    RETURNING (xmax = 0) AS inserted
  )
  SELECT count(*) FILTER (WHERE inserted) INTO added FROM up;
  RETURN added;
END $$;

CREATE FUNCTION agentd_append(p_id bytea, p_owner text, p_fence bigint, p_ts text, p_types text[], p_turns text[],
  p_bodies text[]) RETURNS bigint
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE n int := cardinality(p_bodies); base bigint; v_shard smallint; added bigint;
BEGIN
  IF p_fence IS NULL THEN
    INSERT INTO agentd_sessions AS s (session_id, owner, last_seq, updated_at) VALUES (p_id, p_owner, n, p_ts)
    ON CONFLICT (session_id) DO UPDATE SET last_seq = s.last_seq + n, updated_at = p_ts
    RETURNING s.last_seq - n, s.shard INTO base, v_shard;
  ELSE
    UPDATE agentd_sessions s SET last_seq = s.last_seq + n, updated_at = p_ts
    WHERE session_id = p_id AND fence = p_fence
    RETURNING s.last_seq - n, s.shard INTO base, v_shard;
    IF NOT FOUND THEN RETURN -1; END IF;
  END IF;
  INSERT INTO agentd_events (session_id, seq, type, turn_id, ts, body)
  SELECT p_id, base + e.ord, e.type, NULLIF(e.turn, ''), p_ts, e.body
  FROM unnest(p_types, p_turns, p_bodies) WITH ORDINALITY AS e(type, turn, body, ord);
  added := agentd_index_turns(p_id, ARRAY(SELECT base + g FROM generate_series(1, n) AS g), p_turns);
  IF base = 0 OR added > 0 THEN
    UPDATE agentd_sessions SET turns = turns + added WHERE session_id = p_id;
    PERFORM agentd_count(p_owner, v_shard, CASE WHEN base = 0 THEN 1 ELSE 0 END, added);
  END IF;
  RETURN base + n;
END $$;

CREATE FUNCTION agentd_create(p_id bytea, p_owner text, p_seqs bigint[], p_ts text[], p_types text[],
  p_turns text[], p_bodies text[]) RETURNS bigint
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE n int := cardinality(p_seqs); v_shard smallint; added bigint;
BEGIN
  INSERT INTO agentd_sessions AS s (session_id, owner, last_seq, updated_at) VALUES (p_id, p_owner, p_seqs[n], p_ts[n])
  ON CONFLICT (session_id) DO UPDATE SET last_seq = EXCLUDED.last_seq, updated_at = EXCLUDED.updated_at
  WHERE s.last_seq = 0
  RETURNING s.shard INTO v_shard;
  IF NOT FOUND THEN RETURN -1; END IF;
  INSERT INTO agentd_events (session_id, seq, type, turn_id, ts, body)
  SELECT p_id, e.seq, e.type, NULLIF(e.turn, ''), e.ts, e.body
  FROM unnest(p_seqs, p_ts, p_types, p_turns, p_bodies) AS e(seq, ts, type, turn, body);
  added := agentd_index_turns(p_id, p_seqs, p_turns);
  UPDATE agentd_sessions SET turns = added WHERE session_id = p_id;
  PERFORM agentd_count(p_owner, v_shard, 1, added);
  RETURN p_seqs[n];
END $$;

CREATE FUNCTION agentd_delete(p_id bytea) RETURNS boolean
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE gone agentd_sessions;
BEGIN
  DELETE FROM agentd_sessions WHERE session_id = p_id RETURNING * INTO gone;
  IF NOT FOUND THEN RETURN false; END IF;
  DELETE FROM agentd_events WHERE session_id = p_id;
  DELETE FROM agentd_turns WHERE session_id = p_id;
  IF gone.last_seq > 0 THEN PERFORM agentd_count(gone.owner, gone.shard, -1, -gone.turns); END IF;
  RETURN gone.last_seq > 0;
END $$;

CREATE FUNCTION agentd_claim(p_id bytea, p_owner text, p_me text, p_ms bigint, p_held bigint,
  OUT holder text, OUT taken boolean, OUT token bigint, OUT until timestamptz, OUT db_now timestamptz)
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE cur agentd_sessions;
BEGIN
  LOOP
    SELECT * INTO cur FROM agentd_sessions WHERE session_id = p_id FOR UPDATE;
    EXIT WHEN FOUND;
    INSERT INTO agentd_sessions (session_id, owner) VALUES (p_id, p_owner) ON CONFLICT DO NOTHING;
  END LOOP;
  db_now := clock_timestamp();
  holder := cur.lease_holder; taken := false; token := cur.fence; until := cur.lease_until;
  IF cur.lease_holder IS NULL OR cur.lease_until <= db_now THEN
    IF cur.fence = 0 OR cur.fence IS DISTINCT FROM p_held THEN token := nextval('agentd_fence_seq'); END IF;
    holder := p_me; taken := true;
  END IF;
  IF holder = p_me THEN
    until := db_now + p_ms * interval '1 millisecond';
    UPDATE agentd_sessions SET lease_holder = p_me, lease_until = until, fence = token WHERE session_id = p_id;
  END IF;
END $$;
`;
