# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""The PostgreSQL side of sbf_scrapy: its settings, one connection per
crawler, the tables, and every statement the scheduler and the middlewares
send.

A crawler process holds one connection, in autocommit mode, shared by the
scheduler and both middlewares (Scrapy runs them all in its one reactor
thread, so they never use it at the same time).  Each operation is one
statement, hence one transaction: a claim, a page's batch of links with its
done mark, a release.  The frontier's claims are told apart by the
connection's backend pid: a claim whose backend is gone (the crawler was
killed, or lost its connection) can be taken again by anyone.
"""

from __future__ import annotations

import logging
import pickle
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import psycopg
from psycopg import errors, sql
from scrapy import Request, Spider
from scrapy.settings import BaseSettings
from scrapy.utils.request import request_from_dict

logger = logging.getLogger(__name__)

# The meta key of a request that came from the frontier: its row's id
META_ID = "sbf_id"

# Errors after which a statement is sent again: two crawlers' batches
# waiting for each other's adds (shared.md, "Limits and surprises"), and a
# connection lost (its claims are anyone's now; the done mark is still due)
RETRIED = (errors.DeadlockDetected, errors.SerializationFailure, psycopg.OperationalError)
ATTEMPTS = 3


@dataclass(frozen=True)
class Config:
    """The SBF_* settings (docs/scrapy.md, "Settings")."""

    dsn: str = ""
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

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> Config:
        delay = settings.get("SBF_DELAY")
        return cls(
            dsn=settings.get("SBF_DSN", cls.dsn),
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
        )


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


# Rows go queued -> claimed -> done.  A claimed row records the backend that
# claimed it and when; claims counts how many times it was claimed (more
# than once only when a claimer died with it).  url is the canonical URL
# (url_canonical), host its url_host; request is the pickled
# Request.to_dict().  The partial indexes serve the claims: by priority,
# by host (with a delay), and the few claimed rows (liveness of claimers).
SCHEMA = """
CREATE TABLE IF NOT EXISTS {frontier} (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url text NOT NULL,
    host text NOT NULL,
    priority integer NOT NULL DEFAULT 0,
    request bytea NOT NULL,
    state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'done')),
    queued_at timestamptz NOT NULL DEFAULT now(),
    claims integer NOT NULL DEFAULT 0,
    claimed_by integer,
    claimed_at timestamptz,
    done_by integer,
    done_at timestamptz,
    error text
);
CREATE INDEX IF NOT EXISTS {queued_index} ON {frontier} (priority DESC, id)
    WHERE state = 'queued';
CREATE INDEX IF NOT EXISTS {host_index} ON {frontier} (host, priority DESC, id)
    WHERE state <> 'done';
CREATE INDEX IF NOT EXISTS {claimed_index} ON {frontier} (claimed_by)
    WHERE state = 'claimed';
CREATE TABLE IF NOT EXISTS {hosts} (
    host text PRIMARY KEY,
    next_fetch timestamptz NOT NULL DEFAULT '-infinity'
);
"""

# A row claimed by a backend that is gone.  backend_start tells a backend
# that reused the pid from the claimer; it is NULL for another role's
# backend when the user may not see it (not pg_read_all_stats): such a
# claim counts as alive.
DEAD_CLAIM = """
f.state = 'claimed' AND NOT EXISTS (
    SELECT 1 FROM pg_stat_activity a
     WHERE a.pid = f.claimed_by
       AND (a.backend_start IS NULL OR a.backend_start <= f.claimed_at))
"""

# One page's links, and its done mark, in one statement.  The links are
# canonicalised (NULL: invalid, dropped), tested and added in input order
# (a repeat within the batch is seen; a NULL is answered NULL), and the new
# ones queued; their hosts enter the hosts table.  $id is the page's row
# (NULL for start requests).  The filter's adds are transactional: if this
# statement does not commit, neither do they.
BATCH = """
WITH links AS MATERIALIZED (
    SELECT l.ord, l.request, l.priority, l.dont_filter,
           url_canonical(l.url, %(query)s, %(strip)s::text[], strict => false) AS url
      FROM unnest(%(urls)s::text[], %(requests)s::bytea[], %(priorities)s::integer[],
                  %(dont_filter)s::boolean[])
           WITH ORDINALITY AS l(url, request, priority, dont_filter, ord)
), tested AS (
    SELECT t.ord, t.seen
      FROM (SELECT array_agg(url ORDER BY ord) AS urls, array_agg(ord ORDER BY ord) AS ords
              FROM links) a,
           unnest(a.ords, shared_test_and_add(%(filter)s::regclass, a.urls)) AS t(ord, seen)
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

# A claim without a delay: rows of dead claimers first, then queued rows
# by priority, first in first out; rows another claim has locked are
# skipped, so claimers never wait for one another.
CLAIM = """
WITH dead AS (
    SELECT f.id FROM {frontier} f
     WHERE f.state <> 'done' AND """ + DEAD_CLAIM + """
     LIMIT %(n)s
       FOR UPDATE SKIP LOCKED
), fresh AS (
    SELECT f.id FROM {frontier} f
     WHERE f.state = 'queued'
     ORDER BY f.priority DESC, f.id
     LIMIT %(n)s
       FOR UPDATE SKIP LOCKED
), picked AS (
    SELECT id FROM dead UNION ALL SELECT id FROM fresh LIMIT %(n)s
)
UPDATE {frontier} f
   SET state = 'claimed', claimed_by = pg_backend_pid(), claimed_at = now(),
       claims = f.claims + 1
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
            ORDER BY f.priority DESC, f.id
            LIMIT 1
              FOR UPDATE SKIP LOCKED) r
), moved AS (
    UPDATE {hosts} h SET next_fetch = now() + %(delay)s * interval '1 second'
      FROM picked p
     WHERE h.host = p.host
)
UPDATE {frontier} f
   SET state = 'claimed', claimed_by = pg_backend_pid(), claimed_at = now(),
       claims = f.claims + 1
  FROM picked p
 WHERE f.id = p.id
RETURNING f.id, f.url, f.request
"""

# Work may still come: queued rows, or rows claimed by another backend
# (alive, its pages may bring links; dead, its rows are claimable)
PENDING = """
SELECT EXISTS (SELECT 1 FROM {frontier} WHERE state = 'queued')
    OR EXISTS (SELECT 1 FROM {frontier}
                WHERE state = 'claimed' AND claimed_by <> pg_backend_pid())
"""

# A page that ends without links: failed for good, or ignored
DONE = """
UPDATE {frontier}
   SET state = 'done', done_by = pg_backend_pid(), done_at = now(), error = %(error)s
 WHERE id = %(id)s AND state <> 'done'
"""

# Back to the queue: this backend's claims that it will not finish
RELEASE = """
UPDATE {frontier}
   SET state = 'queued', claimed_by = NULL, claimed_at = NULL
 WHERE state = 'claimed' AND claimed_by = pg_backend_pid()
"""

# A request that comes back for a row being fetched (a retry, a redirect):
# true if it is to be fetched, false if its URL is invalid or was seen
FOLLOW = """
SELECT CASE WHEN c IS NULL THEN false
            WHEN c = %(row_url)s THEN true
            ELSE NOT shared_test_and_add(%(filter)s::regclass, c) END
  FROM url_canonical(%(url)s, %(query)s, %(strip)s::text[], strict => false) AS c
"""

# The dupefilter's one round trip: a request with an invalid URL is seen
SEEN = """
SELECT coalesce(shared_test_and_add(%(filter)s::regclass,
                url_canonical(%(url)s, %(query)s, %(strip)s::text[], strict => false)), true)
"""


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
            store = cls(Config.from_settings(crawler.settings), crawler.stats)
            cls._stores[crawler] = store
        return store

    def __init__(self, config: Config, stats=None):
        self.config = config
        self.stats = stats
        self._conn: psycopg.Connection | None = None
        self._tables = False
        # id -> canonical URL of the rows this process claimed and has not
        # marked done: in the scheduler's buffer, or being fetched
        self.claimed: dict[int, str] = {}
        names = {
            "frontier": _qualified(config.frontier),
            "hosts": _qualified(config.frontier, "_hosts"),
            "queued_index": sql.Identifier(config.frontier.split(".")[-1] + "_queued"),
            "host_index": sql.Identifier(config.frontier.split(".")[-1] + "_host"),
            "claimed_index": sql.Identifier(config.frontier.split(".")[-1] + "_claimed"),
        }
        self._sql = {
            key: sql.SQL(text).format(**names)
            for key, text in (
                ("schema", SCHEMA), ("batch", BATCH), ("claim", CLAIM),
                ("claim_polite", CLAIM_POLITE), ("pending", PENDING), ("done", DONE),
                ("release", RELEASE), ("follow", FOLLOW), ("seen", SEEN),
            )
        }
        self._url_params = {
            "filter": config.filter,
            "query": config.query,
            "strip": list(config.strip_params),
        }

    # connection and schema

    def open(self, tables: bool = True) -> None:
        """Connects, and makes the filter (and with tables, the frontier and
        hosts tables) unless they exist."""
        if tables and not self._tables:
            self._tables = True
            if self._conn is not None and not self._conn.closed and not self._conn.broken:
                self._make_schema(self._conn)
        self._connect()

    def _make_schema(self, conn: psycopg.Connection) -> None:
        # Crawlers starting together: one makes the filter and the tables,
        # the others wait for it and find them there
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('sbf_scrapy'))")
            conn.execute(
                "SELECT shared_bloom_create(%s, %s, %s, growth => %s, if_not_exists => true)",
                (self.config.filter, self.config.capacity, self.config.fpr, self.config.growth),
            )
            if self._tables:
                conn.execute(self._sql["schema"])

    def _connect(self) -> psycopg.Connection:
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        if self._conn is not None:
            self._conn.close()
        conn = psycopg.connect(self.config.dsn, autocommit=True)
        self._make_schema(conn)
        self._conn = conn
        logger.debug("sbf_scrapy: connected, backend pid %d", conn.info.backend_pid)
        return conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _run(self, key: str, params: dict[str, Any]) -> list[tuple]:
        """Runs one statement (one transaction), again after a deadlock, a
        serialization failure or a lost connection; returns its rows."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                cur = self._connect().execute(self._sql[key], params)
                return cur.fetchall() if cur.description else []
            except RETRIED as exc:
                if attempt == ATTEMPTS:
                    raise
                logger.warning("sbf_scrapy: %s, trying again: %s", type(exc).__name__, exc)
                if isinstance(exc, psycopg.OperationalError):
                    # a server restarting: give it a moment
                    time.sleep(0.5 * attempt)
        raise AssertionError("unreachable")

    def _inc(self, key: str, count: int = 1) -> None:
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
    def deserialise(row_id: int, url: str, data: bytes, spider: Spider) -> Request:
        """The request of a row, to be fetched at its canonical URL."""
        fields = pickle.loads(data)
        fields["url"] = url
        request = request_from_dict(fields, spider=spider)
        request.meta[META_ID] = row_id
        return request

    # the statements

    def add(self, requests: Sequence[Request], spider: Spider,
            done_id: int | None = None, error: str | None = None) -> Added:
        """Queues the new ones of requests and marks row done_id done, in
        one transaction."""
        urls, blobs, priorities, dont_filter = [], [], [], []
        for request in requests:
            try:
                blob = self.serialise(request, spider)
            except (ValueError, pickle.PicklingError, TypeError, AttributeError) as exc:
                # a callback that is not a spider method, meta that does
                # not pickle: the request cannot be stored
                logger.error("sbf_scrapy: cannot store %s: %s", request, exc,
                             extra={"spider": spider})
                self._inc("unstorable")
                continue
            urls.append(request.url)
            blobs.append(blob)
            priorities.append(request.priority)
            dont_filter.append(request.dont_filter)
        params = dict(self._url_params, urls=urls, requests=blobs, priorities=priorities,
                      dont_filter=dont_filter, id=done_id, error=error)
        queued, invalid, done = self._run("batch", params)[0]
        if done_id is not None:
            self.claimed.pop(done_id, None)
        self._inc("links", len(urls))
        self._inc("links_queued", queued)
        self._inc("links_invalid", invalid)
        self._inc("pages_done", int(done))
        return Added(queued, invalid, done)

    def claim(self, spider: Spider) -> list[Request]:
        """Claims up to SBF_CLAIM_BATCH rows; their requests, in order."""
        params: dict[str, Any] = {"n": self.config.claim_batch}
        if self.config.delay > 0:
            params["delay"] = self.config.delay
            rows = self._run("claim_polite", params)
        else:
            rows = self._run("claim", params)
        requests = []
        for row_id, url, data in sorted(rows):
            self.claimed[row_id] = url
            try:
                requests.append(self.deserialise(row_id, url, data, spider))
            except Exception as exc:
                # a callback renamed since the row was stored, say
                logger.error("sbf_scrapy: cannot load row %d (%s): %s", row_id, url, exc,
                             extra={"spider": spider})
                self.mark_done(row_id, f"cannot load the request: {exc}")
        self._inc("claimed", len(rows))
        return requests

    def follow(self, request: Request, row_url: str) -> bool:
        """Whether a request that comes back for a claimed row (a retry, a
        redirect) is to be fetched: same URL, or a new one."""
        if request.dont_filter:
            return True
        params = dict(self._url_params, url=request.url, row_url=row_url)
        return bool(self._run("follow", params)[0][0])

    def mark_done(self, row_id: int, error: str | None = None) -> None:
        """Marks a row done without links: its fetch failed for good, or
        its response was not handed to the spider."""
        self._run("done", {"id": row_id, "error": error})
        self.claimed.pop(row_id, None)
        self._inc("pages_failed" if error else "pages_done")

    def has_pending(self) -> bool:
        return bool(self._run("pending", {})[0][0])

    def release(self) -> None:
        """Puts this backend's unfinished claims back in the queue."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            return
        self._run("release", {})
        self.claimed.clear()

    def seen(self, url: str) -> bool:
        """The dupefilter's test-and-add of one URL (invalid: seen)."""
        return bool(self._run("seen", dict(self._url_params, url=url))[0][0])

