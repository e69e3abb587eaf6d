# Steering in UDP: e2e/49's parts 1-4 on a routed testbed (encap = udp,
# two routers between the nodes) with queues = 4, each tap port's kernel
# steering every frame by the QP number behind its IPv4 and UDP headers
# (src/port/tun_steer.c), and each class unwrapping what its queue brings.
STEER_WIRE=routed . "$(dirname "$0")/49-steering.sh"
