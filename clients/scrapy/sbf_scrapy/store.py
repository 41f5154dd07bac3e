# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""The PostgreSQL side of sbf_scrapy: its settings, one connection per
crawler, the tables, and every statement the scheduler and the middlewares
send.

A crawler process holds one connection, in autocommit mode, shared by the
scheduler and both middlewares (Scrapy runs them all in its one reactor
thread, so they never use it at the same time).  Each operation is one
statement, hence one transaction: a claim, a page's batch of links with its
done mark, a release.  The frontier's claims carry the claimer's id (a
random number per process) and a lease: a claim whose lease ran out (the
crawler is stopped, or hung) or whose backend is gone (it was killed, or
lost its connection) can be taken again by anyone.

An error of the database that sending the statement again cannot cure
stops the crawl: it is logged as an error, the spider closes with the
reason "sbf_error", and the process exits with status 1.  What was claimed
and not done stays in the frontier for the next run.
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import secrets
import sys
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import psycopg
from psycopg import errors, sql
from scrapy import Request, Spider
from scrapy.settings import BaseSettings
from scrapy.utils.request import RequestFingerprinter, request_from_dict
from scrapy.utils.request import fingerprint as request_fingerprint

logger = logging.getLogger(__name__)

# The meta key of a request that came from the frontier: its row's id
META_ID = "sbf_id"

# Errors after which a statement is sent again at once, up to ATTEMPTS
# times: two crawlers' batches waiting for each other's adds (shared.md,
# "Limits and surprises").  A lost connection is tried again for up to
# SBF_RECONNECT_TIMEOUT seconds (its claims are anyone's now; the done mark
# is still due).  Any other error is the same the next time: it stops the
# crawl (StoreError).
CONFLICTS = (errors.DeadlockDetected, errors.SerializationFailure)
ATTEMPTS = 3
# SQLSTATEs of a server going away: admin_shutdown, crash_shutdown,
# cannot_connect_now; and the connection_exception class
SERVER_GONE = ("57P01", "57P02", "57P03")

# The reason a crawl stopped by the store closes with
FINISH_REASON = "sbf_error"


class StoreError(Exception):
    """The database refused a statement for good: the crawl stops."""


# The orders a claim takes queued rows in (SBF_QUEUE_ORDER): by priority
# then first in first out, as Scrapy's and scrapy-redis's priority queues;
# first in first out (breadth-first); last in first out (depth-first)
ORDERS = {
    "priority": "f.priority DESC, f.id",
    "fifo": "f.id",
    "lifo": "f.id DESC",
}

# The stores the filter may be (SBF_STORE): a shared Bloom filter
# (shared_bloom_create, shared_test_and_add), or the exact online store, a
# compressed seen (sieve_seen_create, seen_test_and_add: no false
# positive); each the function that tests and adds to it
STORES = {
    "bloom": "shared_test_and_add",
    "exact": "seen_test_and_add",
}


@dataclass(frozen=True)
class Config:
    """The SBF_* settings (docs/scrapy.md, "Settings")."""

    dsn: str = ""
    store: str = "bloom"
    filter: str = "sbf_scrapy_seen"
    capacity: int = 10_000_000
    fpr: float = 0.001
    growth: float = 0.0
    frontier: str = "sbf_frontier"
    delay: float = 0.0
    query: str = "keep"
    strip_params: tuple[str, ...] = ()
    claim_batch: int = 8
    idle_poll: float = 0.5
    claim_timeout: float = 300.0
    reconnect_timeout: float = 60.0
    idle_before_close: float = 0.0
    queue_order: str = "priority"
    persist: bool = True
    flush_on_start: bool = False
    # behind a connection pooler: True, False, or None (find out)
    pooler: bool | None = None

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Config:
        delay = settings.get("SBF_DELAY")
        return cls(
            dsn=settings.get("SBF_DSN", cls.dsn),
            store=settings.get("SBF_STORE", cls.store),
            filter=settings.get("SBF_FILTER", cls.filter),
            capacity=settings.getint("SBF_FILTER_CAPACITY", cls.capacity),
            fpr=settings.getfloat("SBF_FILTER_FPR", cls.fpr),
            growth=settings.getfloat("SBF_FILTER_GROWTH", cls.growth),
            frontier=settings.get("SBF_FRONTIER", cls.frontier),
            delay=settings.getfloat("DOWNLOAD_DELAY") if delay is None else float(delay),
            query=settings.get("SBF_QUERY", cls.query),
            strip_params=tuple(settings.getlist("SBF_STRIP_PARAMS")),
            claim_batch=max(1, settings.getint("SBF_CLAIM_BATCH", cls.claim_batch)),
            idle_poll=settings.getfloat("SBF_IDLE_POLL", cls.idle_poll),
            claim_timeout=settings.getfloat("SBF_CLAIM_TIMEOUT", cls.claim_timeout),
            reconnect_timeout=settings.getfloat("SBF_RECONNECT_TIMEOUT", cls.reconnect_timeout),
            idle_before_close=settings.getfloat("SBF_IDLE_BEFORE_CLOSE", cls.idle_before_close),
            queue_order=settings.get("SBF_QUEUE_ORDER", cls.queue_order),
            persist=settings.getbool("SBF_PERSIST", cls.persist),
            flush_on_start=settings.getbool("SBF_FLUSH_ON_START", cls.flush_on_start),
            pooler=(None if settings.get("SBF_POOLER", "auto") in (None, "auto")
                    else settings.getbool("SBF_POOLER")),
        )

    def __post_init__(self):
        if self.queue_order not in ORDERS:
            raise ValueError(f"SBF_QUEUE_ORDER must be one of {', '.join(ORDERS)},"
                             f" not {self.queue_order!r}")
        if self.store not in STORES:
            raise ValueError(f"SBF_STORE must be one of {', '.join(STORES)},"
                             f" not {self.store!r}")


class Added(NamedTuple):
    """What one batch did: links queued, links dropped as invalid, and
    whether the page's row was marked done by this batch."""

    queued: int
    invalid: int
    done: bool


def _qualified(name: str, suffix: str = "") -> sql.Identifier:
    """A table name from a setting ("frontier" or "schema.frontier"), with
    a suffix on its last part."""
    parts = name.split(".")
    parts[-1] += suffix
    return sql.Identifier(*parts)


# Rows go queued -> claimed -> done.  A claimed row records its claimer
# (a random id per crawler process), the claimer's backend pid (NULL behind
# a pooler), when it was claimed and until when the claim holds (a lease
# the claimer renews while it runs); claims counts how many times it was
# claimed (more than once only when a claimer died or stopped with it).
# url is the canonical URL (url_canonical), host its url_host; request is
# the pickled Request.to_dict() (NULL: queued by the push function).  The
# partial indexes serve the claims: by priority, by id (SBF_QUEUE_ORDER
# fifo and lifo), by host (with a delay), and the few claimed rows.  A
# frontier made by sbf_scrapy 1.1 gains what it lacks (UPGRADE) before
# the indexes are made.
SCHEMA = """
CREATE TABLE IF NOT EXISTS {frontier} (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url text NOT NULL,
    host text NOT NULL,
    priority integer NOT NULL DEFAULT 0,
    request bytea,
    state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'done')),
    queued_at timestamptz NOT NULL DEFAULT now(),
    claims integer NOT NULL DEFAULT 0,
    claimed_by integer,
    claimed_at timestamptz,
    done_by integer,
    done_at timestamptz,
    error text,
    claimer bigint,
    claimed_until timestamptz
);
CREATE TABLE IF NOT EXISTS {hosts} (
    host text PRIMARY KEY,
    next_fetch timestamptz NOT NULL DEFAULT '-infinity'
);
"""

INDEXES = """
CREATE INDEX IF NOT EXISTS {queued_index} ON {frontier} (priority DESC, id)
    WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS {queued_id_index} ON {frontier} (id)
    WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS {host_index} ON {frontier} (host, priority DESC, id)
    WHERE state <> 'done';
CREATE INDEX IF NOT EXISTS {claimer_index} ON {frontier} (claimer)
    WHERE state = 'claimed';
"""

# A frontier made by sbf_scrapy 1.1: the columns of claims with a lease,
# and requests that may be NULL (queued by the push function)
UPGRADE = """
ALTER TABLE {frontier}
    ADD COLUMN IF NOT EXISTS claimer bigint,
    ADD COLUMN IF NOT EXISTS claimed_until timestamptz,
    ALTER COLUMN request DROP NOT NULL
"""

# The push function, for anyone to queue URLs into a running crawl
# (scrapy-redis's lpush): canonicalised, tested and added as the crawlers
# do, queued with a NULL request (fetched as Request(url), the spider's
# parse).  It is made again by each crawler that starts, with its filter
# and canonicalisation settings.  Returns how many URLs were queued.
PUSH = """
CREATE OR REPLACE FUNCTION {push}(urls text[], priority integer DEFAULT 0)
RETURNS bigint LANGUAGE sql AS $push$
WITH links AS MATERIALIZED (
    SELECT l.ord, url_canonical(l.url, {query}, {strip}::text[], strict => false) AS url
      FROM unnest($1) WITH ORDINALITY AS l(url, ord)
), queued AS (
    INSERT INTO {frontier} (url, host, priority)
    SELECT l.url, coalesce(url_host(l.url, strict => false), ''), $2
      FROM (SELECT array_agg(url ORDER BY ord) AS urls, array_agg(ord ORDER BY ord) AS ords
              FROM links) a,
           unnest(a.ords, {test_and_add}({filter}::regclass, a.urls)) AS t(ord, seen)
      JOIN links l USING (ord)
     WHERE l.url IS NOT NULL AND NOT t.seen
     ORDER BY l.ord
    RETURNING host
), new_hosts AS (
    INSERT INTO {hosts} (host) SELECT DISTINCT host FROM queued
    ON CONFLICT DO NOTHING
)
SELECT count(*) FROM queued
$push$
"""

# A crawl from scratch (SBF_FLUSH_ON_START, or SBF_PERSIST off at the end):
# the frontier and the hosts emptied, the filter too (a Bloom filter by
# shared_reset, which keeps its parameters; an exact store by TRUNCATE,
# FLUSH_EXACT, its name as the server spells it), and the shared stats if
# there are (stats.py); all or nothing
FLUSH = """
TRUNCATE {frontier}, {hosts};
"""
FLUSH_BLOOM = """
SELECT shared_reset({filter}::regclass)
"""
FLUSH_EXACT = """
SELECT %(filter)s::regclass::text
"""

# What the table SBF_FILTER names is: NULL (none), 'bloom' (a shared
# filter), 'exact' (a compressed seen: a column chunk of type sieve_chunk)
# or 'other'; and whether this role may compact it (its owner, or a
# member of the owning role: sieve_seen_compact's rule)
FILTER_KIND = """
SELECT CASE WHEN c.oid IS NULL THEN NULL
            WHEN am.amname = 'sbf_filter' THEN 'bloom'
            WHEN EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                          WHERE a.attrelid = c.oid AND a.attname = 'chunk'
                            AND NOT a.attisdropped AND t.typname = 'sieve_chunk') THEN 'exact'
            ELSE 'other' END,
       c.oid IS NOT NULL AND pg_has_role(c.relowner, 'USAGE')
  FROM (SELECT to_regclass(%(filter)s) AS oid) r
  LEFT JOIN pg_class c ON c.oid = r.oid
  LEFT JOIN pg_am am ON am.oid = c.relam
"""

# Whether the exact store has online adds (a compaction rewrites the whole
# seen: not done for none), and its online adds folded into its chunks
# (sieve_seen_compact, which refuses a seen the same statement reads)
ONLINE_ADDS = """
SELECT EXISTS (SELECT 1 FROM {seen} WHERE chunk IS NULL)
"""
COMPACT = """
SELECT sieve_seen_compact(%(filter)s::regclass)
"""
FLUSH_STATS = """
TRUNCATE {stats}
"""

# A claim that no longer holds: its lease ran out, or its backend is gone.
# backend_start tells a backend that reused the pid from the claimer; it is
# NULL for another role's backend when the user may not see it (not
# pg_read_all_stats): such a backend counts as alive, and the lease decides.
DEAD_CLAIM = """
f.state = 'claimed' AND (
    f.claimed_until < now()
    OR (f.claimed_by IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM pg_stat_activity a
         WHERE a.pid = f.claimed_by
           AND (a.backend_start IS NULL OR a.backend_start <= f.claimed_at))))
"""

# A live claim of another claimer: a crawler is at work
LIVE_CLAIMS = """
SELECT EXISTS (SELECT 1 FROM {frontier} f
                WHERE f.state = 'claimed' AND f.claimer IS DISTINCT FROM %(claimer)s
                  AND (""" + DEAD_CLAIM + """) IS NOT TRUE)
"""

# How a claim marks its rows: this claimer's, for the lease's length
CLAIMED = """
   SET state = 'claimed', claimer = %(claimer)s, claimed_by = %(backend)s,
       claimed_at = now(), claimed_until = now() + nullif(%(lease)s, 0) * interval '1 second',
       claims = f.claims + 1
"""

# The canonical URLs of a list (NULL: invalid), with no other effect: for
# the requests whose filter key is a fingerprint, and for a redirect
CANONICAL = """
SELECT url_canonical(u, %(query)s, %(strip)s::text[], strict => false)
  FROM unnest(%(urls)s::text[]) WITH ORDINALITY AS l(u, ord)
 ORDER BY ord
"""

# One page's links, and its done mark, in one statement.  The links are
# canonicalised (NULL: invalid, dropped), tested and added in input order
# by their key (the canonical URL, or the fingerprint the client computed:
# a repeat within the batch is seen), and the new ones queued; their hosts
# enter the hosts table.  $id is the page's row (NULL for start requests).
# The filter's adds are transactional: if this statement does not commit,
# neither do they.
BATCH = """
WITH links AS MATERIALIZED (
    SELECT l.ord, l.request, l.priority, l.dont_filter, c.url,
           CASE WHEN c.url IS NOT NULL THEN coalesce(l.key, c.url) END AS key
      FROM unnest(%(urls)s::text[], %(keys)s::text[], %(requests)s::bytea[],
                  %(priorities)s::integer[], %(dont_filter)s::boolean[])
           WITH ORDINALITY AS l(url, key, request, priority, dont_filter, ord)
     CROSS JOIN LATERAL url_canonical(l.url, %(query)s, %(strip)s::text[], strict => false)
           AS c(url)
), tested AS (
    SELECT t.ord, t.seen
      FROM (SELECT array_agg(key ORDER BY ord) AS keys, array_agg(ord ORDER BY ord) AS ords
              FROM links) a,
           unnest(a.ords, {test_and_add}(%(filter)s::regclass, a.keys)) AS t(ord, seen)
), queued AS (
    INSERT INTO {frontier} (url, host, priority, request)
    SELECT l.url, coalesce(url_host(l.url, strict => false), ''), l.priority, l.request
      FROM links l JOIN tested t USING (ord)
     WHERE l.url IS NOT NULL AND (NOT t.seen OR l.dont_filter)
     ORDER BY l.ord
    RETURNING host
), new_hosts AS (
    INSERT INTO {hosts} (host) SELECT DISTINCT host FROM queued
    ON CONFLICT DO NOTHING
), done AS (
    UPDATE {frontier}
       SET state = 'done', done_by = pg_backend_pid(), done_at = now(), error = %(error)s
     WHERE id = %(id)s AND state <> 'done'
    RETURNING id
)
SELECT (SELECT count(*) FROM queued),
       (SELECT count(*) FROM links WHERE url IS NULL),
       EXISTS (SELECT 1 FROM done)
"""

# A claim without a delay: rows of dead claims first, then queued rows by
# priority, first in first out; rows another claim has locked are skipped,
# so claimers never wait for one another.
CLAIM = """
WITH dead AS (
    SELECT f.id FROM {frontier} f
     WHERE """ + DEAD_CLAIM + """
     LIMIT %(n)s
       FOR UPDATE SKIP LOCKED
), fresh AS (
    SELECT f.id FROM {frontier} f
     WHERE f.state = 'queued'
     ORDER BY {order}
     LIMIT %(n)s
       FOR UPDATE SKIP LOCKED
), picked AS (
    SELECT id FROM dead UNION ALL SELECT id FROM fresh LIMIT %(n)s
)
UPDATE {frontier} f""" + CLAIMED + """
  FROM picked p
 WHERE f.id = p.id
RETURNING f.id, f.url, f.request
"""

# A claim with a delay: at most one row of each host whose time has come
# (the host queue of a polite crawler), each host's time moved on by the
# delay.  Hosts are taken longest waiting first.
CLAIM_POLITE = """
WITH due AS (
    SELECT h.host FROM {hosts} h
     WHERE h.next_fetch <= now()
       AND EXISTS (SELECT 1 FROM {frontier} f
                    WHERE f.host = h.host AND f.state <> 'done'
                      AND (f.state = 'queued' OR """ + DEAD_CLAIM + """))
     ORDER BY h.next_fetch
     LIMIT %(n)s
       FOR UPDATE SKIP LOCKED
), picked AS (
    SELECT r.id, d.host
      FROM due d
     CROSS JOIN LATERAL (
           SELECT f.id FROM {frontier} f
            WHERE f.host = d.host AND f.state <> 'done'
              AND (f.state = 'queued' OR """ + DEAD_CLAIM + """)
            ORDER BY {order}
            LIMIT 1
              FOR UPDATE SKIP LOCKED) r
), moved AS (
    UPDATE {hosts} h SET next_fetch = now() + %(delay)s * interval '1 second'
      FROM picked p
     WHERE h.host = p.host
)
UPDATE {frontier} f""" + CLAIMED + """
  FROM picked p
 WHERE f.id = p.id
RETURNING f.id, f.url, f.request
"""

# This claimer's leases, renewed
RENEW = """
UPDATE {frontier}
   SET claimed_until = now() + nullif(%(lease)s, 0) * interval '1 second'
 WHERE state = 'claimed' AND claimer = %(claimer)s
"""

# Work may still come: queued rows, or rows claimed by another claimer
# (alive, its pages may bring links; dead, its rows are claimable)
PENDING = """
SELECT EXISTS (SELECT 1 FROM {frontier} WHERE state = 'queued')
    OR EXISTS (SELECT 1 FROM {frontier}
                WHERE state = 'claimed' AND claimer IS DISTINCT FROM %(claimer)s)
"""

# A page that ends without links: failed for good, or ignored
DONE = """
UPDATE {frontier}
   SET state = 'done', done_by = pg_backend_pid(), done_at = now(), error = %(error)s
 WHERE id = %(id)s AND state <> 'done'
"""

# Back to the queue: this claimer's claims that it will not finish
RELEASE = """
UPDATE {frontier}
   SET state = 'queued', claimer = NULL, claimed_by = NULL, claimed_at = NULL,
       claimed_until = NULL
 WHERE state = 'claimed' AND claimer = %(claimer)s
"""

# The dupefilter's one round trip: a request with an invalid URL is seen.
# key: the fingerprint (NULL: the canonical URL is the key)
SEEN = """
SELECT coalesce({test_and_add}(%(filter)s::regclass, CASE WHEN c IS NOT NULL
                                 THEN coalesce(%(key)s, c) END), true)
  FROM url_canonical(%(url)s, %(query)s, %(strip)s::text[], strict => false) AS c
"""


class Claimed(NamedTuple):
    """A row this process claimed: its canonical URL, and the method and
    body of its request (a request that comes back with all three is a
    retry of it)."""

    url: str
    method: str
    body: bytes


def _exit_failed() -> None:
    """At the end of a process whose crawl the store stopped: exit status 1
    (Scrapy 2.8's `scrapy crawl` exits 0 whatever the finish reason)."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(1)


class Store:
    """A crawler's connection to the filter and the frontier, and the rows
    it has claimed and not yet marked done."""

    _stores: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @classmethod
    def for_crawler(cls, crawler) -> Store:
        """The crawler's one Store, shared by the scheduler and the
        middlewares."""
        store = cls._stores.get(crawler)
        if store is None:
            store = cls(Config.from_settings(crawler.settings), crawler.stats,
                        getattr(crawler, "request_fingerprinter", None), crawler)
            cls._stores[crawler] = store
        return store

    def __init__(self, config: Config, stats=None, fingerprinter=None, crawler=None):
        self.config = config
        self.stats = stats
        self._crawler = weakref.ref(crawler) if crawler is not None else None
        self._conn: psycopg.Connection | None = None
        self._tables = False
        self._flushed = False
        # why the store stopped the crawl, once it has
        self.error: str | None = None
        # this process's claims: id -> what was claimed, of the rows in the
        # scheduler's buffer or being fetched, not yet marked done
        self.claimer = secrets.randbits(63)
        self.claimed: dict[int, Claimed] = {}
        # a fingerprinter other than Scrapy's default decides every key;
        # with the default, a GET without a body is keyed by its URL
        self.fingerprinter = fingerprinter
        self.custom_keys = (fingerprinter is not None
                            and type(fingerprinter) is not RequestFingerprinter)
        last = config.frontier.split(".")[-1]
        names = {
            "frontier": _qualified(config.frontier),
            "hosts": _qualified(config.frontier, "_hosts"),
            "queued_index": sql.Identifier(last + "_queued"),
            "host_index": sql.Identifier(last + "_host"),
            "claimer_index": sql.Identifier(last + "_claimer"),
            "queued_id_index": sql.Identifier(last + "_queued_id"),
            "push": _qualified(config.frontier, "_push"),
            "stats": _qualified(config.frontier, "_stats"),
            "order": sql.SQL(ORDERS[config.queue_order]),
            "filter": sql.Literal(config.filter),
            "query": sql.Literal(config.query),
            "strip": sql.Literal(list(config.strip_params)),
            "test_and_add": sql.Identifier(STORES[config.store]),
        }
        self._sql: dict[str, sql.Composable] = {"frontier_name": names["frontier"],
                                                "stats_name": names["stats"]}
        self._sql |= {
            key: sql.SQL(text).format(**names)
            for key, text in (
                ("schema", SCHEMA), ("upgrade", UPGRADE), ("indexes", INDEXES), ("push", PUSH), ("flush", FLUSH),
                ("flush_stats", FLUSH_STATS), ("flush_bloom", FLUSH_BLOOM),
                ("live_claims", LIVE_CLAIMS), ("batch", BATCH), ("claim", CLAIM),
                ("claim_polite", CLAIM_POLITE), ("renew", RENEW), ("pending", PENDING),
                ("done", DONE), ("release", RELEASE), ("canonical", CANONICAL),
                ("seen", SEEN),
            )
        }
        self._url_params = {
            "filter": config.filter,
            "query": config.query,
            "strip": list(config.strip_params),
        }
        self._claim_params = {
            "claimer": self.claimer,
            # seconds a claim holds unless renewed; 0: until its backend is gone
            "lease": max(0.0, config.claim_timeout),
            "backend": None,
        }

    # connection and schema

    def open(self, tables: bool = True) -> None:
        """Connects, and makes the filter (and with tables, the frontier and
        hosts tables) unless they exist."""
        if tables and not self._tables:
            self._tables = True
            if self._usable(self._conn):
                self._make_schema(self._conn)
        self._run_guarded(self._connect)

    @staticmethod
    def _usable(conn: psycopg.Connection | None) -> bool:
        return conn is not None and not conn.closed and not conn.broken

    def _make_schema(self, conn: psycopg.Connection) -> None:
        # Crawlers starting together: one makes the filter and the tables,
        # the others wait for it and find them there
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('sbf_scrapy'))")
            self._make_filter(conn)
            if self._tables:
                conn.execute(self._sql["schema"])
                self._upgrade(conn)
                conn.execute(self._sql["indexes"])
                conn.execute(self._sql["push"])
                if self.config.flush_on_start and not self._flushed:
                    self._flushed = True
                    self._flush(conn, "SBF_FLUSH_ON_START")

    def _make_filter(self, conn: psycopg.Connection) -> None:
        """Makes the filter of SBF_STORE unless it exists (in the caller's
        transaction, under the advisory lock); a table of the other kind
        stops the crawl at start."""
        store = self.config.store
        kind, _ = conn.execute(FILTER_KIND, {"filter": self.config.filter}).fetchone()
        if kind is not None and kind != store and (store == "exact" or kind == "exact"):
            what = {"bloom": "a shared Bloom filter", "exact": "an exact store (a compressed"
                    " seen)", "other": "neither a shared filter nor a compressed seen"}[kind]
            self._fail(ValueError(
                f"SBF_STORE is {store!r} but SBF_FILTER {self.config.filter!r} is {what}:"
                " set SBF_STORE to the kind it is, or SBF_FILTER to another name"),
                "the filter is of another kind")
        if store == "exact":
            if kind is None:
                conn.execute("SELECT sieve_seen_create(%s)", (self.config.filter,))
        else:
            conn.execute(
                "SELECT shared_bloom_create(%s, %s, %s, growth => %s, if_not_exists => true)",
                (self.config.filter, self.config.capacity, self.config.fpr, self.config.growth),
            )

    def _upgrade(self, conn: psycopg.Connection) -> None:
        """Brings a frontier made by an older sbf_scrapy to this one's
        columns (an ALTER TABLE only if one is missing: it locks the
        table)."""
        missing = conn.execute(
            "SELECT NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass"
            " AND attname = 'claimed_until' AND NOT attisdropped)",
            (self._sql["frontier_name"].as_string(conn),)).fetchone()[0]
        if missing:
            conn.execute(self._sql["upgrade"])

    def _flush(self, conn: psycopg.Connection, why: str) -> None:
        """Empties the frontier, the hosts and the filter (in the caller's
        transaction), unless another crawler holds a live claim."""
        params = dict(self._claim_params, backend=None)
        if conn.execute(self._sql["live_claims"], params).fetchone()[0]:
            logger.warning("sbf_scrapy: %s: another crawler is at work on the frontier;"
                           " not emptied", why)
            return
        conn.execute(self._sql["flush"])
        if self.config.store == "exact":
            seen = conn.execute(FLUSH_EXACT, self._url_params).fetchone()[0]
            conn.execute(sql.SQL("TRUNCATE {}").format(sql.SQL(seen)))
        else:
            conn.execute(self._sql["flush_bloom"])
        stats = self._sql["stats_name"].as_string(conn)
        if conn.execute("SELECT to_regclass(%s) IS NOT NULL", (stats,)).fetchone()[0]:
            conn.execute(self._sql["flush_stats"])
        logger.info("sbf_scrapy: %s: the frontier and the filter emptied", why)

    def _connect(self) -> psycopg.Connection:
        if self._usable(self._conn):
            return self._conn
        if self._conn is not None:
            self._conn.close()
        conn = psycopg.connect(self.config.dsn, autocommit=True)
        conn.add_notice_handler(self._notice)
        # Behind a connection pooler (SBF_POOLER; docs/scrapy.md, "Behind a
        # connection pooler"): each transaction may run on another server
        # connection, so nothing is prepared on the server, and a claim
        # records no backend (the lease alone decides).  Found out when
        # SBF_POOLER is "auto": a pooler hands its clients a backend pid of
        # its own, not the server's.
        pooler = self.config.pooler
        if pooler is None:
            backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
            pooler = backend != conn.info.backend_pid
        if pooler:
            conn.prepare_threshold = None
        self._make_schema(conn)
        self._conn = conn
        self._claim_params["backend"] = None if pooler else conn.info.backend_pid
        if pooler:
            logger.info("sbf_scrapy: connected through a connection pooler: a claim holds"
                        " until its lease runs out, no statement is prepared")
            if self.config.claim_timeout <= 0:
                logger.warning("sbf_scrapy: SBF_CLAIM_TIMEOUT is 0 behind a pooler: the claims"
                               " of a crawler that dies are never taken by another")
        else:
            logger.debug("sbf_scrapy: connected, backend pid %d", conn.info.backend_pid)
        return conn

    @staticmethod
    def _notice(diag: psycopg.errors.Diagnostic) -> None:
        """The server's warnings (a filter given more values than its
        capacity, say) in Scrapy's log as warnings, its notices as info."""
        level = logging.WARNING if diag.severity_nonlocalized == "WARNING" else logging.INFO
        message = diag.message_primary
        if diag.message_detail:
            message += f" ({diag.message_detail})"
        if diag.message_hint:
            message += f" Hint: {diag.message_hint}"
        logger.log(level, "sbf_scrapy: PostgreSQL %s: %s", diag.severity, message)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _lost(self, exc: Exception) -> bool:
        """Whether an error is a lost connection (or none made), which a
        new connection may cure."""
        if self._conn is not None and (self._conn.closed or self._conn.broken):
            return True
        sqlstate = getattr(exc, "sqlstate", None)
        if sqlstate is None:
            # raised by psycopg itself: no connection to the server
            return isinstance(exc, psycopg.OperationalError)
        return sqlstate.startswith("08") or sqlstate in SERVER_GONE

    def _run_guarded(self, call):
        """Calls call() (a statement, or a connection): again at once after
        a deadlock or a serialization failure (up to ATTEMPTS times), again
        after a lost connection until SBF_RECONNECT_TIMEOUT has passed.
        Any other error stops the crawl (StoreError)."""
        if self.error is not None:
            raise StoreError(self.error)
        conflicts = 0
        deadline = None
        pause = 0.25
        while True:
            started = time.perf_counter()
            try:
                return call()
            except psycopg.Error as exc:
                if isinstance(exc, CONFLICTS) and conflicts + 1 < ATTEMPTS:
                    conflicts += 1
                    logger.warning("sbf_scrapy: %s, trying again: %s", type(exc).__name__, exc)
                    continue
                if self._lost(exc):
                    now = time.monotonic()
                    if deadline is None:
                        deadline = now + self.config.reconnect_timeout
                    if now < deadline:
                        logger.warning("sbf_scrapy: no connection to PostgreSQL, trying again"
                                       " in %.2g s: %s", pause, exc)
                        # the reactor waits too: nothing goes on without the
                        # database
                        time.sleep(min(pause, max(0.0, deadline - now)))
                        pause = min(pause * 2, 5.0)
                        continue
                self._fail(exc)
            finally:
                self._inc("db_seconds", time.perf_counter() - started)

    def _fail(self, exc: Exception, why: str = "PostgreSQL refused a statement"):
        """Stops the crawl: logs the error, closes the spider with the
        reason "sbf_error", makes the process exit with status 1; raises
        StoreError."""
        if self.error is None:
            self.error = f"{type(exc).__name__}: {exc}".strip()
            logger.error("sbf_scrapy: %s, the crawl stops"
                         " (what is claimed and not done stays in the frontier): %s",
                         why, self.error)
            if self.stats is not None:
                self.stats.set_value("sbf/error", self.error)
            crawler = self._crawler() if self._crawler is not None else None
            spider = getattr(crawler, "spider", None)
            engine = getattr(crawler, "engine", None)
            if engine is not None and spider is not None:
                from twisted.internet import reactor

                reactor.callLater(0, engine.close_spider, spider, FINISH_REASON)
            atexit.register(_exit_failed)
        raise StoreError(self.error) from exc

    def _run(self, key: str, params: dict[str, Any]) -> list[tuple]:
        """Runs one statement (one transaction); returns its rows."""

        def call():
            cur = self._connect().execute(self._sql[key], params)
            return cur.fetchall() if cur.description else []

        return self._run_guarded(call)

    def _inc(self, key: str, count: float = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(f"sbf/{key}", count)

    # requests to and from rows

    @staticmethod
    def serialise(request: Request, spider: Spider) -> bytes:
        """A request as stored: its to_dict() pickled, without our meta key."""
        fields = request.to_dict(spider=spider)
        fields["meta"] = {k: v for k, v in (fields.get("meta") or {}).items() if k != META_ID}
        return pickle.dumps(fields, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def deserialise(row_id: int, url: str, data: bytes | None, spider: Spider) -> Request:
        """The request of a row, to be fetched at its canonical URL; a row
        queued by the push function (no request) is Request(url), for the
        spider's parse."""
        if data is None:
            request = Request(url)
        else:
            fields = pickle.loads(data)
            fields["url"] = url
            request = request_from_dict(fields, spider=spider)
        request.meta[META_ID] = row_id
        return request

    def _plain(self, request: Request) -> bool:
        """Whether a request's key is its canonical URL: a GET without a
        body, with Scrapy's default fingerprinter."""
        return not self.custom_keys and request.method == "GET" and not request.body

    def canonical(self, urls: Sequence[str]) -> list[str | None]:
        """url_canonical of each URL, as the filter's adds see it (None:
        invalid)."""
        if not urls:
            return []
        return [row[0] for row in self._run("canonical", dict(self._url_params, urls=list(urls)))]

    def keys(self, requests: Sequence[Request]) -> list[str | None]:
        """The filter key of each request: None where it is the canonical
        URL, else the hex of the crawler's fingerprint of the request at its
        canonical URL (so method, body, and whatever a custom fingerprinter
        looks at, tell requests apart, and URL aliases still do not)."""
        keys: list[str | None] = [None] * len(requests)
        where = [i for i, r in enumerate(requests) if not self._plain(r)]
        if not where:
            return keys
        # without a crawler (SbfDupeFilter.from_settings): Scrapy's fingerprint
        fingerprint = (self.fingerprinter.fingerprint if self.fingerprinter is not None
                       else request_fingerprint)
        canonical = self.canonical([requests[i].url for i in where])
        for i, url in zip(where, canonical):
            if url is not None:
                keys[i] = fingerprint(requests[i].replace(url=url)).hex()
        return keys

    # the statements

    def add(self, requests: Sequence[Request], spider: Spider,
            done_id: int | None = None, error: str | None = None) -> Added:
        """Queues the new ones of requests and marks row done_id done, in
        one transaction."""
        stored: list[Request] = []
        blobs = []
        for request in requests:
            try:
                blobs.append(self.serialise(request, spider))
            except (ValueError, pickle.PicklingError, TypeError, AttributeError) as exc:
                # a callback that is not a spider method, meta that does
                # not pickle: the request cannot be stored
                logger.error("sbf_scrapy: cannot store %s: %s", request, exc,
                             extra={"spider": spider})
                self._inc("unstorable")
                continue
            stored.append(request)
        params = dict(self._url_params,
                      urls=[r.url for r in stored], keys=self.keys(stored), requests=blobs,
                      priorities=[r.priority for r in stored],
                      dont_filter=[r.dont_filter for r in stored], id=done_id, error=error)
        queued, invalid, done = self._run("batch", params)[0]
        if done_id is not None:
            self.claimed.pop(done_id, None)
        self._inc("links", len(stored))
        self._inc("links_queued", queued)
        self._inc("links_invalid", invalid)
        self._inc("pages_done", int(done))
        return Added(queued, invalid, done)

    def claim(self, spider: Spider) -> list[Request]:
        """Claims up to SBF_CLAIM_BATCH rows; their requests, in order."""
        params: dict[str, Any] = dict(self._claim_params, n=self.config.claim_batch)
        if self.config.delay > 0:
            params["delay"] = self.config.delay
            rows = self._run("claim_polite", params)
        else:
            rows = self._run("claim", params)
        requests = []
        for row_id, url, data in sorted(rows):
            self.claimed[row_id] = Claimed(url, "GET", b"")
            try:
                request = self.deserialise(row_id, url, data, spider)
            except Exception as exc:
                # a callback renamed since the row was stored, say
                logger.error("sbf_scrapy: cannot load row %d (%s): %s", row_id, url, exc,
                             extra={"spider": spider})
                self.mark_done(row_id, f"cannot load the request: {exc}")
                continue
            self.claimed[row_id] = Claimed(url, request.method, request.body)
            requests.append(request)
        self._inc("claimed", len(rows))
        return requests

    def is_retry(self, request: Request, row: Claimed) -> bool:
        """Whether a request that comes back for a claimed row is the row's
        own (a retry, or a redirect to another form of its URL, fetched as
        the site asks) rather than a redirect elsewhere."""
        if (request.method, request.body) != (row.method, row.body):
            return False
        if request.url == row.url:
            return True
        return self.canonical([request.url])[0] == row.url

    def renew(self) -> None:
        """Renews the lease of this process's claims."""
        if self.claimed and self.error is None:
            self._run("renew", self._claim_params)

    def mark_done(self, row_id: int, error: str | None = None) -> None:
        """Marks a row done without links: its fetch failed for good, or
        its response was not handed to the spider."""
        self._run("done", {"id": row_id, "error": error})
        self.claimed.pop(row_id, None)
        self._inc("pages_failed" if error else "pages_done")

    def has_pending(self) -> bool:
        return bool(self._run("pending", self._claim_params)[0][0])

    def flush(self, why: str) -> None:
        """Empties the frontier and the filter, unless another crawler is at
        work (SBF_PERSIST off, at the end of a crawl)."""

        def call():
            conn = self._connect()
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('sbf_scrapy'))")
                self._flush(conn, why)

        self._run_guarded(call)

    def compact(self, frontier: bool) -> None:
        """Folds the exact store's online adds into its chunks
        (sieve_seen_compact) when a crawler closes with SBF_PERSIST on:
        best effort, if this role owns the seen, it has online adds, and
        (with frontier) no other crawler holds a live claim.  A failure is
        a warning."""
        if self.config.store != "exact" or self.error is not None:
            return
        if not self._usable(self._conn):
            return
        conn = self._conn
        try:
            with conn.transaction():
                kind, owner = conn.execute(FILTER_KIND, self._url_params).fetchone()
                if kind != "exact":
                    return
                if not owner:
                    logger.warning("sbf_scrapy: the exact store %r is not compacted: only its"
                                   " owner may (sieve_seen_compact)", self.config.filter)
                    return
                if frontier and conn.execute(self._sql["live_claims"],
                                             dict(self._claim_params, backend=None)
                                             ).fetchone()[0]:
                    logger.info("sbf_scrapy: another crawler is at work: the exact store is"
                                " not compacted (the last crawler to close does it)")
                    return
                seen = conn.execute(FLUSH_EXACT, self._url_params).fetchone()[0]
                if not conn.execute(sql.SQL(ONLINE_ADDS).format(seen=sql.SQL(seen))
                                    ).fetchone()[0]:
                    return
                # the adds in progress are waited for, at most that long
                conn.execute("SET LOCAL lock_timeout = '10s'")
                started = time.monotonic()
                folded = conn.execute(COMPACT, self._url_params).fetchone()[0]
            logger.info("sbf_scrapy: the exact store %r compacted: %d online adds folded"
                        " in %.2f s", self.config.filter, folded, time.monotonic() - started)
            self._inc("compacted", folded)
        except psycopg.Error as exc:
            logger.warning("sbf_scrapy: the exact store %r is not compacted: %s",
                           self.config.filter, exc)

    def release(self) -> None:
        """Puts this process's unfinished claims back in the queue (also
        after the store stopped the crawl, if the database answers)."""
        if not self._usable(self._conn):
            return
        try:
            self._conn.execute(self._sql["release"], self._claim_params)
        except psycopg.Error as exc:
            logger.warning("sbf_scrapy: cannot put the claims back in the queue (they are"
                           " taken again once their lease runs out): %s", exc)
        self.claimed.clear()

    def seen(self, request: Request) -> bool:
        """The dupefilter's test-and-add of one request (invalid URL: seen)."""
        key = self.keys([request])[0]
        return bool(self._run("seen", dict(self._url_params, url=request.url, key=key))[0][0])
