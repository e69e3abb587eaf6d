#!/usr/bin/env bash
# Fuzzes a parser of untrusted input with libFuzzer (ASan and UBSan on):
# the wire decoder (every frame), srnicd's request parser (every message
# a process sends it), or rdma_cm's connection exchange decoder (every
# message a peer's CM sends); or the engine's receive path with its state
# (engine: sequences of frames into one engine with QPs and regions,
# tests/fuzz/fuzz_engine.c).
#   tests/fuzz/run-fuzz.sh [SECONDS] [wire|request|cm|engine]  default 60 wire
# Builds fuzz_wire in its own clang build dir (build-fuzz, or
# $SRNIC_FUZZ_BUILD): the everyday build may well be gcc, which has no
# libFuzzer.  The corpus stays in build-fuzz/fuzz-corpus between runs, so
# each run goes on from where the last one stopped.  A crash leaves its input
# in build-fuzz/fuzz-artifacts/; replay it with
#   build-fuzz/tests/fuzz/fuzz_wire FILE              (with the sanitizers)
#   build/tests/unit/test_wire_corpus FILE            (any compiler)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${SRNIC_FUZZ_BUILD:-$ROOT/build-fuzz}
SECS=${1:-60}
TARGET=${2:-wire}

die() { echo "run-fuzz.sh: $*" >&2; exit 1; }

case $SECS in '' | *[!0-9]*) die "SECONDS must be a number, not '$SECS'" ;; esac
case $TARGET in wire|request|cm|engine) ;; *) die "TARGET: wire, request, cm or engine, not '$TARGET'" ;; esac
command -v clang > /dev/null || die "clang is needed: apt-get install clang"
if [ ! -f "$BUILD/build.ninja" ]; then
	log=$(mktemp)
	CC=clang meson setup "$BUILD" "$ROOT" > "$log" 2>&1 ||
		{ cat "$log"; rm -f "$log"; die "meson setup failed"; }
	rm -f "$log"
fi
# A dir set up earlier by hand may hold another compiler: meson never
# changes a build dir's compiler, so say so rather than fuzz nothing.
grep -q '^C compiler for the host machine: .*(clang ' \
	"$BUILD/meson-logs/meson-log.txt" ||
	die "$BUILD is not a clang build: remove it, or set SRNIC_FUZZ_BUILD"
ninja -C "$BUILD" -t targets all | grep -q "^tests/fuzz/fuzz_$TARGET:" ||
	die "clang cannot link -fsanitize=fuzzer here (see $BUILD/meson-logs/meson-log.txt); on Debian the runtime is in libclang-rt-*-dev or libclang-common-*-dev"
ninja -C "$BUILD" "tests/fuzz/fuzz_$TARGET" "tests/unit/test_${TARGET}_corpus" > /dev/null ||
	die "build failed: ninja -C $BUILD tests/fuzz/fuzz_$TARGET"

CORPUS=$BUILD/fuzz-corpus/$TARGET
SEEDS=$BUILD/fuzz-seeds/$TARGET
ARTIFACTS=$BUILD/fuzz-artifacts
mkdir -p "$CORPUS" "$SEEDS" "$ARTIFACTS"
# Valid inputs of every kind (frames of every opcode, requests of every
# operation): the fuzzer starts past the magic, version and length checks
# instead of having to discover them.
"$BUILD/tests/unit/test_${TARGET}_corpus" --write-seeds "$SEEDS" ||
	die "could not write seeds"

# New inputs go to the first directory; the seeds are only read.
# -max_len: a 9000-byte MTU frame and a little more (the engine's input
# is up to 16 frames of the testbed's 4 KiB).  Decoding takes
# microseconds, so a second for one input is a hang.
MAXLEN=9100
[ "$TARGET" != engine ] || MAXLEN=$((16 * (2 + 4200)))
"$BUILD/tests/fuzz/fuzz_$TARGET" -max_total_time="$SECS" -max_len=$MAXLEN \
	-timeout=1 -print_final_stats=1 -artifact_prefix="$ARTIFACTS/" \
	"$CORPUS" "$SEEDS"
rc=$?
if [ $rc != 0 ]; then
	echo "run-fuzz.sh: fuzz_$TARGET failed (exit $rc); inputs in $ARTIFACTS:" >&2
	ls -t "$ARTIFACTS" | head -5 >&2
fi
exit $rc
