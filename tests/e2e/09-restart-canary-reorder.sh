#!/usr/bin/env bash
# The restart canary (09-restart-canary.sh), 10 kills, with every port of
# both nodes holding back a quarter of what it receives for 1 ms besides:
# stale frames that arrive out of order must not land either.
CANARY_KILLS=${CANARY_KILLS:-10} CANARY_BASE="reorder=25% delay=1ms" \
	exec bash "$(dirname "$0")/09-restart-canary.sh"
