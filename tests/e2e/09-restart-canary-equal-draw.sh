#!/usr/bin/env bash
# The restart canary (09-restart-canary.sh), 8 kills, with every target's
# random incarnation bits forced to one value: only the node's boot count
# (src/engine/incarnation.c) tells its processes apart, and that must be
# enough: the old QPs fail, and no stale byte lands.  (Each kill is the
# whole test of that: 09-restart-canary.sh's 20 in a row are the stress.)
CANARY_KILLS=${CANARY_KILLS:-8} CANARY_EQUAL_DRAW=1 \
	exec bash "$(dirname "$0")/09-restart-canary.sh"
