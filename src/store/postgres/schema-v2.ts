/**
 * Version 2: the record store's tables (src/store/records/postgres-engine.ts). Ids and groups are `bytea` (their
 * UTF-8 bytes: any string, NUL included, in code point order); times are epoch ms by the store's clock.
 */
export const SCHEMA_V2 = `
CREATE TABLE agentd_records (
  ns text COLLATE "C" NOT NULL,
  id bytea NOT NULL,
  version bigint NOT NULL,
  value text NOT NULL,
  expires_at bigint,
  PRIMARY KEY (ns, id)
);
CREATE INDEX agentd_records_expiry ON agentd_records (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE agentd_record_index (
  ns text COLLATE "C" NOT NULL,
  ix text COLLATE "C" NOT NULL,
  grp bytea NOT NULL,
  id bytea NOT NULL,
  score double precision NOT NULL,
  PRIMARY KEY (ns, ix, grp, id)
);
CREATE INDEX agentd_record_index_order ON agentd_record_index (ns, ix, grp, score, id);
CREATE INDEX agentd_record_index_of ON agentd_record_index (ns, id);

CREATE TABLE agentd_record_counts (
  ns text COLLATE "C" NOT NULL,
  ix text COLLATE "C" NOT NULL,
  grp bytea NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (ns, ix, grp)
);

CREATE TABLE agentd_record_leases (key bytea PRIMARY KEY, holder text NOT NULL, until bigint NOT NULL);

CREATE FUNCTION agentd_unindex(p_ns text, p_id bytea) RETURNS void
LANGUAGE sql SET search_path FROM CURRENT AS $$
  WITH gone AS (DELETE FROM agentd_record_index WHERE ns = p_ns AND id = p_id RETURNING ns, ix, grp)
  UPDATE agentd_record_counts c SET n = c.n - 1 FROM gone g WHERE c.ns = g.ns AND c.ix = g.ix AND c.grp = g.grp
$$;

CREATE FUNCTION agentd_records_sweep(p_now bigint) RETURNS void
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE r record;
BEGIN
  FOR r IN DELETE FROM agentd_records WHERE expires_at <= p_now RETURNING ns, id LOOP
    PERFORM agentd_unindex(r.ns, r.id);
  END LOOP;
END $$;
`;
