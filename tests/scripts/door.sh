#!/bin/sh
# The door to enforce/ (issue 34): cli/ and shim/ reach a backend through
# enforce/fence.h alone, whose struct cf_fence is opaque; the backends'
# headers (the Landlock ruleset, the IPC fence's supervisor and its wire
# formats, the harness's guard, the keeper of the children's namespace, the
# fence's state) are enforce/'s own and the tests'. Checked on the sources:
#   1. no file of cli/ or shim/ includes a header of enforce/ but fence.h;
#   2. fence.h includes nothing of enforce/ but its portable parts (marker.h,
#      proc.h), and they include nothing of enforce/: nothing comes in
#      through the door itself;
#   3. the build gives cli/ and shim/ the enforce/ folder only, never a
#      backend's (cf_enforce_internal_dep, enforce_private_iquote).
# Usage: door.sh [SOURCE_ROOT]   (default: CREDFENCE_SOURCE, else this checkout)
set -u
root=${1:-${CREDFENCE_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}}
cd "$root" || exit 1
echo "1..3"

# The header names of enforce/ (any folder), one a line.
enforce_headers=$(find enforce -name '*.h' -exec basename {} \; | sort -u)
if [ -z "$enforce_headers" ]; then
	echo "not ok 1 - no header found under $root/enforce"
	exit 1
fi

# "FILE:LINE: #include NAME" for each quoted include of FILES that names a
# header of enforce/ other than ALLOWED. OWN: a header of that name in the
# includer's own folder is its own, not enforce/'s (for cli/ and shim/).
bad_includes() {
	allowed=$1
	own=$2
	shift 2
	for f in "$@"; do
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
			while read -r line inc; do
				base=${inc##*/}
				case " $allowed " in *" $inc "*) continue ;; esac
				case $inc in
				*enforce/*) echo "$f:$line: #include \"$inc\""; continue ;;
				esac
				[ "$own" = own ] && [ -f "$(dirname "$f")/$inc" ] && continue
				if printf '%s\n' "$enforce_headers" | grep -qxF "$base"; then
					echo "$f:$line: #include \"$inc\""
				fi
			done
	done
}

files=$(find cli shim -name '*.c' -o -name '*.h' | sort)
# shellcheck disable=SC2086 # the file names have no blanks
out=$(bad_includes "fence.h" own $files)
if [ -z "$out" ]; then
	echo "ok 1 - cli/ and shim/ include nothing of enforce/ but fence.h ($(printf '%s\n' "$files" | wc -l) files)"
else
	echo "not ok 1 - cli/ or shim/ includes a header of enforce/ other than fence.h:"
	printf '%s\n' "$out" | sed 's/^/# /'
fi

out2=$(bad_includes "marker.h proc.h" - enforce/fence.h enforce/marker.h enforce/proc.h)
if [ -z "$out2" ]; then
	echo "ok 2 - fence.h brings nothing of enforce/ but marker.h and proc.h"
else
	echo "not ok 2 - the door includes a header of enforce/'s backends:"
	printf '%s\n' "$out2" | sed 's/^/# /'
fi

builds=$(find cli shim -name meson.build | sort)
# shellcheck disable=SC2086
out3=$(grep -nE 'cf_enforce_internal_dep|enforce_private_iquote' $builds)
if [ -z "$out3" ]; then
	echo "ok 3 - cli/ and shim/ are built with enforce/'s folder only"
else
	echo "not ok 3 - cli/ or shim/ is given a backend's folder of enforce/:"
	printf '%s\n' "$out3" | sed 's/^/# /'
fi

[ -z "$out" ] && [ -z "$out2" ] && [ -z "$out3" ]
