#!/bin/sh
# check-private-abi.sh - fail loudly unless the libibverbs we build against
# exports the private provider ABI that provider/verbs_private.h describes
# (symbol version IBVERBS_PRIVATE_34, rdma-core v43..v56 layouts).
#
# Usage: check-private-abi.sh [path/to/libibverbs.so]
#   env CC (default cc), CFLAGS/LDFLAGS are honoured for the link test.
# Exit 0 and print the library path when the ABI is present, else exit 1.
#
# Two independent checks:
#   1. objdump -T: the library defines version node IBVERBS_PRIVATE_34 and
#      every private function srnic calls, at that version.
#   2. link test: a tiny program built with verbs_private.h (which pins each
#      private reference to @IBVERBS_PRIVATE_34) links against -libverbs.
set -eu

VER=IBVERBS_PRIVATE_34
SYMS="verbs_register_driver_34 _verbs_init_and_alloc_context verbs_set_ops verbs_uninit_context verbs_init_cq"
HERE=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}

fail() {
	echo "check-private-abi: ERROR: $*" >&2
	echo "check-private-abi: srnic needs rdma-core's libibverbs with private ABI $VER" \
	     "(Debian 12: libibverbs-dev 44.0). Its provider structures are declared by hand" \
	     "in provider/verbs_private.h and would not match another ABI." >&2
	exit 1
}

command -v objdump >/dev/null 2>&1 || fail "objdump not found (install binutils)"

lib=${1:-}
if [ -z "$lib" ]; then
	# Ask the compiler which libibverbs.so "-libverbs" would pick up.
	lib=$($CC -print-file-name=libibverbs.so)
	[ "$lib" = libibverbs.so ] && fail "libibverbs.so not found by $CC (install libibverbs-dev)"
fi
[ -e "$lib" ] || fail "$lib does not exist"
real=$(readlink -f "$lib")

dynsyms=$(objdump -T "$real" 2>/dev/null) || fail "objdump -T failed on $real"

# 1a. the version node itself (objdump shows it as an *ABS* symbol)
echo "$dynsyms" | awk -v v="$VER" 'NF >= 2 && $(NF-1) == v && $NF == v { found = 1 } END { exit !found }' ||
	fail "$real does not define symbol version $VER" \
	     "(it has: $(echo "$dynsyms" | grep -o 'IBVERBS_PRIVATE_[0-9]*' | sort -u | tr '\n' ' '))"

# 1b. each private function we call, defined (not UND) at that version
for s in $SYMS; do
	echo "$dynsyms" | awk -v v="$VER" -v s="$s" \
		'NF >= 2 && $NF == s && $(NF-1) == v && $0 !~ /\*UND\*/ { found = 1 } END { exit !found }' ||
		fail "$real does not export $s@$VER"
done

# 2. link test through the real header
if [ -f "$HERE/verbs_private.h" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	cat >"$tmp/t.c" <<-'EOF'
	#include "verbs_private.h"
	int main(int argc, char **argv)
	{
		(void)argv;
		/* Never run: only the references matter. */
		if (argc > 1000) {
			verbs_register_driver_34(NULL);
			verbs_set_ops(NULL, NULL);
			verbs_uninit_context(NULL);
			verbs_init_cq(NULL, NULL, NULL, NULL);
			return _verbs_init_and_alloc_context(NULL, -1, 0, NULL, 0) != NULL;
		}
		return 0;
	}
	EOF
	libdir=$(dirname "$real")
	# shellcheck disable=SC2086
	if ! $CC ${CFLAGS:-} -I"$HERE" "$tmp/t.c" -o "$tmp/t" -L"$libdir" ${LDFLAGS:-} \
		-libverbs >"$tmp/log" 2>&1; then
		cat "$tmp/log" >&2
		fail "test program pinned to $VER does not link against $real"
	fi
fi

echo "check-private-abi: OK: $real exports $VER"
