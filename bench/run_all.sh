#!/usr/bin/env bash
# Every benchmark, each against its baseline measured in the same run:
#
#   bash bench/run_all.sh > results.txt
#
# bench/filter_ops.sh     ns per add/test in C, outside PostgreSQL
# bench/marking.sh        is_duplicate and the aggregates on 10M rows
# bench/sieve_flush.sh    sieve_flush against the plain-SQL flush, on
#                         $SBF_SIEVE_STREAM (default: the shipped
#                         data/eot2024-sitemaps-300k.txt.gz)
# bench/simhash.sh        near-duplicate search at 1M and 10M fingerprints:
#                         each index layout against sequential scan, the
#                         self-join
# bench/shared.sh         shared filters: one URL a statement and batches
#                         of 1,000 (pgbench), at 4 MB, 1 GB and 16 GB
# bench/shared_transactional.sh  transactional adds against immediate ones
# bench/shared_growth.sh  filters that grow against one of fixed size
# bench/url_canonical.sh  url_canonical per URL against md5
# bench/sliding_paper.sh the Sliding Bloom filter paper's experiments: its
#                         structure against slidingbloom at equal memory
# bench/sliding_time.sh   a window of a day over a week of rows: the window
#                         of time against one of arrivals and the exact query
# bench/scrapy_crawl.sh   Scrapy crawling the manual's pages: its own queue
#                         against sbf_scrapy's filter and frontier
# bench/parameter_study.sh (SBF_STUDY=1) accuracy of the filters on real
#                         streams, for choosing k, Max and P, on the
#                         paths in $SBF_STUDY_STREAMS (default: the
#                         shipped data/ files)
#
# The figures of docs/benchmarks.md and docs/parameter-study.md were
# measured on the whole public streams (each script's header names them and
# the command that was run).  To run everything on those streams (~30
# minutes on 2 cores, ~7 more for the shared filters and ~7 more for the
# study):
#
#   SBF_SIEVE_STREAM=/path/to/eot2024-sitemaps-a-m.txt.gz SBF_STUDY=1 \
#   SBF_STUDY_STREAMS="/path/to/doccrawl-pg-python.tsv.gz /path/to/doccrawl-rust.tsv.gz /path/to/eot2024-sitemaps-a-m.txt.gz" \
#       bash bench/run_all.sh > results.txt
#
# Results and their reading are in docs/benchmarks.md.
set -euo pipefail
here=$(dirname "$0")
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(free -g | awk '/^Mem/ { print $2 }') GB, $(uname -r)"
for b in filter_ops marking sieve_flush sieve_contains_checks sieve_contains_batch sieve_flush_readers seen_online shared shared_transactional shared_growth simhash url_canonical sliding_paper sliding_time scrapy_crawl; do
	echo
	echo "## bench/$b.sh"
	bash "$here/$b.sh"
done
if [ -n "${SBF_STUDY:-}" ]; then
	echo
	echo "## bench/parameter_study.sh"
	bash "$here/parameter_study.sh"
fi
