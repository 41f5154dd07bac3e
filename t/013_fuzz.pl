
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# Fuzzing, with libFuzzer under AddressSanitizer and UBSan, for a bounded
# time and without a server, three targets: the text input, the binary
# input and the value validation of bloom, stablebloom and slidingbloom
# (test/fuzz/fuzz_values.c); the canonical form of URLs that url_canonical
# and url_host return (test/fuzz/fuzz_url.c: never an ERROR, printable
# ASCII, canonical twice equals once); and the Rice-coded chunks of a
# compressed seen (test/fuzz/fuzz_chunk.c: any stored chunk refused or
# decoded to ascending signatures that code back the same, any sorted
# stream written and decoded back):
#
#   make prove_installcheck PROVE_TESTS=t/013_fuzz.pl         # as the test command runs it
#   FUZZ_SECONDS=3600 make prove_installcheck PROVE_TESTS=t/013_fuzz.pl   # longer, on demand
#
# The test command's run is reproducible: seed 1 and FUZZ_RUNS inputs per
# target (300,000 by default, 20 to 50 s a target here), capped at 4
# minutes.  FUZZ_SECONDS runs each for that long from a random seed
# instead.
#
# It needs clang-14 and libclang-rt-14-dev (the test command installs them)
# and fails without them.  Each target starts from its corpus
# (test/fuzz/corpus, valid values of each shape; test/fuzz/corpus_url;
# test/fuzz/corpus_chunk) and first replays its regressions
# (test/fuzz/regressions, test/fuzz/regressions_url,
# test/fuzz/regressions_chunk: inputs that once failed).  A crash, a
# sanitizer report, a refusal with the wrong SQLSTATE or a broken property
# fails the test and leaves the input and the fuzzer's log in
# tmp_check/log/013_fuzz_findings_<target>.

use strict;
use warnings;

use File::Copy qw(copy);
use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $fuzz = "$SbfTest::ROOT/test/fuzz";
my $src = "$SbfTest::ROOT/src";
my $tmp = PostgreSQL::Test::Utils::tempdir;

my $fuzz_seconds = $ENV{FUZZ_SECONDS};
my $fuzz_runs = $ENV{FUZZ_RUNS} // 300000;
foreach my $setting ([ FUZZ_SECONDS => $fuzz_seconds ],
	[ FUZZ_RUNS => $fuzz_runs ])
{
	my ($name, $value) = @$setting;
	BAIL_OUT("$name must be a positive integer, not '$value'")
	  if defined $value && $value !~ /^[1-9][0-9]*$/;
}

# The test command installs clang-14 and libclang-rt-14-dev; without them
# this test fails rather than skips, so that no run passes unfuzzed
unless (grep { -x "$_/clang-14" } split(/:/, $ENV{PATH}))
{
	fail(
		'clang-14 is not installed (apt-get install clang-14 libclang-rt-14-dev): cannot build the fuzz target'
	);
	done_testing();
	exit;
}

my ($includedir) = run_command([ 'pg_config', '--includedir-server' ]);
chomp $includedir;

# -w: PostgreSQL's headers declare printf attributes clang does not know
my @cflags = (
	'clang-14', '-g', '-O1', '-w',
	'-fsanitize=fuzzer,address,undefined',
	'-fno-sanitize-recover=undefined',
	"-I$includedir", (map { "-I$src/$_" } qw(common filters sieve url)), "-I$fuzz",
	'-ffunction-sections', '-fdata-sections');

# fuzz(target, what, [sources], [libraries], [cflags]): build the target,
# run it from its corpus and regressions, and pass or fail
sub fuzz
{
	my ($target, $what, $sources, $libs, $extra) = @_;
	my $bin = "$tmp/$target";
	my $dir = "$tmp/$target.d";
	my @build = (@cflags, @$extra, "$fuzz/$target.c", "$fuzz/pg_stubs.c",
		@$sources, '-Wl,--gc-sections', @$libs, '-lm', '-o', $bin);
	my $build_log = '';
	unless (IPC::Run::run(\@build, '>', \$build_log, '2>&1'))
	{
		fail(
			"cannot build the fuzz target $target (are clang-14 and libclang-rt-14-dev installed?)"
		);
		diag($build_log);
		return;
	}

	mkdir($dir) or die "cannot create $dir: $!";
	mkdir("$dir/corpus") or die "cannot create $dir/corpus: $!";
	mkdir("$dir/findings") or die "cannot create $dir/findings: $!";
	my (@limits, $cap);
	if (defined $fuzz_seconds)
	{
		@limits = ("-max_total_time=$fuzz_seconds");
		$cap = $fuzz_seconds + 120;
	}
	else
	{
		@limits = ('-seed=1', "-runs=$fuzz_runs", '-max_total_time=240');
		$cap = 360;
	}
	my %suffix = (fuzz_values => '', fuzz_url => '_url', fuzz_chunk => '_chunk');
	my ($corpus, $regressions) =
	  ("$fuzz/corpus$suffix{$target}", "$fuzz/regressions$suffix{$target}");

	# The new inputs go to the first corpus directory, the temporary one
	my $log = "$dir/fuzz.log";
	IPC::Run::run(
		[
			'timeout', '-k', '10', $cap, $bin, @limits,
			'-timeout=10', '-rss_limit_mb=2048', '-max_len=4096',
			"-artifact_prefix=$dir/findings/", '-print_final_stats=1',
			"$dir/corpus", $corpus, $regressions
		],
		'>', $log, '2>&1');

	# timeout's exit code, or 128 + the signal that ended it
	my $rc = ($? & 127) ? 128 + ($? & 127) : $? >> 8;

	if ($rc == 0)
	{
		my ($runs) = slurp_file($log) =~ /^stat::number_of_executed_units:\s*([0-9]+)/m;
		$runs //= 'an unknown number of';

		# a slow machine may reach the time cap first: say so
		$runs .= ' (stopped by the time cap)'
		  if !defined $fuzz_seconds && $runs =~ /^[0-9]+$/ && $runs < $fuzz_runs;
		pass("fuzzed $what (@limits): $runs inputs, no finding");
		return;
	}
	my $keep = "$PostgreSQL::Test::Utils::log_path/013_fuzz_findings_$target";
	mkdir($keep);
	copy($_, $keep) foreach (glob("$dir/findings/*"), $log);
	my @lines = grep { /ERROR|SUMMARY|runtime error|deadly signal/ }
	  split(/\n/, slurp_file($log));
	diag(join("\n", @lines[ 0 .. ($#lines < 4 ? $#lines : 4) ]));
	if ($rc == 124 || $rc == 137)
	{
		fail("the fuzzer of $what did not end within $cap s: see $keep");
	}
	else
	{
		fail("the fuzzer of $what found an input that fails (exit code $rc): see $keep");
	}
}

fuzz('fuzz_values', 'bloom, stablebloom and slidingbloom input and validation',
	[
		"$src/common/value_io.c", "$src/filters/bloom.c", "$src/filters/stablebloom.c",
		"$src/filters/slidingbloom_format.c", "$src/filters/slidingbloom.c",
		"$src/filters/slidingbloom_time.c", "$src/common/sizing.c",
		"$src/common/hash.c"
	],
	[], []);
fuzz('fuzz_url', 'url_canonical (uriparser, libidn2)',
	[ "$fuzz/url_stubs.c", "$src/url/url.c" ],
	[ '-luriparser', '-lidn2' ], ['-DFUZZ_STRINGINFO']);
fuzz('fuzz_chunk', 'sieve_chunk decoding and the chunk writer',
	["$src/sieve/sieve_codes.c"], [], []);

done_testing();
