#!/bin/sh
# scripts/mutate on a tiny fixture project (issue 37): it skips comments,
# strings and macOS-only lines, draws from a change's lines, catches a planted
# mutant that the fixture's test checks, reports one it does not check as
# missed (exit 1), and leaves the tree as it was, also when interrupted while
# a mutant hangs a test (exit 130, the hung test killed, the copy removed).
set -u
src="${CREDFENCE_SOURCE:?run with meson test}"
mutate="$src/scripts/mutate"
work=$(mktemp -d "${TMPDIR:-/tmp}/cf-mutate-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
n=0
status=0
ok() {
	n=$((n + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1))
	echo "not ok $n - $*"
	status=1
}
check() { # check DESCRIPTION COMMAND...
	d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

fx="$work/fx"
mkdir -p "$fx/lib" "$work/tmp"
cat >"$fx/meson.build" <<'EOF'
project('fx', 'c', default_options : ['warning_level=3', 'werror=true'])
calc = static_library('calc', 'lib/calc.c')
test('calc', executable('test_calc', 'test_calc.c', link_with : calc))
test('hang', find_program('hang.sh'), env : {'FX_SRC' : meson.project_source_root()})
EOF
cat >"$fx/lib/calc.c" <<'EOF'
#include <errno.h>
int fx_over(int n);
int fx_untested(int n);
const char *fx_word(void);
int fx_check(int fd, int n);
void fx_note(int n);

int fx_over(int n)
{
	/* n > 8 in a comment is no code */
	return n > 8;
}

const char *fx_word(void)
{
	return "n > 8"; // nor in a string: x > 1
}

#ifdef __APPLE__
int fx_apple(int n)
{
	return n > 1;
}
#endif

int fx_untested(int n)
{
	return n == 3;
}

int fx_check(int fd, int n)
{
	if (fd < 0 && n)
		return -EBADF;
	fx_note(n);
	return 0;
}

#ifdef FX_NEVER
int fx_never(int n)
{
	return n > 2;
}
#endif
EOF
cat >"$fx/test_calc.c" <<'EOF'
int fx_over(int n);
void fx_note(int n);
void fx_note(int n)
{
	(void)n;
}
int main(void)
{
	return !(fx_over(9) == 1 && fx_over(8) == 0);
}
EOF
# Hangs only while the planted mutant is in the copy it is given.
cat >"$fx/hang.sh" <<'EOF'
#!/bin/sh
if grep -q 'n >= 8;' "$FX_SRC/lib/calc.c"; then
	echo $$ >"$FX_PIDFILE"
	exec sleep 300
fi
exit 0
EOF
chmod +x "$fx/hang.sh"
git -C "$fx" init -q
git -C "$fx" add -A
git -C "$fx" -c user.name=fx -c user.email=fx@invalid commit -qm fixture
before=$(cd "$fx" && sha256sum lib/calc.c)
clean() {
	[ -z "$(git -C "$fx" status --porcelain)" ] && [ "$(cd "$fx" && sha256sum lib/calc.c)" = "$before" ]
}
export TMPDIR="$work/tmp"

# --list: every operator's mutants, none in a comment, a string or #ifdef __APPLE__.
"$mutate" --root "$fx" --list --count 1000 lib >"$work/list" 2>&1
cat >"$work/list.want" <<'EOF'
lib/calc.c:11: constant: `return n > 8;` -> `return n > 7;`
lib/calc.c:11: relational: `return n > 8;` -> `return n >= 8;`
lib/calc.c:28: constant: `return n == 3;` -> `return n == 2;`
lib/calc.c:28: relational: `return n == 3;` -> `return n != 3;`
lib/calc.c:33: constant: `if (fd < 0 && n)` -> `if (fd < 1 && n)`
lib/calc.c:33: logical: `if (fd < 0 && n)` -> `if (fd < 0 || n)`
lib/calc.c:33: negate-if: `if (fd < 0 && n)` -> `if (!(fd < 0 && n))`
lib/calc.c:33: relational: `if (fd < 0 && n)` -> `if (fd <= 0 && n)`
lib/calc.c:34: error-return: `return -EBADF;` -> `return 0;`
lib/calc.c:35: remove-call: `fx_note(n);` -> `(void)0;`
lib/calc.c:36: constant: `return 0;` -> `return 1;`
lib/calc.c:42: constant: `return n > 2;` -> `return n > 1;`
lib/calc.c:42: relational: `return n > 2;` -> `return n >= 2;`
EOF
grep '^lib/calc.c:' "$work/list" | LC_ALL=C sort >"$work/list.got"
check "--list draws each operator's mutants, from code lines only" \
	cmp -s "$work/list.want" "$work/list.got"

# --base: only the lines the work tree changed.
sed -i 's/return n == 3;/return n == 3 || n < 0;/' "$fx/lib/calc.c"
"$mutate" --root "$fx" --list --base HEAD lib >"$work/base" 2>&1
check "--base HEAD draws from the changed line only" \
	test -z "$(grep '^lib/calc.c:' "$work/base" | grep -v '^lib/calc.c:28:')" -a \
	"$(grep -c '^lib/calc.c:28: logical:' "$work/base")" = 1
git -C "$fx" checkout -q lib/calc.c

# The planted mutant is caught by the test that checks it.
"$mutate" --root "$fx" --tmp --tests calc --at lib/calc.c:11 --op relational lib >"$work/caught" 2>&1
rc=$?
check "the planted mutant is caught (exit 0)" \
	test "$rc" = 0 -a "$(grep -c '^\[ 1/1\] caught .*calc.c:11 relational.* by calc' "$work/caught")" = 1
check "the tree is left as it was" clean
check "the temporary copy is removed" test -z "$(ls -A "$work/tmp")"

# A line no test checks: missed, named with its file, line and change.
"$mutate" --root "$fx" --tmp --tests calc --at lib/calc.c:28 --op relational lib >"$work/missed" 2>&1
rc=$?
check "an unchecked line's mutant is missed (exit 1)" \
	test "$rc" = 1 -a "$(grep -c '^  missed lib/calc.c:28 relational: `return n == 3;` -> `return n != 3;`' "$work/missed")" = 1
check "the tree is left as it was" clean

# A mutant in code this build does not compile: the same object code, no test run.
"$mutate" --root "$fx" --tmp --tests calc --at lib/calc.c:42 --op relational lib >"$work/unchanged" 2>&1
rc=$?
check "a mutant the build does not compile is unchanged, not missed (exit 0)" \
	test "$rc" = 0 -a "$(grep -c '^\[ 1/1\] unchanged lib/calc.c:42 relational' "$work/unchanged")" = 1

# Interrupted while the mutant hangs a test: the test is killed, the copy removed.
FX_PIDFILE="$work/hang.pid" "$mutate" --root "$fx" --tmp --tests hang --at lib/calc.c:11 --op relational \
	lib >"$work/int" 2>&1 &
pid=$!
i=0
until [ -s "$work/hang.pid" ] || [ $i -ge 1200 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
check "an interrupted run exits 130" test "$rc" = 130
check "the tree is left as it was after the interrupt" clean
check "the temporary copy is removed after the interrupt" test -z "$(ls -A "$work/tmp")"
check "the hung test is killed" test -s "$work/hang.pid" -a ! -d "/proc/$(cat "$work/hang.pid" 2>/dev/null)"

echo "1..$n"
[ $status = 0 ] || {
	for f in list list.want base caught missed unchanged int; do
		echo "# --- $f"
		sed 's/^/# /' "$work/$f" 2>/dev/null
	done
}
exit $status
