
# Copyright (c) 2026, the sbf authors (PostgreSQL License, see LICENSE)

# The docs run as tests.  Every ```sql block of README.md and docs/*.md is
# run, in page order, in one psql session per page (a database of its own),
# and what each statement prints is compared with what the page shows.
# The conventions a page follows, so that this test can read it, are in
# docs/reference.md, "Keeping this page in step".

use strict;
use warnings;

use FindBin;
use lib $FindBin::RealBin;
use SbfTest;
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = SbfTest::new_node('docs');

# One page's examples: a list of blocks, each a list of statements
# { sql, line, shown => [lines], file }.  A block without a statement ended
# by ";" (a synopsis such as "bloom_add(filter bloom, value text) -> bloom")
# is not run; nor is a block after "<!-- doctest: skip (why) -->", nor a
# page that has "<!-- doctest: skip page (why) -->".
sub parse_page
{
	my ($file) = @_;
	open(my $fh, '<', $file) or die "$file: $!";
	my @lines = <$fh>;
	close($fh);
	chomp(@lines);

	my (@statements, $in_block, $skip, @block);
	for my $i (0 .. $#lines)
	{
		my $line = $lines[$i];
		return () if $line =~ /^\s*<!-- doctest: skip page/;
		if (!$in_block && $line =~ /^\s*<!-- doctest: skip/)
		{
			$skip = 1;
		}
		elsif (!$in_block && $line =~ /^\s*```sql\s*$/)
		{
			$in_block = 1;
			@block = ();
		}
		elsif ($in_block && $line =~ /^\s*```\s*$/)
		{
			$in_block = 0;
			push @statements, parse_block($file, @block) unless $skip;
			$skip = 0;
		}
		elsif ($in_block)
		{
			push @block, [ $i + 1, $line ];
		}
	}
	return @statements;
}

# The code of a line and its trailing comment ("--" outside quotes)
sub split_comment
{
	my ($line) = @_;
	my $quote = '';
	for (my $i = 0; $i < length($line); $i++)
	{
		my $c = substr($line, $i, 1);
		if ($quote)
		{
			$quote = '' if $c eq $quote;
		}
		elsif ($c eq "'" || $c eq '"')
		{
			$quote = $c;
		}
		elsif (substr($line, $i, 2) eq '--')
		{
			return (substr($line, 0, $i), substr($line, $i + 2));
		}
	}
	return ($line, undef);
}

# A block's statements.  A statement ends at a line whose code ends with
# ";" or is a psql meta-command (\gset, \set ...).  The comment at the end
# of that line and the comment lines right after it (up to a line that is
# blank or code) are what the statement prints.
sub parse_block
{
	my ($file, @block) = @_;
	my (@statements, @sql, $start, $last);
	for my $entry (@block)
	{
		my ($lineno, $line) = @$entry;
		if ($last && $line =~ /^\s*--\s?(.*)$/)
		{
			push @{ $last->{shown} }, $1;
			next;
		}
		$last = undef;
		next if !@sql && ($line =~ /^\s*$/ || $line =~ /^\s*--/);

		my ($code, $comment) = split_comment($line);
		$start = $lineno unless @sql;
		push @sql, $code;
		my $dollars = () = join("\n", @sql) =~ /\$\$/g;
		next if $dollars % 2;    # inside a function's body
		if ($code =~ /;\s*$/ || $code =~ /^\s*\\/ || $code =~ /\\g\w*(\s+\S+)?\s*$/)
		{
			$last = {
				file => $file,
				line => $start,
				sql => join("\n", @sql),
				shown => defined $comment ? [$comment] : [],
			};
			push @statements, $last;
			@sql = ();
		}
	}
	die "$file line $start: a statement without its \";\"\n"
	  if @sql && @statements;
	return @statements;
}

# Lines psql prints besides a result or an error's first line; a page may
# leave them out
my $secondary = qr/^(DETAIL|HINT|CONTEXT|LINE \d+|QUERY):|^\s*\^\s*$/;
my $message = qr/^(ERROR|WARNING|NOTICE|INFO):/;

sub squeeze
{
	my ($text) = @_;
	$text =~ s/\s+//g;
	return $text;
}

# Does what the page shows match what psql printed?  Whitespace is ignored
# (pages align columns and wrap long values); "..." stands for any text; a
# result's header line may be left out (a single value is shown as
# "-- value"), a result's rows may be shown on one line with their values
# separated by commas ("-- 1, 2, 3"), psql's line under the header and its
# "(N rows)" may be shown or not, and a message's DETAIL, HINT and CONTEXT
# lines may be left out.  A remark in parentheses may follow the last line.
sub matches
{
	my ($shown, $printed) = @_;
	my $shows_message = grep { /$message/ } @$shown;
	my @printed = @$printed;
	for my $kind ('DETAIL', 'HINT', 'CONTEXT', 'LINE', 'QUERY')
	{
		next if grep { /^\Q$kind\E/ } @$shown;
		@printed = grep { !/^\Q$kind\E/ } @printed;
	}
	@printed = grep { !/^\s*\^\s*$/ } @printed unless grep { /^\s*\^\s*$/ } @$shown;

	my @lines = grep { !/^[-+\s]+$/ && !/^\(\d+ rows?\)$/ } @$shown;
	my $pattern = join('.*?', map { quotemeta(squeeze($_)) } split(/\.\.\./, join(' ', @lines), -1));
	my @candidates = (join(' ', @printed));
	if (@printed && !$shows_message && $printed[0] !~ $message)
	{
		# without the header; and the rows on one line, "1, 2, 3"
		my @rows = @printed[ 1 .. $#printed ];
		push @candidates, join(' ', @rows), join(', ', map { s/ \| /, /gr } @rows);
	}
	return 1 if grep { squeeze($_) =~ /^$pattern$/s } @candidates;

	# A remark in parentheses after what is printed: "-- f (new, now added)"
	my @unremarked = @$shown;
	return 0 unless $unremarked[-1] =~ s/\s+\([^()]*\)\s*$//;
	return matches(\@unremarked, $printed);
}

my @pages = ("$SbfTest::ROOT/README.md", sort glob("$SbfTest::ROOT/docs/*.md"));
my $db = 0;
my $compared = 0;
for my $page (@pages)
{
	my @statements = parse_page($page);
	next unless @statements;
	(my $name = $page) =~ s{^\Q$SbfTest::ROOT\E/}{};

	# A database per page, with sbf unless the page creates it itself
	$db++;
	$node->safe_psql('postgres', "CREATE DATABASE doc$db");
	$node->safe_psql("doc$db", 'CREATE EXTENSION sbf')
	  unless grep { $_->{sql} =~ /^\s*CREATE EXTENSION sbf\b/mi } @statements;

	my $script = join("\n",
		'\pset format unaligned',
		"\\pset fieldsep ' | '",
		'\pset footer off',
		map { "\\echo \@\@doctest $_\@\@\n$statements[$_]{sql}" } 0 .. $#statements)
	  . "\n\\echo \@\@doctest end\@\@\n";
	my $output;
	# from the repository's root, where a page's "\copy ... data/..." reads
	IPC::Run::run(
		[ 'psql', '-X', '-q', '-d', $node->connstr("doc$db") ],
		'<', \$script, '>&', \$output,
		init => sub { chdir($SbfTest::ROOT) or die "chdir: $!" })
	  or die "psql failed on $name: $output";

	my @parts = split(/^\@\@doctest (\d+|end)\@\@\n/m, $output);
	shift @parts;
	my %printed = @parts;
	for my $i (0 .. $#statements)
	{
		my $st = $statements[$i];
		my @printed = grep { /\S/ } split(/\n/, $printed{$i} // '');
		my @shown = grep { /\S/ } @{ $st->{shown} };
		my $what = "$name line $st->{line}";
		my $shows_message = grep { /$message/ } @shown;
		my $result = @printed && $printed[0] !~ $message;

		if (!@shown)
		{
			# Nothing shown: it must run without an error
			ok(!grep({ /^ERROR:/ } @printed), "$what runs")
			  or diag("$st->{sql}\nprinted:\n" . join("\n", @printed));
		}
		elsif (!$result && !$shows_message && !grep({ /^ERROR:/ } @printed))
		{
			# A command that prints nothing, with a remark beside it
			pass("$what runs");
		}
		else
		{
			$compared++;
			ok(matches(\@shown, \@printed), "$what prints what the page shows")
			  or diag("$st->{sql}\nshown:\n"
				  . join("\n", @shown)
				  . "\nprinted:\n"
				  . join("\n", @printed));
		}
	}
}

# A parser that lost its way would find nothing to compare and pass
cmp_ok($compared, '>=', 80, "the pages' shown results were found and compared");

done_testing();
