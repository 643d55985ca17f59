#!/bin/sh
# scripts/stack-usage's fork-safety check, on small programs that gcc compiles
# here with -fcallgraph-info=su (the same graph scripts/test gives it for the
# shim): a malloc, a printf or an unlisted call through a pointer planted on
# a child path fails it; raw calls, and calls only in normal context, pass.
set -u
src="${CREDFENCE_SOURCE:?run with meson test}"
work=$(mktemp -d "${TMPDIR:-/tmp}/cf-forksafe-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
status=0
n=0

# check NAME WANT_STATUS WANT_TEXT C_SOURCE
check() {
	n=$((n + 1))
	d="$work/$1"
	mkdir -p "$d/shim"
	printf '%s\n' "$4" >"$d/shim/child.c"
	if ! (cd "$d" && gcc -O1 -fcallgraph-info=su -c shim/child.c -o shim/child.o 2>"$d/cc.err"); then
		echo "not ok $n $1: gcc failed: $(cat "$d/cc.err")"
		status=1
		return
	fi
	python3 "$src/scripts/stack-usage" "$d" >"$d/out" 2>&1
	got=$?
	if [ "$got" != "$2" ] || ! grep -q "$3" "$d/out"; then
		echo "not ok $n $1: exit $got (want $2), output:"
		sed 's/^/# /' "$d/out"
		status=1
	else
		echo "ok $n $1"
	fi
}

head='#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int execve(const char *p, char *const a[], char *const e[]);'

echo "1..6"
check planted-malloc 1 'fork-unsafe: malloc reached from a child: execve > helper > malloc' "$head
__attribute__((noinline)) static long helper(const char *p) { char *b = malloc(64); memcpy(b, p, 8); return (long)b; }
int execve(const char *p, char *const a[], char *const e[]) { (void)a; (void)e; return (int)helper(p); }"
check planted-stdio 1 'fork-unsafe: printf' "$head
int execve(const char *p, char *const a[], char *const e[]) { (void)a; (void)e; return printf(\"%s\", p); }"
check unlisted-pointer 1 'fork-unsafe: __indirect_call' "$head
int (*hook)(const char *);
int execve(const char *p, char *const a[], char *const e[]) { (void)a; (void)e; return hook(p); }"
check raw-only 0 'fork safety: 1 child entries, nothing reached' "$head
__attribute__((noinline)) static int helper(const char *p, char *d) { memcpy(d, p, strlen(p)); return getpid(); }
int execve(const char *p, char *const a[], char *const e[]) { char d[64]; (void)a; (void)e; return helper(p, d); }"
check normal-only 0 'fork safety: 1 child entries, nothing reached' "$head
int cf_shim_judge_own_exec(int dirfd, const char *path, int flags);
__attribute__((noinline)) int cf_shim_judge_own_exec(int dirfd, const char *path, int flags) { return fprintf(stderr, \"%d %s %d\", dirfd, path, flags); }
int execve(const char *p, char *const a[], char *const e[]) { (void)a; (void)e; return cf_shim_judge_own_exec(-100, p, 0); }"

# --files: the files an entry reaches in the child, and their functions.
n=$((n + 1))
d="$work/files"
mkdir -p "$d/shim"
printf '%s\n' "$head
__attribute__((noinline)) static int helper(const char *p) { return (int)strlen(p); }
int execve(const char *p, char *const a[], char *const e[]) { (void)a; (void)e; return helper(p); }" >"$d/shim/child.c"
if (cd "$d" && gcc -O1 -fcallgraph-info=su -c shim/child.c -o shim/child.o) &&
	python3 "$src/scripts/stack-usage" "$d" --files execve >"$d/out" 2>&1 &&
	grep -q '^execve: 2 functions in 1 files$' "$d/out" && grep -q '^  shim/child.c: execve helper$' "$d/out"; then
	echo "ok $n files"
else
	echo "not ok $n files: output:"
	sed 's/^/# /' "$d/out" 2>/dev/null
	status=1
fi
exit $status
