#!/bin/sh
# ThreadSanitizer run of the two 16-thread stresses (issue 9), in a build
# configured with -Db_sanitize=thread (scripts/test: build-tsan, clang):
#   1. the shim's spawner: credfence harness -- cf-stress 16 ROUNDS (posix_spawn
#      and fork+execve from 16 threads; tests/shim/stress.c), the fake home
#      changed meanwhile so that the fence is replaced under them, with the shim,
#      credfence (and its IPC supervisor) and cf-stress instrumented;
#   2. the IPC supervisor: cf-ipcstress (tests/enforce/ipcstress.c), 4 fenced
#      processes of 4 threads against one supervisor.
# Criterion can not run under TSan (see ipcstress.c), hence plain programs.
# Every instrumented process writes its reports to a file of its own
# (log_path: the supervisor has no stderr); any report fails the run. They are
# printed unsymbolized (the symbolizer would load the instrumented shim from
# LD_PRELOAD and die) and symbolized afterwards by scripts/tsan-symbolize.
# Usage: tsan.sh BUILD SOURCE [ROUNDS]
set -u
build=$1
src=$2
rounds=${3:-32}

if [ -n "${CREDFENCE_TEST_ROOT:-}" ]; then
	base=$CREDFENCE_TEST_ROOT
elif [ -d /var/lib/credfence-tests ] && mkdir -p "/var/lib/credfence-tests/uid-$(id -u)" 2>/dev/null; then
	base=/var/lib/credfence-tests/uid-$(id -u)
elif [ -n "${XDG_RUNTIME_DIR:-}" ]; then
	base=$XDG_RUNTIME_DIR/credfence-tests
else
	echo "1..0 # SKIP no fixture root outside /tmp (set CREDFENCE_TEST_ROOT)"
	exit 0
fi
mkdir -p "$base"
root=$(mktemp -d "$base/tsan-XXXXXX") || exit 1
chmod 755 "$root"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/home/.ssh" "$root/home/.claude" "$root/ws" "$root/tsan"
echo "tsan-secret" >"$root/home/.ssh/id_ed25519"
echo "tsan-login" >"$root/home/.claude/.credentials.json"
echo "allowed-content-ok" >"$root/ws/allowed.txt"
export TSAN_OPTIONS="halt_on_error=1 symbolize=0 second_deadlock_stack=1 log_path=$root/tsan/report"

# The command and its shim run from a copy outside every writable location,
# as the fixture does: credfence refuses to be run from /tmp, where a checkout
# (and its build) may lie.
mkdir -p "$root/bin" "$root/lib"
cp "$build/cli/credfence" "$root/bin/credfence" || exit 1
cp "$build/shim/libcredfence.so" "$root/lib/libcredfence.so" || exit 1

# An ordinary user's harness gets its guard's user namespace in the process
# that execs the harness, which the supervisor forks; ThreadSanitizer starts a
# thread in every forked child, and the kernel gives a user namespace only to
# a process of one thread (EINVAL; SECURITY.md). So, run as an ordinary user,
# the instrumented harness starts in best-effort mode, and its warning must say
# that (the threads), not that user namespaces are off. Root's guard needs no
# user namespace and runs in required mode.
mode=""
if [ "$(id -u)" != 0 ]; then
	mode="--best-effort"
fi

echo "1..3"
status=0
out=$(cd "$root/ws" && env CF_T_PROBE="$build/tests/shim/cf-probe" \
	CF_T_KEY="$root/home/.ssh/id_ed25519" CF_T_KEYS="$root/home/.ssh/id_ed25519" \
	CF_T_OWN="$root/home/.claude/.credentials.json" \
	CF_T_ALLOWED="$root/ws/allowed.txt" CF_T_CHURN="$root/home" \
	"$root/bin/credfence" harness $mode --home "$root/home" --workspace "$root/ws" -- \
	"$build/tests/shim/cf-stress" 16 "$rounds" 2>&1)
rc=$?
want="STRESS launched=$((16 * rounds)) bad=0"
guard_ok=true
if [ -n "$mode" ] && ! printf '%s\n' "$out" | grep -q "are not guarded: .* threads, and the kernel gives a user namespace only to a process of one thread"; then
	guard_ok=false
fi
if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q "$want" && $guard_ok; then
	echo "ok 1 spawner stress: 16 threads x $rounds launches${mode:+ ($mode: ThreadSanitizer's thread keeps the harness from its user namespace, as its warning says)}"
else
	echo "not ok 1 spawner stress: status $rc, expected '$want'${mode:+ and a warning that names the threads}"
	printf '%s\n' "$out" | grep -v "running as root" | sed 's/^/# /'
	status=1
fi

out=$("$build/tests/enforce/cf-ipcstress" "$root" 150 2>&1)
rc=$?
if [ $rc = 0 ]; then
	echo "ok 2 IPC supervisor stress: 4 fenced processes x 4 threads x 150 rounds"
else
	echo "not ok 2 IPC supervisor stress: status $rc"
	status=1
fi
printf '%s\n' "$out" | sed 's/^/# /'

if ls "$root/tsan" | grep -q .; then
	echo "not ok 3 ThreadSanitizer reports: $(ls "$root/tsan" | wc -l) process(es)"
	for f in "$root/tsan"/*; do
		"$src/scripts/tsan-symbolize" "$build" <"$f" | sed 's/^/# /'
	done
	status=1
else
	echo "ok 3 no ThreadSanitizer report"
fi
exit $status
