# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""A Scrapy scheduler whose queue is a PostgreSQL table shared by any
number of crawler processes: SCHEDULER = "sbf_scrapy.FrontierScheduler".

Rows go queued -> claimed -> done.  next_request claims a few rows at a
time (FOR UPDATE SKIP LOCKED, so claimers never wait for each other) into a
local buffer; FrontierSpiderMiddleware marks a row done in the transaction
that queues its page's links.  A row claimed by a backend that no longer
exists is claimable again, so what a killed crawler was fetching is taken
up by the others, or by itself restarted.
"""

from __future__ import annotations

import logging
import time
from collections import deque

from scrapy import Request, Spider
from scrapy.core.scheduler import BaseScheduler
from twisted.internet import task

from .store import META_ID, Store, StoreError

logger = logging.getLogger(__name__)


class FrontierScheduler(BaseScheduler):
    """The frontier table as Scrapy's scheduler (BaseScheduler)."""

    def __init__(self, crawler):
        self.crawler = crawler
        self.store = Store.for_crawler(crawler)
        self.stats = crawler.stats
        self.buffer: deque[Request] = deque()
        self.spider: Spider | None = None
        self._poll: task.LoopingCall | None = None
        self._renew: task.LoopingCall | None = None
        # since when next_request has found no work (SBF_IDLE_BEFORE_CLOSE)
        self._idle_since: float | None = None

    @classmethod
    def from_crawler(cls, crawler) -> FrontierScheduler:
        return cls(crawler)

    def open(self, spider: Spider) -> None:
        self.spider = spider
        self.store.open(tables=True)
        # with a delay, a host's time may come before the poll's
        config = self.store.config
        interval = config.idle_poll
        if config.delay > 0:
            interval = min(interval, config.delay) if interval > 0 else config.delay
        if interval > 0:
            self._poll = task.LoopingCall(self._wake)
            self._poll.start(interval, now=False)
        # the claims' lease, renewed three times in its length
        if config.claim_timeout > 0:
            self._renew = task.LoopingCall(self._renew_claims)
            self._renew.start(config.claim_timeout / 3, now=False)

    def close(self, reason: str) -> None:
        for loop in (self._poll, self._renew):
            if loop is not None and loop.running:
                loop.stop()
        # what this process claimed and did not finish goes back to the
        # queue (a crawler that is killed leaves it claimed instead, to be
        # taken once its backend is gone)
        self.buffer.clear()
        try:
            self.store.release()
            if (not self.store.config.persist and reason == "finished"
                    and self.store.error is None):
                self.store.flush("SBF_PERSIST off")
            elif self.store.config.persist:
                # the exact store's online adds folded into its chunks
                # (docs/scrapy.md, "The exact store")
                self.store.compact(frontier=True)
        except StoreError:
            pass
        finally:
            self.store.close()

    def _wake(self) -> None:
        """Other crawlers may have queued links since next_request last
        found none: have the engine ask again, sooner than its 5 s
        heartbeat."""
        engine = self.crawler.engine
        # the engine's slot: "slot" in Scrapy 2.8, "_slot" in later ones
        slot = getattr(engine, "slot", None) or getattr(engine, "_slot", None)
        if not self.buffer and slot is not None and slot.nextcall is not None:
            slot.nextcall.schedule()

    def _renew_claims(self) -> None:
        try:
            self.store.renew()
        except StoreError:
            pass

    # The store's errors stop the crawl (the store logs them and closes the
    # spider): here they only end the call

    def has_pending_requests(self) -> bool:
        """Work in the buffer, queued, or in another crawler's hands; or,
        with SBF_IDLE_BEFORE_CLOSE, none yet for less than that long (or
        none ever, if it is negative: the crawler waits for pushed URLs
        until it is stopped)."""
        if self.buffer:
            return True
        try:
            if self.store.has_pending():
                self._idle_since = None
                return True
        except StoreError:
            return False
        wait = self.store.config.idle_before_close
        if wait == 0:
            return False
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
            logger.info("sbf_scrapy: the frontier is empty; waiting for work%s",
                        "" if wait < 0 else f" for up to {wait:g} s")
        return wait < 0 or now - self._idle_since < wait

    def enqueue_request(self, request: Request) -> bool:
        """Start requests and whatever else reaches the engine go through
        the filter (unless dont_filter) into the frontier.  A request that
        comes back for a row this process is fetching: a retry, or a
        redirect to another form of the row's URL, stays here under the
        row; a redirect elsewhere is queued, and the row marked done, in one
        transaction (a crawler killed at any point loses neither)."""
        try:
            row_id = request.meta.get(META_ID)
            row = self.store.claimed.get(row_id) if row_id is not None else None
            if row is not None:
                if self.store.is_retry(request, row):
                    self.buffer.append(request)
                    self.stats.inc_value("sbf/followed", spider=self.spider)
                    return True
                added = self.store.add([request], self.spider, done_id=row_id)
                self.stats.inc_value("sbf/redirected", spider=self.spider)
            else:
                added = self.store.add([request], self.spider)
        except StoreError:
            return False
        if added.queued:
            self.stats.inc_value("scheduler/enqueued/sbf", spider=self.spider)
        return added.queued > 0

    def next_request(self) -> Request | None:
        if not self.buffer:
            try:
                self.buffer.extend(self.store.claim(self.spider))
            except StoreError:
                return None
        if not self.buffer:
            return None
        self._idle_since = None
        self.stats.inc_value("scheduler/dequeued/sbf", spider=self.spider)
        return self.buffer.popleft()

    def __len__(self) -> int:
        return len(self.buffer)
