#!/usr/bin/env bash
# The false-positive rate of a stable Bloom filter at its stable point,
# measured with fixed seeds, against Deng & Rafiei's formula.
. "$(dirname "$0")/lib.sh"
fresh_db

# 300k distinct keys into 100k cells: after the first 100k insertions the
# filter is at its stable point, and every key after that is new, so each
# flag among keys 100001..300000 is a false positive.
for cfg in "4 1 7" "4 3 23" "6 1 7"; do
	read -r k max p <<<"$cfg"
	for keys in "g" "'https://example.org/' || g"; do
		read -r measured theory < <(q -F ' ' -c "
			SELECT count(*) FILTER (WHERE dup AND g > 100000) / 200000.0,
				   stablebloom_fpr(100000, $k, $p, $max)
			FROM (SELECT g, is_duplicate($keys, stablebloom_empty(100000, $k, $max, $p, 42))
							OVER (ORDER BY g) AS dup
				  FROM generate_series(1, 300000) g) s")
		check "k=$k Max=$max P=$p, keys $keys: measured fpr $measured within 10% of stablebloom_fpr $theory" \
			awk -v m="$measured" -v t="$theory" 'BEGIN { d = m - t; if (d < 0) d = -d; exit !(d <= 0.10 * t) }'
	done
done

# The zero fraction at the stable point matches stablebloom_stable_zeros
read -r zeros theory < <(q -F ' ' -c "
	SELECT (stablebloom_info(f)->>'zero_fraction')::float8,
		   stablebloom_stable_zeros(100000, 4, 7, 1)
	FROM (SELECT stablebloom_agg(g, stablebloom_empty(100000, 4, 1, 7, 42) ORDER BY g) AS f
		  FROM generate_series(1, 300000) g) s")
check "zero fraction after 300k insertions $zeros within 5% of stablebloom_stable_zeros $theory" \
	awk -v m="$zeros" -v t="$theory" 'BEGIN { d = m - t; if (d < 0) d = -d; exit !(d <= 0.05 * t) }'

# Forgetting follows the model: a URL met again 99 insertions later is
# missed when one of its k cells was decremented in between (Max = 1),
# which happens with probability 1 - (1 - P/m)^(99 k) = 2.7% here
read -r missed total expected < <(q -F ' ' -c "
	SELECT count(*) FILTER (WHERE NOT dup AND g % 2 = 0), count(*) FILTER (WHERE g % 2 = 0),
		   1 - (1 - 7 / 100000.0) ^ (99 * 4)
	FROM (SELECT g, is_duplicate(CASE WHEN g % 2 = 0 THEN g - 99 ELSE g END,
								 stablebloom_empty(100000, 4, 1, 7, 42)) OVER (ORDER BY g) AS dup
		  FROM generate_series(1, 200000) g) s")
check "repeats 99 insertions apart: $missed of $total missed, within 15% of the expected rate $expected" \
	awk -v m="$missed" -v n="$total" -v e="$expected" 'BEGIN { r = m / n; d = r - e; if (d < 0) d = -d; exit !(d <= 0.15 * e) }'

finish
