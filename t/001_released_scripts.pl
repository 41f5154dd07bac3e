#
# The released SQL scripts never change: an install made by a released
# version, updated later, must come to the same objects as a new install,
# and only the scripts as released can promise that.  sql/upgrade.sql checks
# the objects each version's scripts make (a fingerprint of their
# definitions); this checks the scripts themselves, byte for byte, in the
# tree and as installed into the PostgreSQL under test.
#
# A new version's SQL goes into a new update script (sbf--1.1--1.2.sql):
# never edit one of these.
#
use strict;
use warnings;

use Digest::SHA qw(sha256_hex);
use File::Basename qw(dirname);
use IPC::Run;
use Test::More;

# each released script, and its SHA-256 as released
my %released = (
	'sbf--1.0.sql' =>
	  'b283585a38782bebcf64ed8823f2d51af045b7458580bb8cc5a3fcd8ea29dcff',    # 1.0
	'sbf--1.0--1.1.sql' =>
	  '1d708d7ad943b48e772c22c2941706e36cd338b41c6ad960910a09671220afe1',    # 1.1
);

sub file_sha256
{
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or die "cannot read $path: $!";
	local $/;
	my $bytes = <$fh>;
	close($fh);
	return sha256_hex($bytes);
}

my $tree = dirname(dirname(__FILE__));
my ($sharedir, $stderr);
IPC::Run::run([ 'pg_config', '--sharedir' ], '>', \$sharedir, '2>', \$stderr)
  or die "pg_config failed: $stderr";
chomp $sharedir;

foreach my $script (sort keys %released)
{
	is(file_sha256("$tree/$script"), $released{$script},
		"$script in the tree is as released");
	is(file_sha256("$sharedir/extension/$script"), $released{$script},
		"$script as installed is as released");
}

done_testing();
