# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""Scrapy on PostgreSQL and the sbf extension.

What scrapy-redis gives Scrapy on Redis: a URL filter and a frontier shared
by any number of crawler processes, here with sbf's shared Bloom filter (or,
with SBF_STORE = "exact", its exact online store) and a PostgreSQL table,
and one more thing: a page's links and its done mark
commit together, so a crawler killed at any moment loses nothing.  See
docs/scrapy.md in the sbf repository.

To use the frontier, merge SETTINGS into a project's settings (and set
SBF_DSN); to keep Scrapy's own scheduler with a shared filter, set
DUPEFILTER_CLASS = "sbf_scrapy.SbfDupeFilter" alone.
"""

from .dupefilter import SbfDupeFilter
from .middleware import FrontierDownloaderMiddleware, FrontierSpiderMiddleware
from .scheduler import FrontierScheduler
from .stats import SharedStatsCollector
from .store import FINISH_REASON, META_ID, Config, Store, StoreError

__all__ = [
    "SETTINGS",
    "FINISH_REASON",
    "META_ID",
    "Config",
    "FrontierDownloaderMiddleware",
    "FrontierScheduler",
    "FrontierSpiderMiddleware",
    "SbfDupeFilter",
    "SharedStatsCollector",
    "Store",
    "StoreError",
]

__version__ = "1.2.0.dev0"

# The frontier: the scheduler and its two middlewares
SETTINGS = {
    "SCHEDULER": "sbf_scrapy.FrontierScheduler",
    "SPIDER_MIDDLEWARES": {"sbf_scrapy.FrontierSpiderMiddleware": 10},
    "DOWNLOADER_MIDDLEWARES": {"sbf_scrapy.FrontierDownloaderMiddleware": 10},
}
