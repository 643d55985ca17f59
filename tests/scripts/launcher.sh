#!/bin/sh
# scripts/credfence on a copy of the checkout (issue 12, first use): it
# builds only the command and the shim, shows its progress on stderr, makes a
# second concurrent first call wait (both succeed), and exits 125 with a
# message when packages are missing.
set -u
src="${CREDFENCE_SOURCE:?run with meson test}"
work=$(mktemp -d "${TMPDIR:-/tmp}/cf-launcher-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
status=0
fail() {
	echo "FAIL: $*"
	status=1
}
mkdir "$work/src"
tar --exclude='./build*' --exclude='./.git' -C "$src" -cf - . | tar -C "$work/src" -xf -
export CREDFENCE_PREFIX="$work/prefix"
cd "$work" || exit 1

# Two first calls at once: the second waits for the first one's build.
src/scripts/credfence install >a.out 2>a.err &
a=$!
sleep 1
src/scripts/credfence --version >b.out 2>b.err
b=$?
wait $a
a=$?
[ $a = 0 ] || fail "the first call exited $a: $(cat a.err)"
[ $b = 0 ] || fail "the second call exited $b: $(cat b.err)"
grep -q '^credfence [0-9]' b.out || fail "the second call ran no credfence: $(cat b.out b.err)"
grep -q '^credfence: building the credfence command' a.err || fail "no progress line: $(cat a.err)"
grep -q '^\[[0-9]*/[0-9]*\] ' a.err || fail "no build progress on stderr: $(cat a.err)"
grep -q 'waiting for another call' b.err || fail "the second call did not say it waits: $(cat b.err)"
[ -x prefix/bin/credfence ] || fail "credfence is not installed"
# Only the tool: no tests, no benchmark driver.
for t in tests/bench/cf-bench tests/enforce/test_enforce tests/cli/test_cli tests/common/test_common; do
	[ ! -e "src/build-tool/$t" ] || fail "$t was built"
done
[ ! -e src/build-tool/tests/enforce ] || fail "the tests were configured"
# meson installs the man page; ninja uninstall removes what was installed.
[ -f prefix/share/man/man1/credfence.1 ] || fail "the man page is not installed"
man -l prefix/share/man/man1/credfence.1 >/dev/null 2>&1 || ! command -v man >/dev/null ||
	fail "man can not read the installed credfence.1"
ninja -C src/build-tool uninstall >uninstall.log 2>&1 || fail "ninja uninstall: $(cat uninstall.log)"
for f in bin/credfence lib/libcredfence.so share/man/man1/credfence.1; do
	[ ! -e "prefix/$f" ] || fail "ninja uninstall left $f"
done

# Missing packages: exit 125 with a message (dpkg-query and apt-get stubbed,
# so that nothing is installed).
mkdir stubs
printf '#!/bin/sh\nexit 1\n' >stubs/dpkg-query
printf '#!/bin/sh\nexit 100\n' >stubs/apt-get
printf '#!/bin/sh\nexit 1\n' >stubs/sudo
chmod +x stubs/*
rm -rf src/build-tool
PATH="$work/stubs:$PATH" src/scripts/credfence --version >c.out 2>c.err
c=$?
[ $c = 125 ] || fail "missing packages: exit $c, not 125: $(cat c.err)"
grep -q '^credfence: the packages credfence needs to build are missing' c.err ||
	fail "missing packages: no message: $(cat c.err)"
[ $status = 0 ] && echo "ok"
exit $status
