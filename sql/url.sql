--
-- url_canonical and url_host: one spelling per URL, so that every client of
-- a shared filter or a sieve asks about the same key
--

CREATE FUNCTION pg_temp.error_of(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE query;
	RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || coalesce(E'\n       ' || nullif(detail, ''), '');
END $$;

-- What a crawler meets: one page behind many spellings.  Every one of these
-- is http://example.com/docs/page.html
SELECT u AS met, url_canonical(u) AS canonical
FROM (VALUES
	('http://example.com/docs/page.html'),
	('http://example.com/docs/page.html#section-2'),	-- fragment: never sent
	('HTTP://EXAMPLE.COM/docs/page.html'),				-- scheme and host: any case
	('http://example.com:80/docs/page.html'),			-- the default port
	('http://example.com:0080/docs/page.html'),
	('http://example.com/docs/./old/../page.html'),		-- dot segments
	('http://example.com/%64ocs/page%2Ehtml'),			-- escapes of unreserved bytes
	('  http://example.com/docs/page.html  ')			-- spaces around an href
) v(u);

-- RFC 3986 section 6.2.2: escapes in upper case, unreserved ones decoded;
-- the path keeps its case and its reserved escapes (%2F is not "/")
SELECT url_canonical('http://example.com/%7euser/a%2fb%3f?q=%7e%3d') AS escapes,
	   url_canonical('http://example.com/Docs/Page.HTML') AS path_case;

-- Section 6.2.3: no path is "/", default ports go (http 80, https 443,
-- ws 80, wss 443, ftp 21), others stay without leading zeros
SELECT url_canonical('https://example.com') AS no_path,
	   url_canonical('https://example.com:443/') AS default_port,
	   url_canonical('https://example.com:80/') AS other_port,
	   url_canonical('ftp://example.com:21/pub/') AS ftp,
	   url_canonical('wss://example.com:00443/live') AS wss,
	   url_canonical('http://example.com:/x') AS empty_port;

-- Hosts: internationalised names in their ASCII form (UTS #46, as browsers),
-- escapes in a host decoded, IPv6 in its RFC 5952 form
SELECT url_canonical('http://Bücher.example/straße') AS idn,
	   url_canonical('http://%62%C3%BCcher.example/') AS escaped_idn,
	   url_canonical('http://xn--bcher-kva.example/') AS already_ascii,
	   url_canonical('http://EXAMPLE%2Ecom/') AS escaped_dot,
	   url_canonical('http://[2001:DB8:0:0:0:0:0:1]:8080/') AS ipv6,
	   url_canonical('http://192.168.0.1:80/') AS ipv4;

-- What browsers send for bytes a URL may not hold: percent-encoded
SELECT url_canonical('http://example.com/a b|c?list[]=1&x={2}#one#two') AS browser,
	   url_canonical(E'http://example.com/a\n/b\t') AS newlines_removed;

-- (1.2) A "%" not followed by two hex digits stays as it is, as browsers
-- send it (WHATWG's URL standard; 1.1 wrote it "%25"), in the path, the
-- query and the user information, and in the host of a scheme that is not
-- http-like; a host name of http and the like cannot hold one
SELECT u AS met, url_canonical(u, strict => false) AS canonical
FROM (VALUES ('http://example.com/100%zz.html'),
			 ('http://example.com/50%'),					-- at the end
			 ('http://example.com/%4g/%A'),				-- one hex digit only
			 ('http://example.com/%zz/%7e/%2f'),			-- and real escapes beside it
			 ('http://example.com/a%25b'),				-- an escaped "%" stays "%25"
			 ('http://example.com/s?q=100%&r=%zz!'),		-- in the query
			 ('http://us%zz!:pw@example.com/'),			-- in the user information
			 ('foo://host%zz/x'),						-- in a host that is not a DNS name
			 ('http://example.com/%zz/../a#frag%zz'),		-- dot segments, fragment
			 ('http://exa%zz.com/')) v(u);					-- NULL: not a host name
-- tabs and newlines go first, as for a browser: "%\n41" is "%41", "A"
SELECT url_canonical(E'http://example.com/%\n41') AS newline_first;
-- where the bytes after a stray "%" were escapes of hex digits (unreserved,
-- so decoded), the first is written as an escape again, so that the "%" and
-- them do not read as an escape once canonicalised again
SELECT url_canonical('http://example.com/%%34%31') AS decoded_digits,
	   url_canonical('http://example.com/%4%31') AS one_decoded,
	   url_canonical('http://example.com/%%41') AS one_digit_left;
-- an invalid URL with a stray "%" is shown as it was written
SELECT pg_temp.error_of($$ SELECT url_canonical('http://[::1%zz]/') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://exa%zz.com/') $$);

-- (1.2) An empty query ("?" alone) stays, as browsers send it (1.1 dropped
-- it), but with query => 'drop'; 'sort' keeps a query of empty parameters
-- as "?" alone.  A query that strip_params emptied goes with its "?": the
-- URL without those parameters has no query.
SELECT u AS met, url_canonical(u) AS kept,
	   url_canonical(u, query => 'sort') AS sorted,
	   url_canonical(u, query => 'drop') AS dropped,
	   url_canonical(u, strip_params => '{utm_*}') AS stripped,
	   url_canonical(u, query => 'sort', strip_params => '{utm_*}') AS sorted_stripped
FROM (VALUES ('http://example.com/p'), ('http://example.com/p?'), ('http://example.com/p?#top'),
			 ('http://example.com/p?&&'), ('http://example.com/p?utm_id=1'),
			 ('http://example.com/p?&utm_id=1&'), ('http://example.com/p?b=1&utm_id=2')) v(u);

-- User information stays (its case too); other schemes keep their form
SELECT url_canonical('http://User:Secret@Example.com/') AS userinfo,
	   url_canonical('mailto:Someone@Example.com') AS mailto,
	   url_canonical('file:///etc/hosts') AS file,
	   url_canonical('urn:ISBN:0-395-36341-1') AS urn;

-- The query: kept as it is (the default), sorted by parameter name (stable:
-- a repeated name keeps its values' order; empty parameters go), or dropped
SELECT url_canonical('http://example.com/s?b=2&a=1&a=0&&c') AS kept,
	   url_canonical('http://example.com/s?b=2&a=1&a=0&&c', query => 'sort') AS sorted,
	   url_canonical('http://example.com/s?b=2&a=1', query => 'drop') AS dropped;

-- Tracking parameters stripped by name; a trailing * strips a prefix
SELECT url_canonical('http://example.com/p?id=7&utm_source=feed&utm_medium=rss&fbclid=x1',
					 strip_params => '{utm_*,fbclid}') AS stripped,
	   url_canonical('http://example.com/p?utm_source=feed', strip_params => '{utm_*}') AS nothing_left,
	   url_canonical('http://example.com/p?z=1&utm_id=2&a=3', query => 'sort',
					 strip_params => '{utm_*}') AS sorted_and_stripped,
	   url_canonical('http://example.com/p?utm=1', strip_params => '{utm_*}') AS not_a_prefix_match;

-- Names are compared with the canonical query's parameters, where a
-- non-ASCII character is percent-encoded in UTF-8: a name's is too
SELECT url_canonical('http://example.com/p?straße=1&x=2', strip_params => '{straße}') AS name,
	   url_canonical('http://example.com/p?straße=1&x=2', strip_params => '{stra%C3%9Fe}') AS encoded_name,
	   url_canonical('http://example.com/p?straßen_id=1&x=2', strip_params => '{straß*}') AS prefix;

-- A parameter name of a canonical query is at most 3 MB (a 1 MB URL, each
-- byte percent-encoded): a name of strip_params that long still strips its
-- parameter (here 524,280 'ß', 3,145,680 bytes as the query writes them, in
-- a URL of 1 MB); a longer one could never match and is skipped unread
SELECT url_canonical(u, strip_params => ARRAY[repeat('ß', 524280)]) AS longest_name,
	   url_canonical(u, strip_params => ARRAY[repeat('ß', 524279) || '*']) AS longest_prefix,
	   right(url_canonical(u, strip_params => ARRAY[repeat('ß', 524281), 'b']), 8) AS longer_name
FROM (SELECT 'http://x/?' || repeat('ß', 524280) || '=1&b=2' AS u) s
WHERE octet_length(u) = 1024 * 1024;

-- Each call site builds its strip list once for a strip_params that stays
-- the same, and again when it changes
SELECT u, names, url_canonical(u, strip_params => names)
FROM (VALUES ('http://x/?a=1&b=2', '{a}'::text[]), ('http://x/?a=1&b=2', '{a}'),
			 ('http://x/?a=1&b=2', '{b}'), ('http://x/?a=1&b=2', '{}'),
			 ('http://x/?a=1&b=2', '{a}')) v(u, names);

-- url_host: the host of the canonical URL, for per-host work; NULL when
-- the URL has none
SELECT url_host('HTTP://WWW.Bücher.Example:8080/x') AS idn,
	   url_host('https://[::1]/') AS ipv6,
	   url_host('https://user@example.com:8443/') AS no_user_no_port,
	   url_host('mailto:someone@example.com') AS none;
SELECT url_host(u) AS host, count(*) AS urls
FROM (VALUES ('http://a.example/1'), ('HTTP://A.EXAMPLE/2'), ('http://b.example/'),
			 ('https://a.example:443/3')) v(u)
GROUP BY 1 ORDER BY 1;

-- Invalid URLs: an ERROR that says why, or NULL with strict => false (for
-- a batch, where one bad href must not stop the others)
SELECT pg_temp.error_of($$ SELECT url_canonical('/docs/page.html') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('page.html') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http:///page.html') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http:page.html') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://example.com:65536/') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://exa mple.com/') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://a%00b.example/') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://[::1/') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://example.com:8o/') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical(U&'http://a\0378b.example/') $$);
SELECT pg_temp.error_of($$ SELECT url_host('//example.com/') $$);
SELECT url_canonical(u, strict => false) AS canonical
FROM (VALUES ('http://example.com/a'), ('/relative'), (''), ('http://example.com:99999/'),
			 ('http://Example.com/b#x')) v(u);
SELECT url_host('not a url', strict => false) IS NULL AS null_host;

-- Options are checked
SELECT pg_temp.error_of($$ SELECT url_canonical('http://example.com/', query => 'shuffle') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://example.com/', strip_params => '{utm_*,NULL}') $$);
SELECT pg_temp.error_of($$ SELECT url_canonical('http://example.com/', strip_params => '{{a},{b}}') $$);

-- NULL in, NULL out
SELECT url_canonical(NULL) IS NULL AS null_url, url_host(NULL) IS NULL AS null_host,
	   url_canonical('http://example.com/', NULL) IS NULL AS null_option;

-- Canonical again is the same: the form is a fixed point
SELECT count(*) AS urls,
	   count(*) FILTER (WHERE url_canonical(c) = c) AS fixed_points
FROM (SELECT url_canonical(u, query => q) AS c
	  FROM (VALUES ('HTTP://Bücher.Example:80/a/../b/%7e?z=1&a=2#f'),
				   ('http://[::FFFF:1.2.3.4]/'), ('https://example.com/a%2fb'),
				   ('http://example.com/a b?x=[1]'), ('http://example.com/%%34%31!/%4%31?'),
				   ('http://example.com/?&&'), ('http://example.com/%%41?%zz')) v(u),
		   (VALUES ('keep'), ('sort')) w(q)) s;

-- Immutable: an index or a generated column can hold it
CREATE TEMP TABLE links (url text, canonical text GENERATED ALWAYS AS (url_canonical(url, strict => false)) STORED);
CREATE INDEX ON links (url_host(url, strict => false));
INSERT INTO links (url) VALUES ('http://Example.com/a#top'), ('http://example.com:80/a'),
	('https://other.example/'), ('not a url');
SELECT canonical, count(*) FROM links GROUP BY 1 ORDER BY 1;

-- The crawler loop canonicalises before it asks the shared filter: without
-- it, each #fragment of a page would be a new page to fetch
SELECT shared_bloom_create('url_seen', 1000, 0.001) IS NOT NULL AS created;
SELECT u, shared_test_and_add('url_seen', url_canonical(u, strict => false)) AS seen_before
FROM (VALUES ('https://www.postgresql.org/docs/15/glossary.html'),
			 ('https://www.postgresql.org/docs/15/glossary.html#GLOSSARY-BACKEND'),
			 ('HTTPS://www.postgresql.org/docs/15/./glossary.html'),
			 ('https://www.postgresql.org/docs/15/sql.html')) v(u);
-- in a batch, one call per page of links (a NULL, an invalid href, is
-- answered NULL and not added)
SELECT shared_test_and_add('url_seen',
	ARRAY(SELECT url_canonical(u, strict => false)
		  FROM unnest(ARRAY['https://www.postgresql.org/docs/15/sql.html#x',
							'https://www.postgresql.org/docs/15/index.html',
							'not a url',
							'https://www.postgresql.org:443/docs/15/index.html']) WITH ORDINALITY AS l(u, n)
		  ORDER BY n)) AS answers;
DROP TABLE url_seen;
