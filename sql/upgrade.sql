--
-- Upgrades: version 1.0, as released, updated to 1.1 and then to 1.2, and
-- version 1.1 updated to 1.2, have exactly the objects of a fresh 1.2
-- install, with the same definitions and comments; both released scripts
-- are as they were released.
-- This test runs first, while the database holds nothing that depends on
-- the extension.
--

-- Every object of the extension: what it is, how it is defined (the
-- catalog fields that decide its behaviour, with OIDs spelled as names),
-- and its comment
CREATE FUNCTION pg_temp.sbf_objects()
RETURNS TABLE (object text, definition text, comment text)
LANGUAGE sql AS $$
	SELECT pg_describe_object(d.classid, d.objid, 0),
		   CASE d.classid
			   WHEN 'pg_proc'::regclass THEN
				   (SELECT concat_ws(' | ', p.prokind, pg_get_function_arguments(p.oid),
									 pg_get_function_result(p.oid),
									 p.provolatile, p.proparallel, p.proisstrict,
									 p.prosecdef, p.proleakproof, p.procost, p.prorows,
									 p.proconfig::text, p.proacl::text,
									 p.prosrc, p.probin,
									 (SELECT row(a.aggkind, a.aggtransfn, a.aggfinalfn,
												 a.aggcombinefn, a.aggserialfn,
												 a.aggdeserialfn, a.aggfinalmodify,
												 format_type(a.aggtranstype, NULL),
												 a.aggtransspace, a.agginitval)::text
									  FROM pg_aggregate a WHERE a.aggfnoid = p.oid))
					FROM pg_proc p WHERE p.oid = d.objid)
			   WHEN 'pg_type'::regclass THEN
				   (SELECT row(t.typlen, t.typbyval, t.typtype, t.typcategory,
							   t.typalign, t.typstorage, t.typinput, t.typoutput,
							   t.typreceive, t.typsend)::text
					FROM pg_type t WHERE t.oid = d.objid)
			   WHEN 'pg_operator'::regclass THEN
				   (SELECT row(o.oprcode, o.oprcom::regoperator, o.oprnegate::regoperator,
							   o.oprrest, o.oprjoin, format_type(o.oprresult, NULL))::text
					FROM pg_operator o WHERE o.oid = d.objid)
			   WHEN 'pg_am'::regclass THEN
				   (SELECT row(a.amtype, a.amhandler)::text FROM pg_am a WHERE a.oid = d.objid)
			   WHEN 'pg_cast'::regclass THEN
				   (SELECT row(c.castfunc::regprocedure, c.castcontext, c.castmethod)::text
					FROM pg_cast c WHERE c.oid = d.objid)
			   -- an operator class: its method, type, default, key type, and
			   -- its family's operators and support functions
			   WHEN 'pg_opclass'::regclass THEN
				   (SELECT concat_ws(' | ', am.amname, format_type(c.opcintype, NULL),
									 c.opcdefault, format_type(c.opckeytype, NULL),
									 (SELECT string_agg(format('%s %s %s', o.amopstrategy,
															   o.amopopr::regoperator, o.amoppurpose),
														', ' ORDER BY o.amopstrategy, o.amopopr::regoperator::text)
									  FROM pg_amop o WHERE o.amopfamily = c.opcfamily),
									 (SELECT string_agg(format('%s %s', pr.amprocnum, pr.amproc::regprocedure),
														', ' ORDER BY pr.amprocnum, pr.amproc::regprocedure::text)
									  FROM pg_amproc pr WHERE pr.amprocfamily = c.opcfamily))
					FROM pg_opclass c JOIN pg_am am ON am.oid = c.opcmethod
					WHERE c.oid = d.objid)
			   WHEN 'pg_opfamily'::regclass THEN
				   (SELECT am.amname FROM pg_opfamily f JOIN pg_am am ON am.oid = f.opfmethod
					WHERE f.oid = d.objid)
		   END,
		   obj_description(d.objid, d.classid::regclass::name)
	FROM pg_depend d
	JOIN pg_extension e ON e.oid = d.refobjid
	WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'sbf'
	  AND d.deptype = 'e'
	  -- a type's array type comes with it; newer majors (17, 18) also
	  -- record it as a member of the extension, older ones do not
	  AND NOT EXISTS (SELECT 1 FROM pg_type t
					  WHERE d.classid = 'pg_type'::regclass AND t.oid = d.objid
						AND t.typcategory = 'A')
$$;

DROP EXTENSION sbf;

-- The released 1.0 installs what it always did: 100 objects, whose
-- fingerprint would change if sbf--1.0.sql did
CREATE EXTENSION sbf VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'sbf';
CREATE TEMP TABLE released AS SELECT * FROM pg_temp.sbf_objects();
SELECT count(*) AS objects,
	   md5(string_agg(object || definition || coalesce(comment, ''), ',' ORDER BY object)) AS fingerprint
FROM released;

ALTER EXTENSION sbf UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'sbf';
CREATE TEMP TABLE released_1_1 AS SELECT * FROM pg_temp.sbf_objects();

-- The released 1.1 (1.0 and sbf--1.0--1.1.sql, frozen since) has these
-- objects, whose fingerprint would change if sbf--1.0--1.1.sql did
SELECT count(*) AS objects,
	   md5(string_agg(object || definition || coalesce(comment, ''), ',' ORDER BY object)) AS fingerprint
FROM released_1_1;

-- On to the current version
ALTER EXTENSION sbf UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'sbf';
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.sbf_objects();

-- An install of 1.1 (as 1.1 installed itself) updated
DROP EXTENSION sbf;
CREATE EXTENSION sbf VERSION '1.1';
ALTER EXTENSION sbf UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'sbf';
CREATE TEMP TABLE updated_from_1_1 AS SELECT * FROM pg_temp.sbf_objects();

DROP EXTENSION sbf;
CREATE EXTENSION sbf;
SELECT extversion FROM pg_extension WHERE extname = 'sbf';
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.sbf_objects();

-- No difference, whichever way
(SELECT 'only updated from 1.0' AS side, * FROM updated EXCEPT SELECT 'only updated from 1.0', * FROM fresh)
UNION ALL
(SELECT 'only updated from 1.1', * FROM updated_from_1_1 EXCEPT SELECT 'only updated from 1.1', * FROM fresh)
UNION ALL
(SELECT 'only fresh', * FROM fresh EXCEPT SELECT 'only fresh', * FROM updated)
UNION ALL
(SELECT 'only fresh', * FROM fresh EXCEPT SELECT 'only fresh', * FROM updated_from_1_1);

-- Every object has a comment
SELECT object FROM fresh
WHERE comment IS NULL AND object NOT LIKE 'function %\_in(%' AND object NOT LIKE 'function %\_out(%'
  AND object NOT LIKE 'function %\_recv(%' AND object NOT LIKE 'function %\_send(%'
  AND object NOT LIKE 'function %\_trans(%' AND object NOT LIKE 'function %\_final(%'
  AND object NOT LIKE 'function %\_combine(%' AND object NOT LIKE 'function %\_serial(%'
  AND object NOT LIKE 'function %\_deserial(%'
ORDER BY object;

-- What 1.1 adds to 1.0
SELECT object FROM released_1_1 EXCEPT SELECT object FROM released ORDER BY object;
-- what it drops: the support functions of the bloom aggregates' internal
-- state
SELECT object FROM released EXCEPT SELECT object FROM released_1_1 ORDER BY object;
-- and what it changes: the bloom aggregates, whose state is now the filter,
-- and the comment of sieve_flush, which now fills frontier.sig
SELECT object, r.definition AS released, f.definition AS updated
FROM released r JOIN released_1_1 f USING (object)
WHERE r.definition IS DISTINCT FROM f.definition
   OR r.comment IS DISTINCT FROM f.comment
ORDER BY object;

-- What 1.2 adds to 1.1: the batch forms of sieve_contains, and the exact
-- online store (seen_test_and_add, sieve_seen_online, sieve_seen_compact);
-- what it drops: nothing; what it changes: the default layout of
-- simhash_ops, 2 blocks (the options function and the comments; below,
-- what becomes of an index made at 1.1), and the comment of
-- sieve_seen_create, whose seens take online adds
SELECT object FROM fresh EXCEPT SELECT object FROM released_1_1 ORDER BY object;
SELECT object FROM released_1_1 EXCEPT SELECT object FROM fresh ORDER BY object;
SELECT object FROM released_1_1 r JOIN fresh f USING (object)
WHERE r.definition IS DISTINCT FROM f.definition
   OR r.comment IS DISTINCT FROM f.comment
ORDER BY object;

-- Views built on the aggregates under 1.0 survive the update, which
-- replaces the aggregates in place, and give the same filters after it
DROP EXTENSION sbf;
CREATE EXTENSION sbf VERSION '1.0';
CREATE TABLE upgrade_crawl AS
	SELECT i AS pos, 'https://example.org/' || (i % 700) AS url
	FROM generate_series(1, 2000) i;
CREATE VIEW upgrade_shards AS
	SELECT pos % 4 AS shard, bloom_agg(url, 1000, 0.01) AS filter,
		   bloom_agg(pos, bloom_sized(2000, 0.01)) AS positions
	FROM upgrade_crawl GROUP BY 1;
CREATE VIEW upgrade_whole AS
	SELECT bloom_union_agg(filter) AS filter FROM upgrade_shards;
CREATE TEMP TABLE before_update AS
	SELECT shard, filter::text, positions::text FROM upgrade_shards
	UNION ALL SELECT -1, filter::text, NULL FROM upgrade_whole;
SELECT format_type(aggtranstype, NULL) AS state FROM pg_aggregate
WHERE aggfnoid = 'bloom_agg(text,bigint,double precision)'::regprocedure;
ALTER EXTENSION sbf UPDATE TO '1.1';
SELECT format_type(aggtranstype, NULL) AS state FROM pg_aggregate
WHERE aggfnoid = 'bloom_agg(text,bigint,double precision)'::regprocedure;
ALTER EXTENSION sbf UPDATE;
SELECT count(*) AS filters,
	   count(*) FILTER (WHERE b.filter = a.filter AND b.positions IS NOT DISTINCT FROM a.positions) AS same,
	   min((bloom_info(b.filter::bloom) ->> 'bits_set')::bigint) > 0 AS none_empty
FROM before_update b
JOIN (SELECT shard, filter::text, positions::text FROM upgrade_shards
	  UNION ALL SELECT -1, filter::text, NULL FROM upgrade_whole) a USING (shard);
DROP VIEW upgrade_whole, upgrade_shards;
DROP TABLE upgrade_crawl;

-- A simhash_ops index made at 1.1 without the option "blocks" was built
-- with 1.1's default layout, 4 blocks.  1.2 has another default; the
-- index keeps its layout: the update writes blocks=4 into its options
-- (an index given "blocks" keeps its own), and it finds exactly what a
-- sequential scan finds before and after the update.  An index made after
-- the update gets the new default.
DROP EXTENSION sbf;
CREATE EXTENSION sbf VERSION '1.1';
CREATE TABLE upgrade_fps (id bigint, fp simhash64);
INSERT INTO upgrade_fps
	SELECT g, hashint8extended(g, 7)::simhash64 FROM generate_series(1, 5000) g;
-- near-copies of the first 100 rows: 1, 2 and 3 bits flipped, in different
-- blocks of every layout
INSERT INTO upgrade_fps
	SELECT -10 * id - k, (fp::bigint # m)::simhash64
	FROM upgrade_fps,
		 (VALUES (1, 1::bigint << 3), (2, (1::bigint << 3) | (1::bigint << 29)),
				 (3, (1::bigint << 3) | (1::bigint << 29) | (1::bigint << 50))) v(k, m)
	WHERE id <= 100;
CREATE TABLE upgrade_fps_8 AS TABLE upgrade_fps;
CREATE INDEX upgrade_fps_gin ON upgrade_fps USING gin (fp simhash_ops);
CREATE INDEX upgrade_fps_8_gin ON upgrade_fps_8 USING gin (fp simhash_ops (blocks = 8));
-- the pairs (row, its match within 3 bits) of the first 100 rows of a
-- table, by its GIN index or by sequential scans
CREATE FUNCTION upgrade_near_pairs(tab regclass, by_index boolean)
RETURNS TABLE (q bigint, f bigint)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM set_config('enable_seqscan', (NOT by_index)::text, true);
	PERFORM set_config('enable_bitmapscan', by_index::text, true);
	RETURN QUERY EXECUTE format('SELECT a.id, b.id FROM %1$s a
		CROSS JOIN LATERAL (SELECT id FROM %1$s WHERE fp %% a.fp) b
		WHERE a.id BETWEEN 1 AND 100', tab);
END $$;
CREATE FUNCTION upgrade_check_index(tab regclass)
RETURNS TABLE (index_pairs bigint, seqscan_pairs bigint, differences bigint)
LANGUAGE sql AS $$
	SELECT (SELECT count(*) FROM upgrade_near_pairs(tab, true)),
		   (SELECT count(*) FROM upgrade_near_pairs(tab, false)),
		   (SELECT count(*) FROM ((SELECT * FROM upgrade_near_pairs(tab, true)
								   EXCEPT SELECT * FROM upgrade_near_pairs(tab, false))
								  UNION ALL
								  (SELECT * FROM upgrade_near_pairs(tab, false)
								   EXCEPT SELECT * FROM upgrade_near_pairs(tab, true))) d)
$$;
SELECT * FROM upgrade_check_index('upgrade_fps');
SELECT * FROM upgrade_check_index('upgrade_fps_8');
ALTER EXTENSION sbf UPDATE;
-- (a new session: this one has the indexes' options cached)
\c
SELECT pg_get_indexdef('upgrade_fps_gin'::regclass);
SELECT pg_get_indexdef('upgrade_fps_8_gin'::regclass);
SELECT * FROM upgrade_check_index('upgrade_fps');
SELECT * FROM upgrade_check_index('upgrade_fps_8');
-- made after the update: the new default, 2 blocks (the same index, page
-- for page, as one made with blocks = 2)
CREATE TEMP TABLE size_1_1 AS SELECT pg_relation_size('upgrade_fps_gin') AS bytes;
DROP INDEX upgrade_fps_gin;
CREATE INDEX upgrade_fps_gin ON upgrade_fps USING gin (fp simhash_ops);
SELECT pg_get_indexdef('upgrade_fps_gin'::regclass);
SELECT * FROM upgrade_check_index('upgrade_fps');
DROP INDEX upgrade_fps_8_gin;
CREATE INDEX upgrade_fps_8_gin ON upgrade_fps_8 USING gin (fp simhash_ops (blocks = 2));
SELECT pg_relation_size('upgrade_fps_gin') = pg_relation_size('upgrade_fps_8_gin') AS same_as_2_blocks,
	   pg_relation_size('upgrade_fps_gin') = (SELECT bytes FROM size_1_1) AS same_as_4_blocks;
-- and the plan of near_pairs(..., true) is the index's
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM upgrade_fps WHERE fp % '0123456789abcdef';
RESET enable_seqscan;
DROP TABLE upgrade_fps, upgrade_fps_8;
DROP FUNCTION upgrade_check_index, upgrade_near_pairs;
