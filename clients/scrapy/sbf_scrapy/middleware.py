# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""The middlewares that go with FrontierScheduler.

FrontierSpiderMiddleware takes the requests a callback yields for one
response and, in one transaction, canonicalises their URLs, tests and adds
them to the shared filter, queues the new ones in the frontier, and marks
the response's own row done.  The requests do not go to the engine: the
scheduler claims them from the table.  So a page's links and its done mark
commit together: a crawler killed before the commit loses neither (the
filter's adds roll back with it) and the page is fetched again.  Items pass
through as they come.

FrontierDownloaderMiddleware marks a row done, with the error, when its
fetch fails for good (after RetryMiddleware gave up) or is ignored.

Both belong near the engine end of their chains (order 10): the spider one
after OffsiteMiddleware and DepthMiddleware have dropped requests, and
after HttpErrorMiddleware (50), so that it sees error responses too; the
downloader one after RetryMiddleware.
"""

from __future__ import annotations

from scrapy import Request, Spider, signals
from scrapy.http import Response

from .store import META_ID, Store, StoreError


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class FrontierSpiderMiddleware:
    """One transaction per response: its links and its done mark."""

    def __init__(self, crawler):
        self.store = Store.for_crawler(crawler)
        crawler.signals.connect(self.spider_error, signal=signals.spider_error)

    @classmethod
    def from_crawler(cls, crawler) -> FrontierSpiderMiddleware:
        return cls(crawler)

    def process_spider_output(self, response: Response, result, spider: Spider):
        requests: list[Request] = []
        try:
            for entry in result:
                if isinstance(entry, Request):
                    requests.append(entry)
                else:
                    yield entry
        except Exception as exc:
            # the links the callback gave before it failed are kept
            self._commit(response, requests, spider, describe(exc))
            raise
        self._commit(response, requests, spider)

    async def process_spider_output_async(self, response: Response, result, spider: Spider):
        requests: list[Request] = []
        try:
            async for entry in result:
                if isinstance(entry, Request):
                    requests.append(entry)
                else:
                    yield entry
        except Exception as exc:
            self._commit(response, requests, spider, describe(exc))
            raise
        self._commit(response, requests, spider)

    def _commit(self, response: Response, requests: list[Request], spider: Spider,
                error: str | None = None) -> None:
        request = response.request
        row_id = request.meta.get(META_ID) if request is not None else None
        if error is None and response.status >= 400:
            error = f"HTTP {response.status}"
        try:
            self.store.add(requests, spider, done_id=row_id, error=error)
        except StoreError:
            # logged by the store, which stops the crawl; the row stays
            # claimed, and its links unqueued, for the next run
            pass

    def spider_error(self, failure, response: Response, spider: Spider) -> None:
        """A callback that failed before yielding anything: its row is done,
        with the error.  Not when the failure is the batch's own (the
        database, which stops the crawl): then the row stays claimed, and is
        fetched again."""
        if isinstance(failure.value, StoreError) or response.request is None:
            return
        row_id = response.request.meta.get(META_ID)
        if row_id in self.store.claimed:
            try:
                self.store.mark_done(row_id, describe(failure.value))
            except StoreError:
                pass


class FrontierDownloaderMiddleware:
    """A fetch that failed for good marks its row done, with the error."""

    def __init__(self, crawler):
        self.store = Store.for_crawler(crawler)

    @classmethod
    def from_crawler(cls, crawler) -> FrontierDownloaderMiddleware:
        return cls(crawler)

    def process_exception(self, request: Request, exception: Exception, spider: Spider):
        row_id = request.meta.get(META_ID)
        if row_id in self.store.claimed:
            try:
                self.store.mark_done(row_id, describe(exception))
            except StoreError:
                pass
        return None
