# A Perl harness: system, exec, backticks, open '-|'. Prints one CASE line each.
use strict;
use warnings;
$| = 1;
my $key = $ENV{CF_T_OWN};  # its own login: the harness reads it, not CF_T_KEY
my $allowed = $ENV{CF_T_ALLOWED};
my @deny = ('/bin/bash', '-c', 'cat "$CF_T_KEY"');
my @legit = ('/bin/cat', $allowed);
my $deny_sh = q{bash -c 'cat "$CF_T_KEY"'};
my $legit_sh = q{cat "$CF_T_ALLOWED"};

sub case { my ($n, $d, $l) = @_; print "CASE $n deny=$d legit=$l\n"; }

open(my $k, '<', $key) or die "harness can not read its key: $!";
my $line = <$k>; close $k;
print(($line =~ /^CFMARK-/) ? "HARNESS_READ ok\n" : "HARNESS_READ bad\n");
print((open(my $s, '<', $ENV{CF_T_KEY}) || !$!{EACCES}) ? "HARNESS_DENIED bad\n" : "HARNESS_DENIED ok\n");

system(@deny); my $d = $? >> 8;
system(@legit); my $l = $? >> 8;
case('system-list', $d, $l);
system($deny_sh); $d = $? >> 8;
system($legit_sh); $l = $? >> 8;
case('system-string', $d, $l);

sub fork_exec {
	my @argv = @_;
	my $pid = fork();
	if ($pid == 0) { exec { $argv[0] } @argv; exit 127; }
	waitpid($pid, 0);
	return $? >> 8;
}
case('exec', fork_exec(@deny), fork_exec(@legit));

my $out = `$deny_sh`; $d = $? >> 8; print $out;
$out = `$legit_sh`; $l = $? >> 8; print $out;
case('backticks', $d, $l);

sub pipe_from {
	my @argv = @_;
	open(my $fh, '-|', @argv) or die "open -|: $!";
	print while <$fh>;
	close $fh;
	return $? >> 8;
}
case('open-pipe', pipe_from(@deny), pipe_from(@legit));
