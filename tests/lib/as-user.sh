#!/bin/sh
# The suite as an ordinary user (issue 12): run as root, this runs test
# programs again as nobody, after a root run of the first one, and fails when
# a test crashes, finds no fixture root, or leaves a fixture behind. A root run
# must leave nothing that blocks another user's run.
# Usage: as-user.sh TEST-PROGRAM... (exit 77: skipped, with the reason)
set -u
if [ "$(id -u)" != 0 ]; then
	echo "skip: not root; this run is an ordinary user's own"
	exit 77
fi
if ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	echo "skip: no setpriv or no user nobody"
	exit 77
fi
for bin in "$@"; do
	if ! setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$bin"; then
		echo "skip: nobody can not run $bin (the build lies in a private directory)"
		exit 77
	fi
done
status=0
"$1" -j2 >/dev/null 2>&1 || { echo "the root run of $1 failed"; status=1; }
root=/var/lib/credfence-tests/uid-65534
for bin in "$@"; do
	bin=$(realpath "$bin")
	out=$(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent LANG=C ${CI:+CI=$CI} \
		CREDFENCE_BUILD="${CREDFENCE_BUILD:-}" CREDFENCE_SOURCE="${CREDFENCE_SOURCE:-}" \
		CREDFENCE_BIN="${CREDFENCE_BIN:-}" "$bin" -j2 --verbose 2>&1)
	rc=$?
	echo "$out" | grep -E '^\[(FAIL|SKIP)\]|Synthesis|crashed'
	if [ $rc != 0 ] || echo "$out" | grep -q -e 'crashed' -e 'no fixture root'; then
		echo "as nobody, $bin failed (exit $rc)"
		status=1
	fi
done
if [ -d "$root" ] && [ -n "$(ls -A "$root")" ]; then
	echo "as nobody, fixtures were left behind in $root:"
	ls -la "$root"
	status=1
fi
exit $status
