# The registration cache (docs/registration-cache.md): mr_cache_check on a
# (tests/e2e/mr_cache_check.c) WRITEs to b from cached regions of rotating
# buffers, every slot read back and checked: 10,000 WRITEs cost as many
# registrations as 16 MiB fragments their buffers touch; munmap (through
# the preload library ./srnic exec puts in) invalidates and deregisters
# the regions over it, and memory mapped anew at the same address is
# registered anew and its bytes arrive; mremap invalidates; idle regions
# go after SRNIC_MR_CACHE_IDLE_S (3 s here); the calls' errors.
. "$(dirname "$0")/../lib.sh"

pair mr_cache 120 env SRNIC_MR_CACHE_IDLE_S=3 "$BUILD/tests/e2e/mr_cache_check" ||
	fail "mr_cache_check"
checked "$LOGDIR/mr_cache.a" || fail "mr_cache_check: a check failed"
grep -E "^ok - [0-9]+ WRITEs from rotating|^ok - munmap" "$LOGDIR/mr_cache.a"
exit 0
