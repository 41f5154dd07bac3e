"""What a Python crawler sends through psycopg 3, and what sbf makes of it.

Run by t/091_drivers.pl with the node's connection string as argument.
psycopg 3 sends a Python str (and a list of str) as an untyped parameter,
so the server picks the overload: each case prints one line,
"name: what came back", which the TAP test compares with what it expects.
"""
import sys

import psycopg
from psycopg import errors


def case(cur, name, sql, params):
    try:
        cur.execute(sql, params)
        print(f"{name}: {cur.fetchone()[0]!r}")
    except psycopg.Error as e:
        print(f"{name}: {type(e).__name__}: {e.diag.message_primary}")
        cur.connection.rollback()


with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    cur = conn.cursor()
    cur.execute("SELECT shared_bloom_create('py_seen', 10000, 0.001)")
    # a list of str, untyped: reaches the one-value function, which refuses
    # it instead of adding '{u1,u2}' as one URL
    case(cur, "list untyped",
         "SELECT shared_test_and_add('py_seen', %s)",
         (["https://example.com/1", "https://example.com/2"],))
    case(cur, "list as text[]",
         "SELECT shared_test_and_add('py_seen', %s::text[])",
         (["https://example.com/1", "https://example.com/2", "https://example.com/1"],))
    case(cur, "contains list untyped",
         "SELECT shared_contains('py_seen', %s)",
         (["https://example.com/1"],))
    case(cur, "str untyped",
         "SELECT shared_test_and_add('py_seen', %s)",
         ("https://example.com/2",))
    # bytes are typed (bytea), and a list of bytes a bytea[]: Scrapy's
    # request fingerprints
    case(cur, "bytes",
         "SELECT shared_test_and_add('py_seen', %s)",
         (b"\x01\x02fingerprint",))
    case(cur, "list of bytes",
         "SELECT shared_test_and_add('py_seen', %s)",
         ([b"\x01\x02fingerprint", b"\x03other"],))
    # ints are typed: a list of them reaches the bigint[] batch
    case(cur, "list of int",
         "SELECT shared_test_and_add('py_seen', %s)",
         ([42, 43, 42],))
    # the functions named like what users type hash what they pass
    case(cur, "simhash untyped",
         "SELECT simhash(%s) = simhash('the quick brown fox'::text)",
         ("the quick brown fox",))
    case(cur, "url_canonical untyped",
         "SELECT url_canonical(%s)",
         ("HTTP://Example.com:80/a/../b#top",))
    case(cur, "url_canonical batch",
         "SELECT shared_test_and_add('py_seen', "
         "ARRAY(SELECT url_canonical(u, strict => false) FROM unnest(%s::text[]) u))",
         (["https://example.com/1#x", "HTTPS://example.com:443/3", "not a url"],))
