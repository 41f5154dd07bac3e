#!/usr/bin/perl
# The visible text of every page of an HTML manual, one page a line:
#
#   perl scripts/pgdoc-pages.pl /usr/share/doc/postgresql-doc-15/html | gzip -9n >data/pgdoc15-pages.tsv.gz
#
# For each *.html file of the directory, in byte order of the names, prints
# "name<TAB>text": the file name, and its text with
#   1. <head>...</head>, <script>...</script>, <style>...</style> and
#      comments dropped (case-insensitive, across lines),
#   2. every other tag (<...>) replaced by a space,
#   3. the entities &lt; &gt; &amp; &quot; &apos; &nbsp; &#N; &#xH; decoded
#      (&nbsp; to a space; others are kept as written),
#   4. runs of whitespace (including the tabs and newlines, and the spaces of
#      step 2) collapsed to one space, none at either end.
# Bytes are UTF-8 throughout; the output has no tab or newline inside a
# text and no escaping (COPY's text format needs backslashes doubled).
use strict;
use warnings;

my $dir = shift // die "usage: $0 HTML-DIRECTORY\n";
opendir(my $dh, $dir) or die "cannot read $dir: $!\n";
my @names = sort grep { /\.html$/ && -f "$dir/$_" } readdir($dh);
closedir($dh);
binmode(STDOUT, ':raw');
my %entity = (lt => '<', gt => '>', amp => '&', quot => '"', apos => "'", nbsp => ' ');
for my $name (@names)
{
	open(my $in, '<:raw', "$dir/$name") or die "cannot read $dir/$name: $!\n";
	my $html = do { local $/; <$in> };
	close($in);
	utf8::decode($html) or die "$name is not UTF-8\n";
	$html =~ s{<(head|script|style)\b.*?</\1\s*>}{ }gis;
	$html =~ s{<!--.*?-->}{ }gs;
	$html =~ s{<[^>]*>}{ }gs;
	$html =~ s{&(?:#([0-9]+)|#x([0-9a-fA-F]+)|([a-z]+));}{
		defined $1 ? chr($1) : defined $2 ? chr(hex $2)
		  : exists $entity{$3} ? $entity{$3} : "&$3;"}ge;
	$html =~ s/\s+/ /g;
	$html =~ s/^ | $//g;
	utf8::encode($html);
	print "$name\t$html\n";
}
