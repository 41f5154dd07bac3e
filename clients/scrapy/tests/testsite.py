# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""A local web site to crawl: the PostgreSQL 15 manual's pages, with links.

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
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="build the site and serve it")
    s.add_argument("--pages", required=True, help="the pages file (data/pgdoc15-pages.tsv.gz)")
    s.add_argument("--dir", required=True, type=Path, help="where to build the site")
    s.add_argument("--log", required=True, help="file to append each GET's path to")
    s.add_argument("--port-file", required=True, help="file to write the port to")
    s.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    s.add_argument("--latency", type=float, default=0.0, help="seconds to wait before each answer")
    args = parser.parse_args(argv)
    serve(args)


if __name__ == "__main__":
    main(sys.argv[1:])
