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
        message = e.diag.message_primary.replace("\n", "\\n")
        print(f"{name}: {type(e).__name__}: {message}")
        cur.connection.rollback()


def adds(cur):
    """How many values py_seen holds (its count of adds)."""
    cur.execute("SELECT (shared_info('py_seen') ->> 'adds')::bigint")
    return cur.fetchone()[0]


def case_adds_nothing(cur, name, sql, params):
    """The case, then whether the filter's count of adds stayed."""
    before = adds(cur)
    case(cur, name, sql, params)
    print(f"{name} adds: {adds(cur) - before}")


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
    # (1.2) what passed silently in 1.1.  A tuple is sent as a record
    # literal, "(u1,u2)", and reaches the one-value function as a list does
    case_adds_nothing(cur, "tuple untyped",
                      "SELECT shared_test_and_add('py_seen', %s)",
                      (("https://example.com/5", "https://example.com/6"),))
    case(cur, "contains tuple untyped",
         "SELECT shared_contains('py_seen', %s)",
         (("https://example.com/5",),))
    # an array literal with whitespace around it is one too, as array_in
    # reads it
    case_adds_nothing(cur, "list with leading space",
                      "SELECT shared_test_and_add('py_seen', %s)",
                      (" {https://example.com/5,https://example.com/6}",))
    case_adds_nothing(cur, "list with trailing newline",
                      "SELECT shared_test_and_add('py_seen', %s)",
                      ("{https://example.com/5,https://example.com/6}\n",))
    # bytes are bytea: a ::text cast makes their hex digits, not their bytes
    case_adds_nothing(cur, "bytes as text",
                      "SELECT shared_test_and_add('py_seen', %s::text)",
                      (b"https://example.com/7",))
    case_adds_nothing(cur, "list of bytes as text[]",
                      "SELECT shared_test_and_add('py_seen', %s::text[])",
                      ([b"https://example.com/8", b"https://example.com/9"],))
    # None: NULL in, NULL out, and nothing added (never False)
    case_adds_nothing(cur, "None",
                      "SELECT shared_test_and_add('py_seen', %s)",
                      (None,))
    case_adds_nothing(cur, "None in a list",
                      "SELECT shared_test_and_add('py_seen', %s::text[])",
                      (["https://example.com/10", None],))
    case(cur, "None contains",
         "SELECT shared_contains('py_seen', %s)",
         (None,))
