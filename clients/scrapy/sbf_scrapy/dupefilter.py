# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""A dupefilter for Scrapy's own scheduler: DUPEFILTER_CLASS =
"sbf_scrapy.SbfDupeFilter".

Each request is one round trip: shared_test_and_add(filter,
url_canonical(url)) (seen_test_and_add with SBF_STORE "exact"), committed at once (a request whose key is a
fingerprint costs one more: store.py, Store.keys).  Several processes sharing the
filter never fetch the same canonical URL twice, but the queue stays in
each process's memory: a process that dies loses what it had queued,
though the filter remembers it as seen.  FrontierScheduler does not have
that gap.
"""

from __future__ import annotations

import logging

from scrapy import Request, Spider
from scrapy.dupefilters import BaseDupeFilter

from .store import Config, Store, StoreError


class SbfDupeFilter(BaseDupeFilter):
    """Scrapy's dupefilter interface on a shared sbf filter."""

    def __init__(self, store: Store, debug: bool = False):
        self.store = store
        self.debug = debug
        self.logdupes = True
        self.logger = logging.getLogger(__name__)

    @classmethod
    def from_crawler(cls, crawler) -> SbfDupeFilter:
        return cls(Store.for_crawler(crawler), crawler.settings.getbool("DUPEFILTER_DEBUG"))

    @classmethod
    def from_settings(cls, settings) -> SbfDupeFilter:
        return cls(Store(Config.from_settings(settings)), settings.getbool("DUPEFILTER_DEBUG"))

    def open(self) -> None:
        self.store.open(tables=False)

    def close(self, reason: str) -> None:
        try:
            if self.store.config.persist:
                self.store.compact(frontier=False)
        finally:
            self.store.close()

    def request_seen(self, request: Request) -> bool:
        # an error of the store stops the crawl (Store._fail); the request
        # counts as seen, not fetched
        try:
            return self.store.seen(request)
        except StoreError:
            return True

    def log(self, request: Request, spider: Spider) -> None:
        if self.debug:
            self.logger.debug("Filtered duplicate request: %(request)s", {"request": request},
                              extra={"spider": spider})
        elif self.logdupes:
            self.logger.debug("Filtered duplicate request: %(request)s - no more duplicates"
                              " will be shown (see DUPEFILTER_DEBUG to show all duplicates)",
                              {"request": request}, extra={"spider": spider})
            self.logdupes = False
        spider.crawler.stats.inc_value("dupefilter/filtered", spider=spider)
