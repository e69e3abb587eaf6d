#!/usr/bin/env bash
# The restart canary (09-restart-canary.sh) with every target's random
# incarnation bits forced to one value: only the node's boot count
# (src/engine/incarnation.c) tells its processes apart, and that must be
# enough: the old QPs fail, and no stale byte lands.
CANARY_EQUAL_DRAW=1 exec bash "$(dirname "$0")/09-restart-canary.sh"
