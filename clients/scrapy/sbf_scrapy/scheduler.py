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
from collections import deque

from scrapy import Request, Spider
from scrapy.core.scheduler import BaseScheduler
from twisted.internet import task

from .store import META_ID, Store

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

    def close(self, reason: str) -> None:
        if self._poll is not None and self._poll.running:
            self._poll.stop()
        # what this process claimed and did not finish goes back to the
        # queue (a crawler that is killed leaves it claimed instead, to be
        # taken once its backend is gone)
        self.buffer.clear()
        try:
            self.store.release()
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

    def has_pending_requests(self) -> bool:
        return bool(self.buffer) or self.store.has_pending()

    def enqueue_request(self, request: Request) -> bool:
        """Start requests and whatever else reaches the engine go through
        the filter (unless dont_filter) into the frontier.  A request for a
        row this process is fetching (a retry, a redirect) stays here."""
        row_id = request.meta.get(META_ID)
        row_url = self.store.claimed.get(row_id) if row_id is not None else None
        if row_url is not None:
            if self.store.follow(request, row_url):
                self.buffer.append(request)
                self.stats.inc_value("sbf/followed", spider=self.spider)
                return True
            self.store.mark_done(row_id, f"redirected to a URL seen or invalid: {request.url}")
            return False
        added = self.store.add([request], self.spider)
        if added.queued:
            self.stats.inc_value("scheduler/enqueued/sbf", spider=self.spider)
        return added.queued > 0

    def next_request(self) -> Request | None:
        if not self.buffer:
            self.buffer.extend(self.store.claim(self.spider))
        if not self.buffer:
            return None
        self.stats.inc_value("scheduler/dequeued/sbf", spider=self.spider)
        return self.buffer.popleft()

    def __len__(self) -> int:
        return len(self.buffer)
