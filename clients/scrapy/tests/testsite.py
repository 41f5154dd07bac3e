# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""A local web site to crawl: the PostgreSQL 15 manual's pages, with links,
or a generated site of any size.

    python3 testsite.py serve --pages data/pgdoc15-pages.tsv.gz --dir DIR \\
        --log FETCHES --port-file PORT [--latency SECONDS]

builds the site in DIR from the pages file (one line a page:
"name.html<TAB>visible text", no links), serves it on 127.0.0.1 at a free
port, writes that port to PORT once it serves, and appends the path of
every GET to FETCHES, one a line, so that a test can count each page's
fetches.

Each page links to the previous and the next page in file order and to
index.html, at its top and again at its bottom (as the manual does), and to
up to 30 pages whose title occurs in its text.  The links are written in
forms that only canonicalisation makes one: "x.html", "./x.html",
"x.html#s2", "/x.html", "HTTP://127.0.0.1:PORT/x.html" and
"x.html?utm_source=nav".  Every page is reachable from index.html (the
next links alone chain them all).  index.html also has one broken link, to
not-found.html, which is answered 404.

    python3 testsite.py serve --generate N [--seed S] --log FETCHES \\
        --port-file PORT [--latency SECONDS]

serves a generated site of N pages instead (bench/scrapy_crawl.sh), the
same for the same N and seed, made in memory at start.  Page 0 is
/index.html; page i is /s<i % 40>/p<i>.html, or, for every 25th page,
/list?cat=<i % 40>&page=<i>.  Each page links to the previous and the next
page (at its top and again at its bottom: every page is reachable from
/index.html) and to /index.html, and to other pages up to 30 to 40 links
in all: near ones (within 60), popular ones (the first 100 pages, the first
ones most) and any.  One page in 500 is a site map of 500 to 700 links to
consecutive pages.  The links are written in forms that only
canonicalisation (utm_* removed, the query sorted) makes one: relative
("p7.html", "../s7/p7.html"), absolute path, "http://127.0.0.1:PORT/...",
"HTTP://127.0.0.1:PORT/...", dot segments ("/s1/../s7/p7.html"), a
fragment, "?utm_source=nav&utm_medium=web", the list pages' two parameters
in either order.  About 1 link in 100 is /old/<i>.html, answered
"301 Moved Permanently" to page i, and about 1 in 300 goes to one of 20
pages /gone/<k>.html, answered 404.  Each line of FETCHES is then
"path<TAB>status<TAB>page" (page: the page's number, or - for a redirect
or a 404).
"""

from __future__ import annotations

import argparse
import gzip
import html
import os
import re
import sys
import threading
import time
import random
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

START = "index.html"
MISSING = "not-found.html"
MAX_TITLE_LINKS = 30
# "F.1. adminpack", "Chapter 56. PostgreSQL Coding Conventions",
# "Part III. Server Administration": the title without its number
NUMBER = re.compile(r"^(?:(?:Appendix|Chapter|Part) [A-Z0-9IVXL]+\.|[A-Z0-9]+(?:\.[0-9]+)*\.) ")


def read_pages(path: str) -> list[tuple[str, str]]:
    """[(file name, text)] in file order."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]


def title_of(text: str) -> str:
    """The title: the text before the manual's navigation bar ("Prev",
    or "Next" on the first page)."""
    return re.split(r" (?:Prev|Next) ", text, maxsplit=1)[0].strip()


def link_forms(port: int) -> list:
    return [
        lambda name, k: name,
        lambda name, k: f"./{name}",
        lambda name, k: f"{name}#s{k % 5}",
        lambda name, k: f"/{name}",
        lambda name, k: f"HTTP://127.0.0.1:{port}/{name}",
        lambda name, k: f"{name}?utm_source=nav",
    ]


def title_links(pages: list[tuple[str, str]]) -> list[list[int]]:
    """For each page, the pages (up to 30, in order of first mention) whose
    title without its number occurs in its text as whole words.  Titles
    shorter than 4 characters, and titles of several pages ("Examples"),
    are left out."""
    pages_of: dict[tuple[str, ...], list[int]] = {}
    for i, (_, text) in enumerate(pages):
        words = tuple(NUMBER.sub("", title_of(text)).split())
        if words and len(" ".join(words)) >= 4:
            pages_of.setdefault(words, []).append(i)
    by_first_word: dict[str, list[tuple[tuple[str, ...], int]]] = {}
    for words, where in pages_of.items():
        if len(where) == 1:
            by_first_word.setdefault(words[0], []).append((words, where[0]))
    links = []
    for i, (_, text) in enumerate(pages):
        body = text.split(" Next ", 1)[1] if " Next " in text else text
        words = body.split()
        found: list[int] = []
        for at, word in enumerate(words):
            for title, j in by_first_word.get(word, ()):
                if j != i and j not in found and tuple(words[at:at + len(title)]) == title:
                    found.append(j)
            if len(found) >= MAX_TITLE_LINKS:
                break
        links.append(found[:MAX_TITLE_LINKS])
    return links


def build(pages: list[tuple[str, str]], directory: Path, port: int) -> None:
    forms = link_forms(port)
    names = [name for name, _ in pages]
    start = names.index(START) if START in names else 0
    mentions = title_links(pages)
    count = len(pages)

    def link(i: int, j: int, label: str) -> str:
        # the form depends on the pair: each page is reached in several forms
        href = forms[(7 * i + j) % len(forms)](names[j], i + j)
        return f'<a href="{html.escape(href)}">{html.escape(label)}</a>'

    def nav(i: int, shift: int) -> str:
        parts = [link(i + shift, (i - 1) % count, "Prev"),
                 link(i + shift, start, "Home"),
                 link(i + shift, (i + 1) % count, "Next")]
        return f'<p class="nav">{" | ".join(parts)}</p>'

    directory.mkdir(parents=True, exist_ok=True)
    for i, (name, text) in enumerate(pages):
        title = title_of(text)
        see_also = "".join(f"<li>{link(i, j, title_of(pages[j][1]))}</li>" for j in mentions[i])
        if i == start:
            see_also += f'<li><a href="{MISSING}">a page that is gone</a></li>'
        page = (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title></head><body>\n"
            f"{nav(i, 0)}\n<h1>{html.escape(title)}</h1>\n<p>{html.escape(text)}</p>\n"
            f'<ul class="see-also">{see_also}</ul>\n{nav(i, 3)}\n</body></html>\n'
        )
        (directory / name).write_text(page, encoding="utf-8")


# The generated site (serve --generate N)
SECTIONS = 40
LIST_EVERY = 25
HUB_EVERY = 500
POPULAR = 100
GONE = 20
WORDS = ("crawl frontier filter page link queue table index server client batch "
         "commit claim host robots sitemap archive record fetch parse canonical "
         "query fragment redirect status shard replica vacuum tuple").split()


def generated_path(i: int) -> str:
    """Page i's canonical path (and query)."""
    if i == 0:
        return "/index.html"
    if i % LIST_EVERY == 0:
        return f"/list?cat={i % SECTIONS}&page={i}"
    return f"/s{i % SECTIONS}/p{i}.html"


def path_key(target: str) -> str:
    """What the server looks a request up by: the path, dot segments
    resolved, and the query without utm_* parameters, sorted."""
    parts = urlsplit(target)
    segments: list[str] = []
    for segment in parts.path.split("/")[1:]:
        if segment == "..":
            if segments:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    query = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                   if not k.startswith("utm_"))
    path = "/" + "/".join(segments)
    return f"{path}?{urlencode(query)}" if query else path


def generated_href(rng: random.Random, source: int, target: int, port: int) -> str:
    """A link from page source to page target, in one of the forms."""
    path = generated_path(target)
    here = f"/s{source % SECTIONS}/" if source and source % LIST_EVERY else "/"
    r = rng.random()
    if r < 0.01:
        return f"/old/{target}.html"
    if target % LIST_EVERY == 0 and target and r < 0.5:
        return f"/list?page={target}&cat={target % SECTIONS}"
    if r < 0.30:
        return path
    if r < 0.45:
        if path.startswith(here) and here != "/":
            return path[len(here):]
        return ".." + path if here != "/" else "." + path
    if r < 0.55:
        return f"http://127.0.0.1:{port}{path}"
    if r < 0.60:
        return f"HTTP://127.0.0.1:{port}{path}"
    if r < 0.67:
        return f"/s{(target + 1) % SECTIONS}/.." + path
    if r < 0.85:
        return f"{path}#part{rng.randint(1, 4)}"
    sep = "&" if "?" in path else "?"
    return f"{path}{sep}utm_source=nav&utm_medium=web"


def generated_targets(rng: random.Random, i: int, count: int) -> list[int]:
    """The pages page i links to besides its navigation (repeats allowed)."""
    if i % HUB_EVERY == HUB_EVERY // 2:
        first = rng.randrange(count)
        return [(first + k) % count for k in range(rng.randint(500, 700))]
    targets = []
    for _ in range(rng.randint(24, 34)):
        r = rng.random()
        if r < 0.15:
            # 1 / (rank + 1): the first pages are linked most
            targets.append(min(int(POPULAR ** rng.random()) - 1, count - 1))
        elif r < 0.60:
            targets.append((i + rng.randint(-60, 60)) % count)
        else:
            targets.append(rng.randrange(count))
    return targets


def generated_page(i: int, count: int, seed: int, port: int) -> bytes:
    rng = random.Random(f"{seed}:{i}")

    def link(target: int, label: str) -> str:
        return f'<a href="{html.escape(generated_href(rng, i, target, port))}">{html.escape(label)}</a>'

    def nav() -> str:
        return (f'<p class="nav">{link((i - 1) % count, "Prev")} | {link(0, "Home")}'
                f' | {link((i + 1) % count, "Next")}</p>')

    title = f"Page {i}: " + " ".join(rng.choice(WORDS) for _ in range(3))
    text = " ".join(rng.choice(WORDS) for _ in range(60))
    items = []
    for target in generated_targets(rng, i, count):
        if rng.random() < 0.003:
            href = f"/gone/{rng.randrange(GONE)}.html"
            items.append(f'<li><a href="{href}">gone</a></li>')
        items.append(f"<li>{link(target, f'page {target}')}</li>")
    page = (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head><body>\n"
        f"{nav()}\n<h1>{html.escape(title)}</h1>\n<p>{text}</p>\n"
        f'<ul class="links">{"".join(items)}</ul>\n{nav()}\n</body></html>\n'
    )
    return page.encode()


def generate(count: int, seed: int, port: int) -> dict[str, tuple[int, bytes]]:
    """{path key: (page number, HTML)} of the whole site."""
    if count < 2:
        raise SystemExit("--generate: at least 2 pages")
    return {generated_path(i): (i, generated_page(i, count, seed, port)) for i in range(count)}


class GeneratedHandler(SimpleHTTPRequestHandler):
    """Serves the generated site; logs "path<TAB>status<TAB>page"."""

    protocol_version = "HTTP/1.1"
    fetch_log = None
    lock = threading.Lock()
    latency = 0.0
    site: dict[str, tuple[int, bytes]] = {}
    port = 0

    def do_GET(self):
        key = path_key(self.path)
        page = self.site.get(key)
        old = re.fullmatch(r"/old/([0-9]+)\.html", key)
        if page is not None:
            status, body, number = 200, page[1], str(page[0])
        elif old and (target := int(old.group(1))) < len(self.site):
            status, body, number = 301, b"", "-"
        else:
            status, body, number = 404, b"<html><body>not found</body></html>\n", "-"
        with self.lock:
            self.fetch_log.write(f"{self.path}\t{status}\t{number}\n")
            self.fetch_log.flush()
        if self.latency:
            time.sleep(self.latency)
        self.send_response(status)
        if status == 301:
            self.send_header("Location", f"http://127.0.0.1:{self.port}{generated_path(target)}")
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


class Handler(SimpleHTTPRequestHandler):
    """Serves the directory; logs each GET's path, and nothing else."""

    protocol_version = "HTTP/1.1"
    fetch_log = None
    lock = threading.Lock()
    latency = 0.0

    def do_GET(self):
        with self.lock:
            self.fetch_log.write(self.path + "\n")
            self.fetch_log.flush()
        if self.latency:
            time.sleep(self.latency)
        super().do_GET()

    def log_message(self, format, *args):
        pass


def serve(args: argparse.Namespace) -> None:
    if args.generate is not None:
        serve_generated(args)
        return
    if args.pages is None or args.dir is None:
        raise SystemExit("serve: --pages and --dir, or --generate")
    Handler.fetch_log = open(args.log, "a", encoding="utf-8")
    Handler.latency = args.latency
    server = ThreadingHTTPServer(("127.0.0.1", args.port),
                                 partial(Handler, directory=str(args.dir)))
    server.daemon_threads = True
    port = server.server_address[1]
    build(read_pages(args.pages), Path(args.dir), port)
    # written last, and renamed into place: the port file means "serving"
    tmp = f"{args.port_file}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, args.port_file)
    server.serve_forever()


def serve_generated(args: argparse.Namespace) -> None:
    handler = GeneratedHandler
    handler.fetch_log = open(args.log, "a", encoding="utf-8")
    handler.latency = args.latency
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    server.daemon_threads = True
    handler.port = server.server_address[1]
    handler.site = generate(args.generate, args.seed, handler.port)
    tmp = f"{args.port_file}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{handler.port}\n")
    os.replace(tmp, args.port_file)
    server.serve_forever()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="build the site and serve it")
    s.add_argument("--pages", help="the pages file (data/pgdoc15-pages.tsv.gz)")
    s.add_argument("--dir", type=Path, help="where to build the site")
    s.add_argument("--generate", type=int, metavar="N",
                   help="serve a generated site of N pages instead (no --pages, no --dir)")
    s.add_argument("--seed", type=int, default=44, help="the generated site's seed")
    s.add_argument("--log", required=True, help="file to append each GET's path to")
    s.add_argument("--port-file", required=True, help="file to write the port to")
    s.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    s.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    args = parser.parse_args(argv)
    serve(args)


if __name__ == "__main__":
    main(sys.argv[1:])
