#!/usr/bin/env bash
# Checks the shape of src/ from the built objects (run it after make):
#
#   - no circle between files: a file's object uses a symbol another's
#     defines, so the other is below it; two files that reach each other
#     through such uses are a circle, and fail the check;
#   - each folder calls only the folders below it (docs/architecture.md):
#
#       common    nothing
#       filters   common
#       url       common
#       simhash   common
#       sieve     common
#       shared    common, filters
#       src/sbf.c anything
#
# The uses are read from `nm -P` of each object (a call through an inline
# function of a header counts where it is inlined).  Each failure names the
# files and the symbols; the exit status is 1 if there is any.
#
#   bash scripts/check-layout.sh              every folder
#   bash scripts/check-layout.sh sieve url    only what involves these
#                                             folders' files
. "$(dirname "$0")/lib.sh"

# The folders each folder may call; "top" is src/sbf.c
declare -A SBF_LAYOUT_CALLS=(
	[common]=""
	[filters]="common"
	[url]="common"
	[simhash]="common"
	[sieve]="common"
	[shared]="common filters"
	[top]="*"
)

cd "$SBF_ROOT"
objects=()
while IFS= read -r obj; do
	# an object whose source is gone (moved or renamed since it was built)
	# is not part of the build
	[ -f "${obj%.o}.c" ] && objects+=("$obj")
done < <(find src -name '*.o' | sort)
[ ${#objects[@]} -gt 0 ] || die "no objects under src/: build first (make)"

for folder in "$@"; do
	[ -n "${SBF_LAYOUT_CALLS[$folder]+set}" ] || die "unknown folder: $folder"
done
rules=
for folder in "${!SBF_LAYOUT_CALLS[@]}"; do
	rules+="$folder=${SBF_LAYOUT_CALLS[$folder]};"
done

# one line per symbol: the file, D (defines) or U (uses), the symbol
for obj in "${objects[@]}"; do
	nm -P "$obj" | awk -v file="${obj%.o}.c" '
		$2 == "U" { print file, "U", $1 }
		$2 ~ /^[TDBRGSCVW]$/ { print file, "D", $1 }'
done | awk -v rules="$rules" -v only="$*" '
	function folder(f, parts) {
		split(f, parts, "/")
		return parts[3] == "" ? "top" : parts[2]
	}
	function may_call(a, b) {
		return a == b || calls[a] == "*" || index(" " calls[a] " ", " " b " ") > 0
	}
	function shown(a, b) {
		return only == "" || index(" " only " ", " " folder(a) " ") > 0 ||
			index(" " only " ", " " folder(b) " ") > 0
	}
	# at most six symbols of an arrow, then how many more
	function symbols(a, b, list, n, i, out) {
		n = split(syms[a, b], list, " ")
		out = list[1]
		for (i = 2; i <= n && i <= 6; i++)
			out = out ", " list[i]
		if (n > 6)
			out = out sprintf(" (and %d more)", n - 6)
		return out
	}
	BEGIN {
		n = split(rules, r, ";")
		for (i = 1; i <= n; i++)
			if (r[i] != "") {
				split(r[i], kv, "=")
				calls[kv[1]] = kv[2]
			}
	}
	{ files[$1] = 1 }
	$2 == "D" { owner[$3] = $1 }
	$2 == "U" { uses[$1, $3] = 1 }
	END {
		nfiles = 0
		for (f in files)
			name[++nfiles] = f
		for (k in uses) {
			split(k, fs, SUBSEP)
			a = fs[1]
			b = owner[fs[2]]
			if (b == "" || b == a)
				continue
			if (!((a, b) in syms))
				arrows++
			syms[a, b] = syms[a, b] == "" ? fs[2] : syms[a, b] " " fs[2]
			reach[a, b] = 1
		}
		# sort the symbols of each arrow, for a stable message
		for (k in syms) {
			m = split(syms[k], list, " ")
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && list[j - 1] > list[j]; j--) {
					t = list[j]; list[j] = list[j - 1]; list[j - 1] = t
				}
			s = list[1]
			for (i = 2; i <= m; i++)
				s = s " " list[i]
			syms[k] = s
		}
		# which file reaches which (Warshall: a few dozen files)
		for (k = 1; k <= nfiles; k++)
			for (i = 1; i <= nfiles; i++)
				if ((name[i], name[k]) in reach)
					for (j = 1; j <= nfiles; j++)
						if ((name[k], name[j]) in reach)
							reach[name[i], name[j]] = 1
		# a circle: the files that reach each other, named by its first
		for (i = 1; i <= nfiles; i++)
			if (!(name[i] in circle_of) && (name[i], name[i]) in reach) {
				c = name[i]
				for (j = 1; j <= nfiles; j++)
					if ((c, name[j]) in reach && (name[j], c) in reach)
						circle_of[name[j]] = c
			}
		failed = 0
		for (i = 1; i <= nfiles; i++) {
			c = name[i]
			if (circle_of[c] != c)
				continue
			member = ""
			for (j = 1; j <= nfiles; j++)
				if (circle_of[name[j]] == c)
					member = member " " name[j]
			m = split(member, list, " ")
			for (a = 2; a <= m; a++)
				for (b = a; b > 1 && list[b - 1] > list[b]; b--) {
					t = list[b]; list[b] = list[b - 1]; list[b - 1] = t
				}
			if (!shown_any(list, m))
				continue
			failed++
			printf "circle between %d files:", m
			for (a = 1; a <= m; a++)
				printf " %s", list[a]
			printf "\n"
			for (a = 1; a <= m; a++)
				for (b = 1; b <= m; b++)
					if ((list[a], list[b]) in syms)
						printf "  %s -> %s: %s\n", list[a], list[b], symbols(list[a], list[b])
		}
		for (k in syms) {
			split(k, fs, SUBSEP)
			if (!may_call(folder(fs[1]), folder(fs[2])) && shown(fs[1], fs[2]))
				bad[++nbad] = sprintf("%s -> %s (%s may not call %s): %s", fs[1], fs[2],
									  folder(fs[1]), folder(fs[2]), symbols(fs[1], fs[2]))
		}
		for (i = 2; i <= nbad; i++)
			for (j = i; j > 1 && bad[j - 1] > bad[j]; j--) {
				t = bad[j]; bad[j] = bad[j - 1]; bad[j - 1] = t
			}
		for (i = 1; i <= nbad; i++)
			print "folder rule broken: " bad[i]
		failed += nbad
		if (failed > 0) {
			printf "layout: %d files, %d arrows: %d failure%s\n", nfiles, arrows, failed,
				failed == 1 ? "" : "s"
			exit 1
		}
		printf "layout: %d files, %d arrows, no circle, each folder calls only those it may%s\n",
			nfiles, arrows, only == "" ? "" : " (checked: " only ")"
	}
	function shown_any(list, m, a) {
		for (a = 1; a <= m; a++)
			if (shown(list[a], list[a]))
				return 1
		return 0
	}
'
