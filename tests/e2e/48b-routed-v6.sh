# srnic across routers in IPv6: e2e/48 whole on ./srnic testbed up
# --routed --ipv6, whose nodes are fd00:56:I::2/64 (configuration lines
# "ipv6", "route = default via fd00:56:I::1", "peer = fd00:56:K::2"),
# next hops found by neighbour discovery, every program that names a GID
# given GID 1, the node's IPv6 address (48-routed.sh says what each part
# checks).
ROUTED_FAMILY=ipv6 . "$(dirname "$0")/48-routed.sh"
