# Steering on the tap wire: e2e/49's parts 1-4 on a tap testbed with
# queues = 4, each tap port's kernel steering every frame to the queue of
# its QP's class (an eBPF program of the tap's: src/port/tun_steer.c).
STEER_WIRE=tap . "$(dirname "$0")/49-steering.sh"
