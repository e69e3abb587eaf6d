# Steering in UDP over IPv6: e2e/49's parts 1-4 on a routed testbed in
# IPv6 (./srnic testbed up --routed --ipv6) with queues = 4, each tap
# port's kernel steering every frame by the QP number behind its IPv6 and
# UDP headers and srnic's shim (src/port/tun_steer.c), each class
# unwrapping what its queue brings, and part 4's capture checked as IPv6
# frames.
STEER_WIRE=routed6 . "$(dirname "$0")/49-steering.sh"
