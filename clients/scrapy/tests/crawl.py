# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""Crawls a site by following every link, one way of four, and writes
Scrapy's stats as JSON: what t/090_scrapy.pl and bench/scrapy_crawl.sh run.

    python3 crawl.py --start URL --mode MODE [--dsn DSN] [--stats FILE] ...

MODE is one of
  frontier            sbf_scrapy's scheduler and middlewares: the frontier
                      table, one transaction per page (any number of
                      processes share it)
  dupefilter          Scrapy's scheduler with sbf_scrapy.SbfDupeFilter: one
                      round trip per request
  scrapy              Scrapy's scheduler and in-memory dupefilter, as it
                      comes (its fingerprint drops fragments and sorts the
                      query, and keeps utm_ parameters)
  scrapy-canonical    the same, with the URL canonicalised in Python first
                      (w3lib's canonicalize_url, parameters of
                      --strip-params removed)
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import sys
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.utils.request import fingerprint
from w3lib.url import canonicalize_url

STRIP_PARAMS: list[str] = []


class LinkSpider(scrapy.Spider):
    """One item per page (its URL and title); every link followed."""

    name = "site"

    def __init__(self, start: str, start_dont_filter: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.start_dont_filter = start_dont_filter

    def start_requests(self):
        # Scrapy's own start requests are dont_filter: each process, and
        # each restart, would queue the start URL again (unless
        # --start-dont-filter: each process of a shared dupefilter fetches
        # it, and they race for its links)
        for url in self.start_urls:
            yield scrapy.Request(url, callback=self.parse, dont_filter=self.start_dont_filter)

    def parse(self, response):
        yield {"url": response.url, "title": response.css("title::text").get()}
        for link in response.css("a"):
            href = link.attrib.get("href")
            if href is None:
                continue
            # a link with hreflang: asked for in that language
            language = link.attrib.get("hreflang")
            headers = {"Accept-Language": language} if language else None
            yield response.follow(href, callback=self.parse, headers=headers)
        # a POST form: submitted with its fields
        for form in response.css('form[method="post"]'):
            fields = {i.attrib["name"]: i.attrib.get("value", "")
                      for i in form.css("input[name]")}
            yield scrapy.FormRequest(response.urljoin(form.attrib.get("action", "")),
                                     formdata=fields, callback=self.parse)


def strip_params(url: str) -> str:
    """The URL without the query parameters of STRIP_PARAMS (fnmatch
    patterns: utm_* is a prefix, as in url_canonical)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not any(fnmatch.fnmatchcase(k, p) for p in STRIP_PARAMS)]
    return urlunsplit(parts._replace(query=urlencode(query)))


class CanonicalFingerprinter:
    """Scrapy's fingerprint of the canonical URL (scrapy-canonical)."""

    def fingerprint(self, request: scrapy.Request) -> bytes:
        url = canonicalize_url(strip_params(request.url), keep_fragments=False)
        key = b" ".join([request.method.encode(), url.encode(), request.body])
        return hashlib.sha1(key).digest()


class LanguageFingerprinter:
    """Scrapy's fingerprint, with the Accept-Language header
    (--fingerprinter language): a page asked for in two languages is two
    requests."""

    def fingerprint(self, request: scrapy.Request) -> bytes:
        return fingerprint(request, include_headers=["Accept-Language"])


def value(text: str):
    """A --set value: JSON if it is, else the string."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def settings_for(args: argparse.Namespace) -> dict:
    settings = {
        "LOG_LEVEL": args.log_level,
        "TELNETCONSOLE_ENABLED": False,
        "ROBOTSTXT_OBEY": False,
        "AUTOTHROTTLE_ENABLED": False,
        "COOKIES_ENABLED": False,
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": args.concurrency,
        "DOWNLOAD_DELAY": 0,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }
    sbf = {
        "SBF_DSN": args.dsn,
        "SBF_FILTER": args.filter,
        "SBF_FRONTIER": args.frontier,
        "SBF_STRIP_PARAMS": args.strip_params,
        "SBF_QUERY": args.query,
        "SBF_DELAY": args.delay,
    }
    if args.mode == "frontier":
        import sbf_scrapy

        settings.update(sbf_scrapy.SETTINGS)
        settings.update(sbf)
    elif args.mode == "dupefilter":
        settings["DUPEFILTER_CLASS"] = "sbf_scrapy.SbfDupeFilter"
        settings.update(sbf)
    elif args.mode == "scrapy-canonical":
        settings["REQUEST_FINGERPRINTER_CLASS"] = CanonicalFingerprinter
    if args.fingerprinter == "language":
        settings["REQUEST_FINGERPRINTER_CLASS"] = LanguageFingerprinter
    for setting in args.set:
        name, _, text = setting.partition("=")
        settings[name] = value(text)
    return settings


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", required=True, help="the first URL")
    parser.add_argument("--mode", required=True,
                        choices=["frontier", "dupefilter", "scrapy", "scrapy-canonical"])
    parser.add_argument("--dsn", default="", help="libpq connection string (SBF_DSN)")
    parser.add_argument("--filter", default="sbf_scrapy_seen", help="SBF_FILTER")
    parser.add_argument("--frontier", default="sbf_frontier", help="SBF_FRONTIER")
    parser.add_argument("--strip-params", default="", help="SBF_STRIP_PARAMS, comma separated")
    parser.add_argument("--query", default="keep", choices=["keep", "sort", "drop"],
                        help="SBF_QUERY")
    parser.add_argument("--start-dont-filter", action="store_true",
                        help="the start request is dont_filter (fetched by each process)")
    parser.add_argument("--delay", type=float, default=0.0, help="SBF_DELAY")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument("--stats", help="file to write Scrapy's stats to, as JSON")
    parser.add_argument("--process-stats", help="file to write this process's own stats to,"
                        " as JSON, when STATS_CLASS is sbf_scrapy.SharedStatsCollector")
    parser.add_argument("--fingerprinter", choices=["default", "language"], default="default",
                        help="REQUEST_FINGERPRINTER_CLASS: Scrapy's, or one that adds"
                        " Accept-Language")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="any other setting (VALUE read as JSON if it is)")
    args = parser.parse_args(argv)
    STRIP_PARAMS.extend(p for p in args.strip_params.split(",") if p)
    args.strip_params = STRIP_PARAMS

    process = CrawlerProcess(settings_for(args))
    crawler = process.create_crawler(LinkSpider)
    process.crawl(crawler, start=args.start, start_dont_filter=args.start_dont_filter)
    process.start()
    stats = crawler.stats.get_stats()
    if args.stats:
        with open(args.stats, "w") as f:
            json.dump(stats, f, default=str, indent=1, sort_keys=True)
    if args.process_stats:
        with open(args.process_stats, "w") as f:
            json.dump(crawler.stats.process_stats(), f, default=str, indent=1, sort_keys=True)
    # finished, or stopped by a signal (a crawler that waits for work)
    return 0 if stats.get("finish_reason") in ("finished", "shutdown") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
