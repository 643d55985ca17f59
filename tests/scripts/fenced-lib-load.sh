#!/bin/sh
# What a fenced program's start pays for the library it loads to explain its
# denials (libcredfence-fenced.so, issue 36): 1 000 nested /bin/true cost
# 1.20x plain with libcredfence.so in every fenced program. Checked on the
# dynamic loader's own counts, which do not depend on the machine's load:
#   1. its symbol relocations at load: at most 16 more than /bin/true's alone
#      (libcredfence.so adds some 156, bound at load for its exec path);
#   2. no lookup at load of a name it interposes (no dlsym in a constructor:
#      33 of them were some 15 us of each start);
#   3. it is not linked to bind every symbol at load (BIND_NOW).
# Usage: fenced-lib-load.sh LIBCREDFENCE-FENCED.SO LIBCREDFENCE.SO MAPFILE
set -u
lib=${1:?usage: fenced-lib-load.sh FENCED-LIB FULL-LIB MAP}
full=${2:?}
map=${3:?}
prog=/bin/true
echo "1..4"
relocs() {
	env ${1:+LD_PRELOAD=$1} LD_DEBUG=statistics "$prog" 2>&1 |
		sed -n 's/.*number of relocations: *\([0-9]*\).*/\1/p' | head -1
}
plain=$(relocs "")
with=$(relocs "$lib")
fullr=$(relocs "$full")
if [ -z "$plain" ] || [ -z "$with" ]; then
	echo "not ok 1 - LD_DEBUG=statistics printed no count (plain '$plain', with '$with')"
elif [ $((with - plain)) -le 16 ]; then
	echo "ok 1 - $((with - plain)) relocations at load ($plain plain, $with with it)"
else
	echo "not ok 1 - $((with - plain)) relocations at load, more than 16 ($plain plain, $with with it)"
fi
# The control: the whole shim adds many, so the count can tell them apart.
if [ -n "$fullr" ] && [ $((fullr - plain)) -gt 16 ]; then
	echo "ok 2 - control: libcredfence.so adds $((fullr - plain))"
else
	echo "not ok 2 - control: libcredfence.so adds '$((${fullr:-0} - plain))', the count tells nothing"
fi
# The interposed names, from the version script's global list.
names=$(sed -n '/global:/,/local:/p' "$map" | grep -v -e 'global:' -e 'local:' -e '^\s*/\*' |
	tr ';' '\n' | tr -d ' \t' | grep -v '^$')
looked=
for n in $names; do
	if env LD_PRELOAD="$lib" LD_DEBUG=symbols "$prog" 2>&1 | grep -q "symbol=$n;"; then
		looked="$looked $n"
	fi
done
if [ -z "$looked" ]; then
	echo "ok 3 - no interposed name is looked up at load"
else
	echo "not ok 3 - looked up at load (a dlsym in a constructor?):$looked"
fi
if readelf -d "$lib" | grep -q -e 'BIND_NOW' -e 'FLAGS_1.*NOW'; then
	echo "not ok 4 - $(basename "$lib") binds every symbol at load"
else
	echo "ok 4 - $(basename "$lib") binds its calls at their first use"
fi
