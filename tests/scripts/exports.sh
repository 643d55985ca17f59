#!/bin/sh
# Each library exports exactly the names of its version script, which are
# those of shim/linux/interposed.h's lists (libcredfence.so and
# libcredfence-fenced.so; the scripts are made from the lists at build
# time), or cf_judge_ops alone (libcredfence-judge.so): no wrapper is
# missing, nothing else leaks (issue 34). pidfd_spawn and pidfd_spawnp are
# listed, and defined only where the C library has them (glibc 2.39).
# Usage: exports.sh LIB MAP [LIB MAP]...
set -u
names() {
	sed -n '/global:/,/local:/p' "$1" | sed 's#/\*.*\*/##' | grep -v -e 'global:' -e 'local:' |
		tr ';' '\n' | tr -d ' \t' | grep -v '^$' | sort -u
}
echo "1..$(($# / 2))"
n=0
status=0
while [ $# -ge 2 ]; do
	lib=$1 map=$2
	shift 2
	n=$((n + 1))
	want=$(names "$map")
	got=$(nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
	extra=$(printf '%s\n' "$got" | grep -vxF "$want")
	missing=$(printf '%s\n' "$want" | grep -vxF "$got" | grep -vx -e pidfd_spawn -e pidfd_spawnp)
	count=$(printf '%s\n' "$got" | grep -c .)
	if [ -z "$want" ]; then
		echo "not ok $n - $(basename "$map") names nothing"
		status=1
	elif [ -n "$extra$missing" ]; then
		echo "not ok $n - $(basename "$lib"): exported beyond the list:" $extra "; missing:" $missing
		status=1
	else
		echo "ok $n - $(basename "$lib") exports the $count names of its list"
	fi
done
exit $status
