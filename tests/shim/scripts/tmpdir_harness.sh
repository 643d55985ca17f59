# A fake harness that does what opencode's Bun runtime does on each run:
# write a native library into $TMPDIR (O_CREAT, no O_EXCL) and load it back.
# Its fenced children try to get there first, to put a symlink or their own
# directory in its place, and to replace the file before the load. Each line
# CHILD-<WHAT> says that an attack worked; LOADED= says what the harness read.
# Then Gemini CLI's shell tool, whose child writes a file into the
# harness's TMPDIR.
lib="$TMPDIR/.cf-lib-00000000.so"
echo "HARNESS-TMPDIR=$TMPDIR"
echo "HARNESS-CLAUDE=${CLAUDE_CODE_TMPDIR-unset}"
stat -c 'HARNESS-MODE=%a' "$TMPDIR"
echo "$TMPDIR" > "$CF_T_ROOT/harness-tmpdir"
bash -c '
	echo "CHILD-TMPDIR=${TMPDIR-unset}"
	echo PLANTED > "$1" && echo CHILD-PLANTED
	ln -s "$CF_T_ROOT/evil" "$1.link" && echo CHILD-LINKED
	mv "$2" "$2.moved" && echo CHILD-MOVED
	mkdir "${2%/*}/harness-tmp.evil" && echo CHILD-MADE-BESIDE
	f="${TMPDIR:-/tmp}/cf-child-tmp-$$"
	echo ok > "$f" && echo CHILD-TMP-WRITABLE && rm -f "$f"
' child "$lib" "$TMPDIR" 2>&1
printf 'HARNESS-LIB\n' > "$lib"
bash -c 'echo PLANTED > "$1" && echo CHILD-REPLACED; rm -f "$1" && echo CHILD-REMOVED' \
	child "$lib" 2>&1
echo "LOADED=$(cat "$lib")"
# Gemini CLI's shell tool (issue 36): the shell it starts is to write the
# pids of its background jobs into its TMPDIR (Gemini makes a directory
# gemini-shell-XXXXXX there first; a shell script has no mkdir of its own).
bash -c 'sleep 0 & (trap "jobs -p > \"\$1\"" EXIT; true)' child "$TMPDIR/bgpids.tmp" 2>&1
if [ -s "$TMPDIR/bgpids.tmp" ]; then echo CHILD-WROTE-BGPIDS; fi
