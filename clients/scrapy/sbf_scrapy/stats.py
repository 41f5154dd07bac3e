# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""Scrapy's stats shared by all the crawler processes of a crawl, in a
PostgreSQL table: STATS_CLASS = "sbf_scrapy.SharedStatsCollector" (what
scrapy_redis.stats.RedisStatsCollector is on Redis).

Scrapy changes stats many times a request, so a change is not a round
trip: the collector keeps this process's changes since its last flush (a
delta a counter, the last value of a set_value, the extreme of a
max_value or min_value), and flushes them every SBF_STATS_INTERVAL seconds
and at close, in one statement that also reads the table back.  The
flushes run in a thread of Twisted's pool on a connection of its own, so a
slow or unreachable database does not hold up the crawl; the first (when
the spider opens: it makes the table) and the last (at close) run in the
reactor's thread.  get_value and get_stats answer from the table as
last read plus the changes not yet flushed: the whole crawl's counts, not
this process's alone.

The keys of PER_PROCESS (start_time, finish_time, finish_reason,
elapsed_time_seconds) are this process's own in get_value and get_stats;
in the table they are the crawl's: its earliest start, its latest finish,
the last reason a process closed with, the longest run.  process_stats()
is this process's own stats, as Scrapy's own collector would have them.

An error of the database in a flush is logged as a warning and the
changes are kept for the next flush: stats are not worth stopping a crawl
for.  What a process has not flushed when it is killed is lost (up to
SBF_STATS_INTERVAL seconds of its counts).
"""

from __future__ import annotations

import datetime
import json
import logging
import math
import pprint
import threading
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import errors, sql
from psycopg.conninfo import conninfo_to_dict
from scrapy.statscollectors import MemoryStatsCollector

from .store import Config

logger = logging.getLogger(__name__)

# Keys whose value is this process's own in get_value and get_stats, and
# how the table combines the processes' values of them
PER_PROCESS = {
    "start_time": "min",
    "finish_time": "max",
    "elapsed_time_seconds": "max",
    "finish_reason": "set",
}

_MISSING = object()

# The table: a row a key; value is JSON (a number for a counter; a
# datetime as {"$datetime": ISO 8601}, see encode)
SCHEMA = """
CREATE TABLE IF NOT EXISTS {stats} (
    key text PRIMARY KEY,
    value jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
)
"""

# One flush: each key's change applied (add: a counter's delta, to a
# number; set; max; min), in key order (two processes' flushes lock their
# rows in one order, so never deadlock), and the whole table read back.
# ins is a new row's value (for add: start + delta).
FLUSH = """
WITH d AS MATERIALIZED (
    SELECT * FROM unnest(%(keys)s::text[], %(ops)s::text[], %(args)s::text[]::jsonb[],
                         %(ins)s::text[]::jsonb[]) WITH ORDINALITY AS d(key, op, arg, ins, ord)
), up AS (
    INSERT INTO {stats} AS s (key, value)
    SELECT key, ins FROM d ORDER BY ord
    ON CONFLICT (key) DO UPDATE
       SET value = (SELECT CASE d.op
                           WHEN 'add' THEN
                               CASE WHEN jsonb_typeof(s.value) = 'number'
                                    THEN to_jsonb(s.value::numeric + d.arg::numeric)
                                    ELSE d.ins END
                           WHEN 'max' THEN greatest(s.value, d.arg)
                           WHEN 'min' THEN least(s.value, d.arg)
                           ELSE d.arg END
                      FROM d WHERE d.key = excluded.key),
           updated_at = now()
    RETURNING s.key, s.value
)
SELECT key, value::text FROM up
UNION ALL
SELECT key, value::text FROM {stats} WHERE key <> ALL (%(keys)s::text[])
"""


def _jsonable(value: Any) -> Any:
    """A value as JSON can hold it, and back (decode): datetimes, dates and
    non-finite floats tagged, NUL characters (which jsonb refuses) replaced,
    anything else JSON has no type for as its str()."""
    if value is None or isinstance(value, (bool, int, str)):
        return value.replace("\x00", "\ufffd") if isinstance(value, str) else value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, Decimal):
        return _jsonable(float(value))
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc)
        # fixed width: the table's greatest() and least() compare them as text
        return {"$datetime": value.isoformat(timespec="microseconds")}
    if isinstance(value, datetime.date):
        return {"$date": value.isoformat()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return _jsonable(str(value))


def encode(value: Any) -> str:
    return json.dumps(_jsonable(value), allow_nan=False)


def _tagged(obj: dict) -> Any:
    if len(obj) == 1:
        (tag, text), = obj.items()
        try:
            if tag == "$datetime":
                return datetime.datetime.fromisoformat(text)
            if tag == "$date":
                return datetime.date.fromisoformat(text)
            if tag == "$float":
                return float(text)
        except (TypeError, ValueError):
            pass
    return obj


def decode(text: str) -> Any:
    return json.loads(text, object_hook=_tagged)


def _number(value: Any) -> bool:
    """Whether a value adds as a number in the table (bool does not: JSON's
    true is no number)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _extreme(op: str, a: Any, b: Any) -> Any:
    try:
        return max(a, b) if op == "max" else min(a, b)
    except TypeError:
        return b


class SharedStatsCollector(MemoryStatsCollector):
    """Scrapy's stats collector, its stats shared through the table
    {SBF_FRONTIER}_stats by every process of the crawl."""

    def __init__(self, crawler):
        super().__init__(crawler)
        settings = crawler.settings
        config = Config.from_settings(settings)
        self.interval = settings.getfloat("SBF_STATS_INTERVAL", 5.0)
        parts = config.frontier.split(".")
        parts[-1] += "_stats"
        self.table = ".".join(parts)
        stats = sql.Identifier(*parts)
        self._schema = sql.SQL(SCHEMA).format(stats=stats)
        self._flush_sql = sql.SQL(FLUSH).format(stats=stats)
        self._dsn = config.dsn
        # self._stats (Scrapy's) is this process's own stats; the shared
        # view is self._table (the table as last read) with the changes
        # (key -> [op, arg, start]) of the flush under way, self._sending,
        # and those not yet sent, self._pending, applied
        self._table: dict[str, Any] = {}
        self._sending: dict[str, list] = {}
        self._pending: dict[str, list] = {}
        self._lock = threading.Lock()
        # the connection, used by one flush at a time
        self._conn: psycopg.Connection | None = None
        self._conn_lock = threading.Lock()
        self._made = False
        self._failures = 0
        self._loop = None

    # the shared view

    def _view(self, key: str, default: Any = None) -> Any:
        if key in PER_PROCESS:
            return self._stats.get(key, default)
        value = self._table.get(key, _MISSING)
        for changes in (self._sending, self._pending):
            change = changes.get(key)
            if change is not None:
                value = self._applied(value, change)
        return default if value is _MISSING else value

    @staticmethod
    def _applied(base: Any, change: Sequence) -> Any:
        """A key's value in the table once a change is flushed (as FLUSH
        does it)."""
        op, arg, start = change
        if op == "add":
            return base + arg if _number(base) else start + arg
        if op in ("max", "min") and base is not _MISSING:
            return _extreme(op, base, arg)
        return arg

    def _change(self, key: str, op: str, arg: Any, start: Any = 0) -> None:
        """Records a change of a key, on top of its unflushed one (the
        caller holds the lock)."""
        if key in PER_PROCESS:
            op = PER_PROCESS[key]
        old = self._pending.get(key)
        if op == "add" and not (_number(arg) and _number(start)):
            # not a number the table can add: the value it makes here
            try:
                op, arg = "set", self._view(key, start) + arg
            except TypeError:
                op, arg = "set", self._stats.get(key)
        if old is None or op == "set":
            new = [op, arg, start]
        elif old[0] == op == "add":
            new = ["add", old[1] + arg, old[2]]
        elif old[0] == op:
            new = [op, _extreme(op, old[1], arg), None]
        elif old[0] == "set":
            new = ["set", self._applied(old[1], (op, arg, start)), None]
        else:
            # an increment and a max of one key in one interval: the
            # value they make here (another process's change of the key
            # in the interval is overwritten)
            new = ["set", self._applied(self._view(key, _MISSING), (op, arg, start)), None]
        self._pending[key] = new

    # Scrapy's StatsCollector interface

    def get_value(self, key, default=None, spider=None):
        with self._lock:
            return self._view(key, default)

    def get_stats(self, spider=None):
        """The whole crawl's stats (a new dict), this process's own for the
        keys of PER_PROCESS."""
        with self._lock:
            keys = set(self._table) | set(self._sending) | set(self._pending) | set(self._stats)
            stats = {}
            for key in keys:
                value = self._view(key, _MISSING)
                if value is not _MISSING:
                    stats[key] = value
            return stats

    def process_stats(self) -> dict:
        """This process's own stats, as Scrapy's collector would have them."""
        with self._lock:
            return dict(self._stats)

    def set_value(self, key, value, spider=None):
        with self._lock:
            self._stats[key] = value
            self._change(key, "set", value)

    def set_stats(self, stats, spider=None):
        """Sets each key of stats (the table's other keys stay)."""
        with self._lock:
            self._stats = dict(stats)
            for key, value in stats.items():
                self._change(key, "set", value)

    def inc_value(self, key, count=1, start=0, spider=None):
        with self._lock:
            d = self._stats
            d[key] = d.setdefault(key, start) + count
            # the common case first: Scrapy calls this many times a request
            if type(count) is int:
                old = self._pending.get(key)
                if old is None:
                    if type(start) is int and key not in PER_PROCESS:
                        self._pending[key] = ["add", count, start]
                        return
                elif old[0] == "add":
                    old[1] += count
                    return
            self._change(key, "add", count, start)

    def max_value(self, key, value, spider=None):
        with self._lock:
            self._stats[key] = max(self._stats.setdefault(key, value), value)
            self._change(key, "max", value)

    def min_value(self, key, value, spider=None):
        with self._lock:
            self._stats[key] = min(self._stats.setdefault(key, value), value)
            self._change(key, "min", value)

    def clear_stats(self, spider=None):
        """Forgets this process's stats and its unflushed changes; the
        table keeps its rows (DELETE them to start the counts again)."""
        with self._lock:
            self._stats.clear()
            self._pending.clear()

    def open_spider(self, spider):
        from twisted.internet import task, threads

        self._flush()
        if self.interval > 0:
            self._loop = task.LoopingCall(threads.deferToThread, self._flush_in_thread)
            self._loop.start(self.interval, now=False)

    def close_spider(self, spider, reason):
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if not self._flush():
            logger.warning("sbf_scrapy: this process's last changes of the shared stats"
                           " (%d keys) are lost", len(self._pending),
                           extra={"spider": spider})
        with self._conn_lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        stats = self.get_stats()
        if self._dump:
            logger.info("Dumping Scrapy stats (the whole crawl's, %s):\n%s", self.table,
                        pprint.pformat(stats), extra={"spider": spider})
        self._persist_stats(stats, spider)

    # the flush

    def _connect(self) -> psycopg.Connection:
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        given = conninfo_to_dict(self._dsn)
        extra: dict[str, Any] = {}
        # a name of its own beside the crawler's other connection
        name = given.get("application_name")
        extra["application_name"] = f"{name} stats" if name else "sbf_scrapy stats"
        if "connect_timeout" not in given:
            extra["connect_timeout"] = 10
        conn = psycopg.connect(self._dsn, autocommit=True, **extra)
        # no prepared statements: one flush each few seconds does not need
        # them, and a pooler in transaction mode does not keep them
        conn.prepare_threshold = None
        self._conn = conn
        if not self._made:
            with conn.transaction():
                # crawlers starting together: one makes the table (the lock
                # of the frontier's tables)
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('sbf_scrapy'))")
                conn.execute(self._schema)
            self._made = True
        return conn

    def _flush(self) -> bool:
        """Sends the changes not yet flushed and reads the table back;
        whether it did.  Never raises: an error is logged, and the changes
        are kept for the next flush (dropped if the database refuses their
        values)."""
        with self._conn_lock:
            with self._lock:
                batch, self._pending = self._pending, {}
                self._sending = batch
            keys = sorted(batch)
            params = {
                "keys": keys,
                "ops": [batch[k][0] for k in keys],
                "args": [encode(batch[k][1]) for k in keys],
                "ins": [encode(self._applied(_MISSING, batch[k])) for k in keys],
            }
            try:
                rows = self._connect().execute(self._flush_sql, params).fetchall()
            except (psycopg.Error, OSError) as exc:
                self._failed(batch, exc)
                return False
            table = {}
            for key, text in rows:
                try:
                    table[key] = decode(text)
                except ValueError:
                    continue
            with self._lock:
                self._table = table
                self._sending = {}
            if self._failures:
                logger.info("sbf_scrapy: the shared stats are flushed again, after %d"
                            " failed flushes", self._failures)
                self._failures = 0
            return True

    def _flush_in_thread(self) -> None:
        try:
            self._flush()
        except Exception:
            # a bug of ours: still no reason to stop the crawl, or the flushes
            logger.exception("sbf_scrapy: the flush of the shared stats failed")

    def _failed(self, batch: dict, exc: Exception) -> None:
        if isinstance(exc, errors.UndefinedTable):
            # dropped meanwhile: made again by the next flush
            self._made = False
        dropped = isinstance(exc, psycopg.DataError)
        with self._lock:
            self._sending = {}
            if not dropped:
                # back under the changes made since
                newer, self._pending = self._pending, dict(batch)
                for key, (op, arg, start) in newer.items():
                    self._change(key, op, arg, start)
        self._failures += 1
        if self._failures == 1 or dropped:
            logger.warning("sbf_scrapy: cannot flush the shared stats to %s (%s;"
                           " the crawl goes on, %s): %s", self.table, type(exc).__name__,
                           "these changes are dropped" if dropped
                           else "they are sent again with the next flush", exc)
        else:
            logger.debug("sbf_scrapy: flush of the shared stats failed again: %s", exc)
