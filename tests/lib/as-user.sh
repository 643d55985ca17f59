#!/bin/sh
# The suite as an ordinary user (issue 12): run as root, this runs test
# programs again as nobody, after a root run of the first one, and fails when
# a test crashes, finds no fixture root, or leaves a fixture behind. A root run
# must leave nothing that blocks another user's run.
#
# The checkout may lie where nobody can not reach it (a clone under a 0700
# directory, issue 25): then the test runs in a mount namespace of its own
# where each directory on the way that nobody can not search is covered by an
# empty tmpfs (mode 0755) holding binds of just what lies on the way (the
# directory itself is left as it is; nothing outside the namespace changes).
# Usage: as-user.sh TEST-PROGRAM... (criterion programs), or as-user.sh --
# COMMAND [ARG...] (any other test, run once as nobody: the harness test's
# Python; what the network needs of the environment is passed on). Exit 77:
# skipped, with the reason; under CI=true a test that can not run fails
# instead.
set -u
mode=criterion
if [ "${1:-}" = -- ]; then
	mode=command
	shift
fi

unavailable() {
	if [ "${CI:-}" = true ]; then
		echo "CI=true, so this must not be skipped: $1"
		exit 1
	fi
	echo "skip: $1"
	exit 77
}

if [ "$(id -u)" != 0 ]; then
	unavailable "not root; this run is an ordinary user's own"
fi
if ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	unavailable "no setpriv or no user nobody"
fi

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
}

# What nobody must reach: the programs (a command's arguments that are
# paths), the build tree and the checkout.
needed() {
	for p in "$@" ${CREDFENCE_BUILD:-} ${CREDFENCE_SOURCE:-} ${CREDFENCE_BIN:-}; do
		[ -e "$p" ] && realpath "$p"
	done
}

# The first directory from / down to $1 (itself included) that nobody can not
# search; nothing when there is none.
blocked() {
	rest=${1#/}
	dir=
	while [ -n "$rest" ]; do
		dir=$dir/${rest%%/*}
		if [ -d "$dir" ] && ! as_nobody test -x "$dir"; then
			echo "$dir"
			return
		fi
		case $rest in
		*/*) rest=${rest#*/} ;;
		*) rest= ;;
		esac
	done
}

# In the namespace: cover DIR with a tmpfs that holds binds of the entries of
# DIR that the needed paths go through.
open_way() {
	dir=$1
	shift
	n=$((n + 1))
	mkdir "$stage/$n" && mount --bind "$dir" "$stage/$n" &&
		mount -t tmpfs -o mode=0755,size=64k tmpfs "$dir" || return 1
	for p in "$@"; do
		case $p in "$dir"/*) ;; *) continue ;; esac
		entry=${p#"$dir"/}
		entry=${entry%%/*}
		[ -e "$dir/$entry" ] && continue
		if [ -d "$stage/$n/$entry" ]; then
			mkdir "$dir/$entry"
		else
			: >"$dir/$entry"
		fi && mount --bind "$stage/$n/$entry" "$dir/$entry" || return 1
	done
}

if [ -z "${CF_AS_USER_STAGE:-}" ]; then
	for p in $(needed "$@"); do
		if [ -n "$(blocked "$p")" ]; then
			# Into a private mount namespace; the stage is removed after it.
			stage=$(mktemp -d /run/cf-as-user-XXXXXX) || unavailable "can not make a stage in /run"
			# (the -- of command mode again: it was shifted off above)
			if [ $mode = command ]; then
				set -- -- "$@"
			fi
			CF_AS_USER_STAGE=$stage unshare -m --propagation private sh "$0" "$@"
			rc=$?
			rmdir "$stage"
			exit $rc
		fi
	done
else
	stage=$CF_AS_USER_STAGE
	mount -t tmpfs -o mode=0700 tmpfs "$stage" || unavailable "can not mount a tmpfs on $stage"
	n=0
	# Each round opens the first blocked directory of each path; a directory
	# under one opened may be blocked in turn (a 0700 inside a 0700).
	for round in 1 2 3 4 5 6 7 8; do
		opened=
		for p in $(needed "$@"); do
			dir=$(blocked "$p")
			[ -z "$dir" ] && continue
			[ "$dir" = "$p" ] && unavailable "nobody can not search $p itself (mode $(stat -c %a "$p"))"
			open_way "$dir" $(needed "$@") || unavailable "can not open the way to $p for nobody"
			opened=1
		done
		[ -z "$opened" ] && break
	done
fi

for bin in "$@"; do
	if ! as_nobody test -x "$bin"; then
		unavailable "nobody can not run $bin"
	fi
	[ $mode = command ] && break # the command's arguments are its own
done
status=0
root=/var/lib/credfence-tests/uid-65534
# What nobody's environment is: no home; PATH without root's own toolchains.
nobody_path=/usr/local/bin:/usr/bin:/bin
run_as_nobody() {
	as_nobody env -i PATH=$nobody_path HOME=/nonexistent LANG=C ${CI:+CI=$CI} \
		CREDFENCE_BUILD="${CREDFENCE_BUILD:-}" CREDFENCE_SOURCE="${CREDFENCE_SOURCE:-}" \
		CREDFENCE_BIN="${CREDFENCE_BIN:-}" "$@"
}
if [ $mode = command ]; then
	# The network as this machine reaches it (npm: a proxy, the CA that a
	# proxy signs with); nothing else of root's environment.
	set -- env ${NODE_EXTRA_CA_CERTS:+NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS} \
		${SSL_CERT_FILE:+SSL_CERT_FILE=$SSL_CERT_FILE} ${SSL_CERT_DIR:+SSL_CERT_DIR=$SSL_CERT_DIR} \
		${https_proxy:+https_proxy=$https_proxy} ${HTTPS_PROXY:+HTTPS_PROXY=$HTTPS_PROXY} \
		${http_proxy:+http_proxy=$http_proxy} ${HTTP_PROXY:+HTTP_PROXY=$HTTP_PROXY} \
		${no_proxy:+no_proxy=$no_proxy} ${NO_PROXY:+NO_PROXY=$NO_PROXY} "$@"
	out=$(cd / && run_as_nobody "$@" 2>&1)
	rc=$?
	echo "$out" | grep -E '^not ok|^1\.\.|^# ' | grep -v '# TODO' | head -60
	if [ $rc != 0 ]; then
		echo "as nobody, $* failed (exit $rc)"
		status=1
	fi
	exit $status
fi
"$1" -j2 >/dev/null 2>&1 || { echo "the root run of $1 failed"; status=1; }
# Left out as nobody, not skipped (under CI=true a skip would fail the run),
# each with its reason:
# - tests that only root can run (they drop to another user themselves):
#   the root run of their program covers them;
skip='ipc_engine/a_caller_with_other_credentials_is_refused'
skip="$skip|ipc_engine/a_connect_by_a_caller_with_other_credentials_is_refused_and_logged"
# - git over ssh: sshd runs each command through the user's login shell, and
#   nobody's is nologin (tests/tools/test_git_ssh.c; the root run has them);
skip="$skip|git_ssh/*"
# - a tool that is on root's PATH but not on nobody's (rustup puts cargo and
#   rustc in root's own home; Debian's packages put them in /usr/bin).
for t in cargo rustc; do
	if ! as_nobody env -i PATH=$nobody_path sh -c "command -v $t" >/dev/null 2>&1; then
		echo "as nobody: tools/${t}_* left out: $t is not on nobody's PATH ($nobody_path)"
		skip="$skip|tools/${t}_*"
	fi
done
for bin in "$@"; do
	bin=$(realpath "$bin")
	out=$(cd / && run_as_nobody "$bin" -j2 --verbose --filter="!($skip)" 2>&1)
	rc=$?
	echo "$out" | grep -E '^\[(FAIL|SKIP)\]|Synthesis|crashed' | grep -v 'Test is disabled'
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
