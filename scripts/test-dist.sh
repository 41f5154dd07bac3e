#!/usr/bin/env bash
# The PGXN archive as a user gets it: `make dist` makes sbf-VERSION.zip of
# the commit checked out; this checks that the release's version is the
# same everywhere it is written, that the archive holds exactly the
# commit's files (less what .gitattributes leaves out), and then runs the
# whole suite, scripts/test.sh, from the unpacked archive: it builds,
# installs and tests without git and without the clone beside it.
#
#   bash scripts/test-dist.sh
#
# As root, like scripts/test.sh, in a git clone.  Ends with "N passed,
# N failed" (the suite's, plus one each for the version, the release's
# dates and the archive's files).
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || die "git is needed to make the archive"
ensure_packages unzip

passed=0
failed=0

# One version: default_version of sbf.control (1.1) is META.json's (1.1.0)
# less its patch number, and debian/changelog's first entry and
# CHANGELOG.md's first section say the same.  A release (META.json's
# release_status "stable") has its date in CHANGELOG.md, "## 1.1
# (2026-11-27)", and a distribution in debian/changelog; a version under
# way is "(unreleased)" and UNRELEASED there, and its archive "unstable".
control=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$SBF_ROOT/sbf.control")
meta=$(sed -n 's/^   "version": "\(.*\)",$/\1/p' "$SBF_ROOT/META.json" | head -n 1)
provides=$(sed -n 's/^         "version": "\(.*\)"$/\1/p' "$SBF_ROOT/META.json" | head -n 1)
deb=$(sed -n '1s/^sbf (\([^)]*\)).*/\1/p' "$SBF_ROOT/debian/changelog")
heading=$(grep -m 1 '^## ' "$SBF_ROOT/CHANGELOG.md")
changelog=$(echo "$heading" | sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p')
status=$(sed -n 's/^   "release_status": "\(.*\)",$/\1/p' "$SBF_ROOT/META.json")
distribution=$(sed -n '1s/^sbf ([^)]*) \([^;]*\);.*/\1/p' "$SBF_ROOT/debian/changelog")
echo "versions: sbf.control $control, META.json $meta (provides $provides, $status), debian/changelog $deb ($distribution), CHANGELOG.md \"$heading\""
[ -n "$control" ] && [ "$meta" = "$control.0" ] && [ "$provides" = "$meta" ] &&
	[ "$deb" = "$meta" ] && [ "$changelog" = "$control" ]
result $? "one version, $meta, in sbf.control, META.json, debian/changelog and CHANGELOG.md"
case $status in
	stable) echo "$heading" | grep -qE '^## [0-9.]+ \([0-9]{4}-[0-9]{2}-[0-9]{2}\)$' &&
		[ "$distribution" != UNRELEASED ] ;;
	unstable) echo "$heading" | grep -qE '^## [0-9.]+ \(unreleased\)$' &&
		[ "$distribution" = UNRELEASED ] ;;
	*) false ;;
esac
result $? "a $status version: CHANGELOG.md's \"$heading\", debian/changelog's $distribution"

WORK=$(mktemp -d /tmp/sbf-dist.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ZIP=sbf-$meta.zip
make -C "$SBF_ROOT" -s dist >/dev/null || die "make dist failed"
mv "$SBF_ROOT/$ZIP" "$WORK/"
say "$ZIP: $(du -h "$WORK/$ZIP" | cut -f1)"

# The archive's files are the commit's, under sbf-VERSION/
unzip -q "$WORK/$ZIP" -d "$WORK/unpacked"
(cd "$WORK/unpacked" && find . -type f | sed 's|^\./||' | sort) >"$WORK/archive.list"
git -C "$SBF_ROOT" ls-files | grep -vE '^\.ci/' | sed "s|^|sbf-$meta/|" | sort >"$WORK/commit.list"
diff "$WORK/commit.list" "$WORK/archive.list"
result $? "$ZIP holds the commit's files under sbf-$meta/, .ci/ left out"

# The whole suite, from the unpacked archive
rc=0
bash "$WORK/unpacked/sbf-$meta/scripts/test.sh" 2>&1 | tee "$WORK/suite.log" || rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$WORK/suite.log" | tail -n 1)
if [ -n "$line" ]; then
	passed=$((passed + ${line%% passed*}))
	f=${line#*passed, }
	failed=$((failed + ${f%% failed*}))
fi
[ -n "$line" ] && [ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || failed=$((failed + 1))

echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
