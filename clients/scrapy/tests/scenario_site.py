# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)
"""A small local web site of the cases a crawler gets wrong, generated:

    python3 scenario_site.py --log REQUESTS --port-file PORT [--wide N]
        [--redirects N] [--forms N] [--unlinked N] [--spellings]
        [--hold PATH]... [--hold-dir DIR]

serves on 127.0.0.1 at a free port, writes that port to PORT once it
serves, and appends every request to REQUESTS, one a line:
"METHOD PATH BODY ACCEPT-LANGUAGE" ("-" for an empty field).

The pages, all reachable from /index.html:

  /wide.html        links to N pages /w0.html ... (--wide, default 600),
                    each written twice (once with ?utm_source=wide)
  /r0.html ...      --redirects pages, each answered "301 Moved
                    Permanently" to /t0.html ...
  /forms.html       --forms POST forms to /search, with fields page=1 ...
                    (a POST /search answers with a link to /result-PAGE.html),
                    and two links to /lang.html with hreflang="en" and "fr"
                    (which the test's spider requests with that
                    Accept-Language)
  /index.html       links to all of the above, and to /missing.html (404)
  /u0.html ...      --unlinked pages no page links to (for URLs pushed into
                    a crawl)
  /100%zz.html      with --spellings, linked from /index.html: a stray %,
                    which browsers send as written

Every other page links back to /index.html.  A GET of a path given with
--hold is logged with the method "HOLD" and not answered until the file
HOLD-DIR/release exists (a test kills the crawler meanwhile).
"""

from __future__ import annotations

import argparse
import html
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


class Site:
    def __init__(self, args: argparse.Namespace):
        self.wide = args.wide
        self.redirects = args.redirects
        self.forms = args.forms
        self.unlinked = args.unlinked
        self.spellings = args.spellings
        self.hold = set(args.hold)
        self.hold_dir = args.hold_dir
        self.log = open(args.log, "a", encoding="utf-8")
        self.lock = threading.Lock()

    def record(self, method: str, path: str, body: bytes, language: str | None) -> None:
        line = " ".join([method, path, body.decode("latin-1") or "-", language or "-"])
        with self.lock:
            self.log.write(line + "\n")
            self.log.flush()

    def page(self, path: str) -> tuple[int, str | None, str]:
        """(status, Location, body) of a GET."""
        if path == "/index.html":
            links = ["wide.html", "forms.html", "missing.html"]
            links += [f"r{i}.html" for i in range(self.redirects)]
            if self.spellings:
                links += ["100%zz.html"]
            return 200, None, document("index", links)
        if path == "/wide.html":
            links = []
            for i in range(self.wide):
                links += [f"w{i}.html", f"w{i}.html?utm_source=wide"]
            return 200, None, document("wide", links)
        if path == "/forms.html":
            forms = "".join(
                f'<form method="post" action="search"><input type="hidden" name="page"'
                f' value="{i}"></form>\n' for i in range(1, self.forms + 1))
            body = (forms + '<a href="lang.html" hreflang="en">en</a>\n'
                    '<a href="lang.html" hreflang="fr">fr</a>\n')
            return 200, None, document("forms", ["index.html"], body)
        match = re.fullmatch(r"/r(\d+)\.html", path)
        if match and int(match.group(1)) < self.redirects:
            return 301, f"/t{match.group(1)}.html", ""
        if (re.fullmatch(r"/w(\d+)\.html", path) and int(path[2:-5]) < self.wide) \
                or (re.fullmatch(r"/t(\d+)\.html", path) and int(path[2:-5]) < self.redirects) \
                or (re.fullmatch(r"/u(\d+)\.html", path) and int(path[2:-5]) < self.unlinked) \
                or re.fullmatch(r"/result-\d+\.html", path) or path == "/lang.html" \
                or (self.spellings and path == "/100%zz.html"):
            return 200, None, document(path, ["index.html"])
        return 404, None, document("not found", [])

    def held(self, path: str) -> None:
        if path in self.hold:
            release = os.path.join(self.hold_dir, "release")
            while not os.path.exists(release):
                time.sleep(0.02)


def document(title: str, links: list[str], extra: str = "") -> str:
    anchors = "\n".join(f'<a href="{html.escape(h)}">{html.escape(h)}</a>' for h in links)
    return (f'<!DOCTYPE html>\n<html><head><title>{html.escape(title)}</title></head>'
            f"<body>\n{anchors}\n{extra}</body></html>\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    site: Site

    def answer(self, status: int, location: str | None, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        language = self.headers.get("Accept-Language")
        if path in self.site.hold:
            self.site.record("HOLD", self.path, b"", language)
            self.site.held(path)
        self.site.record("GET", self.path, b"", language)
        self.answer(*self.site.page(path))

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.site.record("POST", self.path, body, self.headers.get("Accept-Language"))
        if self.path.split("?", 1)[0] != "/search":
            self.answer(404, None, document("not found", []))
            return
        page = parse_qs(body.decode()).get("page", ["0"])[0]
        self.answer(200, None, document(f"results {page}", [f"result-{int(page)}.html"]))

    def log_message(self, format, *args):
        pass


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", required=True, help="file to append each request to")
    parser.add_argument("--port-file", required=True, help="file to write the port to")
    parser.add_argument("--wide", type=int, default=600, help="links of /wide.html")
    parser.add_argument("--redirects", type=int, default=20, help="pages that redirect")
    parser.add_argument("--forms", type=int, default=3, help="POST forms of /forms.html")
    parser.add_argument("--unlinked", type=int, default=0, help="pages nothing links to")
    parser.add_argument("--spellings", action="store_true",
                        help="a link with a stray %%")
    parser.add_argument("--hold", action="append", default=[], help="a path not answered"
                        " until HOLD-DIR/release exists (repeatable)")
    parser.add_argument("--hold-dir", default=".", help="where the release file appears")
    args = parser.parse_args(argv)
    Handler.site = Site(args)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    tmp = f"{args.port_file}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.replace(tmp, args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
