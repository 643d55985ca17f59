#!/bin/sh
# Nothing in libcredfence.so calls libc's syscall(): the shim exports its own
# syscall() wrapper, so such a call from enforce/ or common/ would land on the
# shim above them (issue 21), and before the constructor on a wrapper that
# has nothing resolved yet (issue 19). The raw cf_sys* helpers are used
# instead. Checked on the built library's disassembly.
set -u
lib="${1:?usage: no-libc-syscall.sh LIBCREDFENCE_SO}"
echo "1..1"
if ! out=$(objdump -d "$lib" 2>&1); then
	echo "not ok 1 objdump failed: $out"
	exit 1
fi
calls=$(printf '%s\n' "$out" | grep -E '(call|jmp)[[:space:]].*<syscall(@plt)?>' || true)
if [ -n "$calls" ]; then
	echo "not ok 1 libcredfence.so calls syscall():"
	printf '%s\n' "$calls" | sed 's/^/# /'
	exit 1
fi
echo "ok 1 no call of syscall() in $(basename "$lib")"
