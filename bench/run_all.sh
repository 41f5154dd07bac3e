#!/usr/bin/env bash
# Every benchmark, each against its baseline measured in the same run:
#
#   bash bench/run_all.sh > results.txt      (~30 minutes on 2 cores)
#
# bench/filter_ops.sh     ns per add/test in C, outside PostgreSQL
# bench/marking.sh        is_duplicate and the aggregates on 10M rows
# bench/sieve_flush.sh    sieve_flush against the plain-SQL flush
# bench/parameter_study.sh (SBF_STUDY=1) accuracy of the filters on the
#                         real streams, for choosing k, Max and P
# Results and their reading are in docs/benchmarks.md.
set -euo pipefail
here=$(dirname "$0")
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(free -g | awk '/^Mem/ { print $2 }') GB, $(uname -r)"
for b in filter_ops marking sieve_flush; do
	echo
	echo "## bench/$b.sh"
	bash "$here/$b.sh"
done
if [ -n "${SBF_STUDY:-}" ]; then
	echo
	echo "## bench/parameter_study.sh"
	bash "$here/parameter_study.sh"
fi
