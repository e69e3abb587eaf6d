/* SPDX-License-Identifier: MIT */
/*
 * srnic's own verbs: what a srnic device offers beyond libibverbs, in the
 * manner of mlx5dv and efadv.  Link with -lsrnic (pkg-config srnic): the
 * library is the provider libibverbs loads for srnic devices, so these
 * calls work on the very objects ibv_* calls made.
 *
 * Every call takes an object of a srnic device and fails with EOPNOTSUPP
 * for one of any other device; calls that return a pointer return NULL
 * with errno set.
 */
#ifndef SRNIC_H
#define SRNIC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether device is a srnic device (its calls below work on it). */
bool srnic_is_srnic_device(struct ibv_device *device);

#define SRNIC_NODE_NAME_MAX 32

/* What srnic_query_device says: the node the context belongs to.
 * comp_mask asks for the parts past dev_ports (SRNIC_DEVICE_ATTR_*); a
 * caller built before them asks for none, and its smaller struct is
 * left as it is past dev_ports. */
enum {
	SRNIC_DEVICE_ATTR_IPV6 = 1 << 0,	/* has_ipv6, ipv6 */
};
struct srnic_device_attr {
	uint64_t comp_mask;		/* SRNIC_DEVICE_ATTR_* asked for */
	char node[SRNIC_NODE_NAME_MAX];	/* the node's name ("a") */
	uint32_t ipv4;			/* the node's address, host order; an
					 * IPv6 node's id (made of its
					 * address, in 240.0.0.0/4), which
					 * srnic_group_member names it by */
	uint32_t nports;		/* Ethernet ports it stripes over */
	uint32_t ports_up;		/* bit p: port p's link is up */
	uint32_t mtu;			/* largest payload of a frame */
	uint32_t running;		/* the datapath runs: it starts with
					 * the context's first CQ, QP, SRQ or
					 * address handle; before, every
					 * configured port counts as up and
					 * the process as not attached */
	uint32_t attached;		/* the node is srnicd's, and this
					 * process one of those attached */
	uint32_t slot;			/* attached: the process's slot */
	/* The node's adapters (docs/key-migration.md): this context's is
	 * srnic<device>, of ndev, and has the ports of dev_ports (a bit a
	 * port). */
	uint32_t device;
	uint32_t ndev;
	uint32_t dev_ports;
	/* SRNIC_DEVICE_ATTR_IPV6: whether the node is an IPv6 one (its
	 * configuration's ipv6), and its address, GID 1 */
	uint32_t has_ipv6;
	uint8_t ipv6[16];
};

/*
 * The node behind context: 0, or EOPNOTSUPP (not a srnic context), or
 * EINVAL (attr->comp_mask asks for what this library does not know).
 */
int srnic_query_device(struct ibv_context *context,
		       struct srnic_device_attr *attr);

/*
 * Multicast and broadcast RDMA WRITE (docs/multicast-rdma.md).  A node
 * joins group g (0 to SRNIC_MAX_GROUPS - 1) by registering a region for
 * it; one multicast WRITE of a UD QP then lands at the same offset of the
 * group's region on every other node that holds one, and completes (in
 * the QP's send CQ, as IBV_WC_RDMA_WRITE) once each of them has all of
 * it.  Group 0 is broadcast: its packets go to every node.
 */
#define SRNIC_MAX_GROUPS 64
#define SRNIC_GROUP_BROADCAST 0

/*
 * A region of pd for group g: a multicast WRITE's offset counts from
 * addr, and it must lie inside length.  access must include
 * IBV_ACCESS_REMOTE_WRITE (and, as verbs wants, LOCAL_WRITE).  One region
 * per group per node: EBUSY if a process of the node has one.  It is an
 * ordinary region otherwise (ibv_dereg_mr ends it, and the node's
 * membership with it).  Starts the context's datapath, which places the
 * group's packets.  NULL with errno set on failure.
 */
struct ibv_mr *srnic_reg_mr_group(struct ibv_pd *pd, void *addr,
				  size_t length, int access, unsigned group);

/*
 * Completions at a member (cq NULL: none, the default): each multicast
 * WRITE that lands whole in group region mr (from srnic_reg_mr_group)
 * makes one completion in cq, once, whatever was resent: opcode
 * IBV_WC_RECV_RDMA_WITH_IMM, wr_id the WRITE's offset in the region,
 * byte_len its length, src_qp the sending QP, imm_data the group
 * (network order), qp_num 0xFFFFFF (no QP of this node).  The packet that
 * completes a message waits for room in cq (the sender resends it): a
 * member that never polls stalls, and its senders give it up.  cq is in
 * use while it is named (ibv_destroy_cq: EBUSY).  0, EOPNOTSUPP, EINVAL
 * (mr is no group region of this process, cq another context's).
 */
int srnic_group_notify(struct ibv_mr *mr, struct ibv_cq *cq);

/* A node, as the calls below name it. */
struct srnic_group_member {
	uint32_t ipv4;		/* its address, host order (an IPv6 node's
				 * id: srnic_device_attr's ipv4) */
	char node[16];		/* its name */
	int status;		/* srnic_mc_failed: the enum ibv_wc_status it
				 * failed with; else 0 */
};

/*
 * The other nodes that hold a region for group (as their HELLOs say) and
 * that a port reaches: the members a multicast WRITE posted now goes to.
 * Returns how many there are (the first max of them are in members), or
 * -1 with errno set (EOPNOTSUPP, EINVAL).
 */
int srnic_query_group(struct ibv_context *context, unsigned group,
		      struct srnic_group_member *members, int max);

/* A multicast RDMA WRITE: the bytes of sg_list to offset in every
 * member's region for group. */
struct srnic_mc_write_wr {
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	unsigned int send_flags;	/* IBV_SEND_SIGNALED, or 0 */
	unsigned int group;
	uint64_t offset;
};

/*
 * Post a multicast WRITE on qp, a UD QP (in RTS), behind its other sends.
 * One is in flight at a time; the QP's datagrams go on around it and
 * complete in order behind it.  If a member fails it (it stops answering,
 * restarts, or its region is too small), the WRITE completes with an
 * error (IBV_WC_RETRY_EXC_ERR, IBV_WC_REM_ACCESS_ERR), the other members
 * have the data all the same, and the send queue stops as after any failed
 * UD send (a move back to RTS resumes it).  0 or an errno, as
 * ibv_post_send: EINVAL (not a UD QP, a bad group, flags, SGE count or
 * length, an offset range that wraps), ENOMEM (the send queue is full).
 */
int srnic_post_mc_write(struct ibv_qp *qp, const struct srnic_mc_write_wr *wr);

/*
 * The members qp's last failed multicast WRITE gave up on (*wr_id: its
 * work request's id), each with its status.  Returns how many (0: none
 * has failed), the first max of them in members; -1 with errno set
 * (EOPNOTSUPP).
 */
int srnic_mc_failed(struct ibv_qp *qp, uint64_t *wr_id,
		    struct srnic_group_member *members, int max);

/*
 * Services (docs/failover.md): an address one member node holds at a
 * time, taken over by another when it fails.  Clients connect an RC QP to
 * the service's GID (::ffff:ADDRESS) and QP number SRNIC_SVC_QPN(slot);
 * the QP follows the holder through takeovers, resending what was not
 * acknowledged, with no completion lost or doubled.
 */
#define SRNIC_SVC_SLOTS 256
#define SRNIC_SVC_QPN(slot) (0xF00u + (slot))

/*
 * A member's QP of slot `slot` of the service at svc_ipv4 (host order),
 * which the node's configuration makes it a member of: QP number
 * SRNIC_SVC_QPN(slot) on every member.  A UD QP is an ordinary one then:
 * datagrams to the service's GID and that number reach the holder's.  An
 * RC QP (no SRQ) is made as ibv_create_qp makes one; the program takes it
 * to INIT, with the access
 * flags it grants, and posts its receives.  It waits there: when this node
 * holds the service and a client's QP connects, or comes over after a
 * takeover, srnic binds it to that client, moves it to RTS and reports
 * IBV_EVENT_COMM_EST.  A member that stops holding the service fails its
 * bound QPs (IBV_EVENT_QP_FATAL).  NULL with errno set: EOPNOTSUPP,
 * EINVAL (neither RC nor UD, an SRQ, a slot out of range, not a member
 * of that service), EBUSY (this node has the slot's QP already).
 */
struct ibv_qp *srnic_svc_create_qp(struct ibv_pd *pd,
				   struct ibv_qp_init_attr *attr,
				   uint32_t svc_ipv4, unsigned slot);

/*
 * A member's region of slot `slot` of the service at svc_ipv4: an
 * ordinary region (ibv_dereg_mr ends it) whose key is the same for that
 * service and slot on every member, so a client's WRITEs and READs go on
 * after a takeover.  One per slot on a node (the slots are the node's,
 * whatever the service): EBUSY for a second.  NULL with errno set:
 * EOPNOTSUPP, EINVAL (a slot past the last, not a member of the service),
 * EBUSY, and ibv_reg_mr's errors.
 */
struct ibv_mr *srnic_svc_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				int access, uint32_t svc_ipv4, unsigned slot);

/*
 * failback=manual (seed 000 para. 56): a better member that comes back
 * waits while the holder's program hands the service over.  On the
 * holder, the program freezes its connections: srnic_svc_freeze makes
 * every RC QP of the service it has bound (and any it binds later) take
 * no new request (the requests before are in its receive queue or done,
 * and acknowledged; a client sends what was not acknowledged again, to
 * the next holder).  It answers what it
 * took, waits for its sends to complete, gives its state to the better
 * member's program (its own business: a file, a socket), and calls
 * srnic_svc_handover: this node stops holding the service, the better
 * member claims it at once, the frozen QPs fail (IBV_EVENT_QP_FATAL),
 * and the clients' QPs resync with the new holder.
 *
 * srnic_svc_freeze: the QPs frozen (0 or more), or a negative errno:
 * -ENOENT (this node is no member of the service, or the device has not
 * started), -EINVAL (it does not hold it), -EOPNOTSUPP.
 * srnic_svc_handover: 0 once this node holds it no more; EAGAIN (no
 * better member is heard: nobody would take it), EINVAL, ENOENT,
 * ETIMEDOUT, EOPNOTSUPP.  srnic_svc_thaw undoes a freeze (a hand-over
 * that cannot happen: the frozen clients would run out of retries);
 * answers as srnic_svc_freeze.  A hand-over or a new term thaws too.
 */
int srnic_svc_freeze(struct ibv_context *ctx, uint32_t svc_ipv4);
int srnic_svc_thaw(struct ibv_context *ctx, uint32_t svc_ipv4);
int srnic_svc_handover(struct ibv_context *ctx, uint32_t svc_ipv4);

/*
 * Conditional RDMA (docs/conditional-rdma.md; seed 002 l.372-390).  A
 * conditional queue counts the completions of the send WRs posted as its
 * components (srnic_post_send_counted), successes and failures apart.  A
 * conditional WR (srnic_post_cond) waits in its QP's send queue until its
 * condition on the queue holds, then goes as any WR would: it starts in
 * the datapath iteration that completed the component that made the
 * condition hold, with no round trip through the program.  The WRs
 * posted behind it on its QP wait with it (as behind CORE-Direct's WAIT):
 * give a conditional WR a QP of its own where that matters.  Components
 * and conditional WRs may be on any RC or UC QP of the queue's PD (not
 * UD, not XRC).  A component counts whether or not it is signaled; one
 * flushed counts as failed.
 */
struct srnic_condq;

enum srnic_cond_op {
	SRNIC_COND_COUNT_GE,	/* the successes have reached value */
	SRNIC_COND_FAILED_GE,	/* the failures have reached value */
};

/* A conditional queue of pd's QPs, its counts 0; at most 64 a process.
 * Starts the context's datapath.  NULL with errno set: EOPNOTSUPP, ENOMEM,
 * and what starting the datapath gives. */
struct srnic_condq *srnic_condq_create(struct ibv_pd *pd);

/* The queue goes.  A conditional WR still waiting on it fails: its QP
 * enters the error state and its WRs complete flushed.  Components that
 * complete afterwards count nowhere.  0 or EINVAL. */
int srnic_condq_destroy(struct srnic_condq *q);

/* Set the count of successes to count and clear the failures (0 to start
 * a new round); conditional WRs whose condition holds now go.  0 or
 * EINVAL. */
int srnic_condq_set(struct srnic_condq *q, uint64_t count);

struct srnic_condq_attr {
	uint64_t count;		/* components that completed successfully */
	uint64_t failed;	/* ... with an error, or flushed */
	uint64_t fired;		/* conditional WRs that found their
				 * condition held and went */
};

/* 0 or EINVAL. */
int srnic_condq_query(struct srnic_condq *q, struct srnic_condq_attr *attr);

/* Post wr's list on qp as ibv_post_send does, each WR a component of q:
 * its completion counts into q.  Errors as ibv_post_send's, and EINVAL
 * for a QP that is not RC or UC, or not of q's PD; EOPNOTSUPP for
 * another provider's QP. */
int srnic_post_send_counted(struct ibv_qp *qp, struct ibv_send_wr *wr,
			    struct srnic_condq *q, struct ibv_send_wr **bad_wr);

/* Post wr's list on qp as ibv_post_send does, each WR conditional: it
 * starts once op holds on q against value.  Errors as
 * srnic_post_send_counted's, and EINVAL for an unknown op. */
int srnic_post_cond(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct srnic_condq *q, enum srnic_cond_op op,
		    uint64_t value, struct ibv_send_wr **bad_wr);

/*
 * Half-RDMA (docs/half-rdma.md; seed 002 l.262-310): one side does RDMA,
 * the other reads packets from a FIFO.  A FIFO is a ring in this
 * process's memory with a remote key: every packet of an ordinary RDMA
 * WRITE (any va, any length) to that key is appended to the ring as a
 * record (its header below, then its bytes), exactly once, in whatever
 * order the packets arrive; the program takes the records in ring order,
 * reducing or unpacking them as they come.  A packet the ring has no room
 * for is dropped (counted as full) and sent again by its requester once
 * the program has made room, so a WRITE larger than the ring completes
 * as the program keeps taking records.  A WRITE with immediate data
 * takes a receive as usual; a WRITE of no bytes leaves no record.
 */
struct srnic_fifo;

/* What a record is (its valid word): a packet of a WRITE to the FIFO's
 * key, or of the answer to a READ this node posted into the FIFO
 * (srnic_post_fifo_read). */
#define SRNIC_FIFO_REC_WRITE 0x5eed0001u
#define SRNIC_FIFO_REC_READ 0x5eed0003u
/* ... or a peer's READ of the FIFO's key, for the program to answer
 * (srnic_fifo_read_reply; a FIFO made with SRNIC_FIFO_TAKE_READS): the
 * header's msn is the READ's, msg_len its length, msg_off the first byte
 * asked for, and a struct srnic_fifo_read_req follows. */
#define SRNIC_FIFO_REC_READ_REQ 0x5eed0004u

struct srnic_fifo_rec {
	uint32_t valid;		/* SRNIC_FIFO_REC_WRITE, _READ or
				 * _READ_REQ */
	uint32_t pkt_len;	/* the bytes that follow this header */
	uint32_t qp_num;	/* the local QP it came on */
	uint32_t src_qp;	/* ... from this QP of its peer */
	uint32_t msn;		/* its message's number on that QP; a
				 * READ's answer: the READ's tag */
	uint32_t msg_len;	/* the message's bytes */
	uint64_t msg_off;	/* where in the message the bytes were */
	/* pkt_len bytes follow */
};

/* What a READ request record asks for: length bytes from the header's
 * msg_off, of what the requester named address va (the program decides
 * what that means: an object, an offset, a key of its own). */
struct srnic_fifo_read_req {
	uint64_t va;
	uint32_t length;
	uint32_t txid;		/* (the attempt; the answer carries it) */
	uint8_t shift;		/* (the requester's packet size) */
	uint8_t pad[7];
};

#define SRNIC_FIFO_MIN (64u << 10)
#define SRNIC_FIFO_MAX (1ull << 34)

/* A FIFO of pd with a ring of bytes bytes (a multiple of 64, 64 KiB to
 * 16 GiB); WRITEs to srnic_fifo_rkey() on any QP of pd land in it.
 * Starts the context's datapath.  NULL with errno set: EOPNOTSUPP,
 * EINVAL, ENOMEM. */
struct srnic_fifo *srnic_fifo_create(struct ibv_pd *pd, size_t bytes);
/* As srnic_fifo_create; with SRNIC_FIFO_TAKE_READS in flags, READs of
 * the FIFO's key (any address, any length) come as request records for
 * the program to answer (the seed's half-receive READ). */
#define SRNIC_FIFO_TAKE_READS 0x1u
struct srnic_fifo *srnic_fifo_create_ex(struct ibv_pd *pd, size_t bytes,
					unsigned int flags);
/*
 * The answer to a READ request record (SRNIC_FIFO_REC_READ_REQ) that
 * srnic_fifo_next gave, before srnic_fifo_done: the bytes it asks for
 * (its srnic_fifo_read_req's length), gathered from iov, sent on the QP
 * the request came on before the call returns (the buffers may be
 * reused at once).  A request comes again for a part the requester did
 * not get (a loss): the same bytes must be the answer, as a READ of
 * memory would give, for as long as the reader may ask (the program's
 * own protocol says when it is done).  The reader waits for the answer
 * as for any READ's, (retry_cnt + 1) times its QP's timeout at most.
 * 0, or EINVAL (not such a record, the iovec's bytes not the length
 * asked, a record spoiled), ENOENT (the QP is gone, or does not answer
 * READs of that peer any more), EFAULT (the iovec could not be read),
 * ENOBUFS (the wire took none of it for 100 ms: the reader asks for the
 * rest again), EOPNOTSUPP.
 */
int srnic_fifo_read_reply(struct srnic_fifo *fifo,
			  const struct srnic_fifo_rec *rec,
			  const struct iovec *iov, int iovcnt);
/* Nothing is appended once it returns; then the ring goes.  0, EINVAL. */
int srnic_fifo_destroy(struct srnic_fifo *fifo);
uint32_t srnic_fifo_rkey(const struct srnic_fifo *fifo);

/* The next record (its bytes at rec + 1), or NULL while there is none;
 * it stays the next until srnic_fifo_done.  One consumer thread. */
const struct srnic_fifo_rec *srnic_fifo_next(struct srnic_fifo *fifo);
/* The record srnic_fifo_next gave is done with: its room goes back. */
void srnic_fifo_done(struct srnic_fifo *fifo);

struct srnic_fifo_attr {
	uint64_t size;		/* the ring's bytes */
	uint64_t used;		/* ... holding records not done with */
	uint64_t records;	/* records appended, ever */
	uint64_t full;		/* packets dropped for want of room, ever
				 * (each sent again) */
};

/* 0, EINVAL. */
int srnic_fifo_query(const struct srnic_fifo *fifo,
		     struct srnic_fifo_attr *attr);

/*
 * Half-RDMA's sending half: a WRITE whose bytes come from memory nobody
 * registered, gathered from an iovec (a message a protocol assembles
 * from pieces), to (rkey, remote_addr) of the QP's peer: a FIFO's key,
 * or any region's.  The bytes are copied into a staging ring of the QP's
 * before the call returns (the buffers may be reused at once), and go as
 * one ordinary WRITE, which completes as IBV_WC_RDMA_WRITE.  The ring
 * (SRNIC_FIFO_STAGE_MB, default 8 MiB, registered at the QP's first such
 * WRITE) gets its room back as the QP's send queue completes.  RC and UC
 * QPs.  0, or EINVAL (another QP type, flags other than
 * IBV_SEND_SIGNALED and IBV_SEND_FENCE, longer than the ring, a range
 * that wraps, the QP's state as ibv_post_send), ENOMEM (the send queue or
 * the ring is full: poll completions and post again), EOPNOTSUPP.
 */
struct srnic_fifo_write_wr {
	uint64_t wr_id;
	const struct iovec *iov;
	int iovcnt;
	unsigned int send_flags;
	uint32_t rkey;
	uint64_t remote_addr;
};

int srnic_post_fifo_write(struct ibv_qp *qp,
			  const struct srnic_fifo_write_wr *wr);

/*
 * Half-RDMA's READ into a FIFO: an RDMA READ of length bytes at (rkey,
 * remote_addr) of the RC QP's peer whose answer is not placed in memory
 * but appended to fifo (of the QP's PD), a record a packet as they come,
 * in any order: valid SRNIC_FIFO_REC_READ, msn the tag, msg_off where in
 * the READ its bytes were, msg_len the READ's length, src_qp the peer's
 * QP.  The program copies or reduces them where it wants them (the
 * seed's half-send READ).  The READ completes as IBV_WC_RDMA_READ once
 * every packet is in the ring; a packet the ring had no room for is
 * asked for again once the answer stops coming (as a lost one is), and
 * spends none of the QP's retries: a ring kept full makes the READ slow,
 * one never emptied keeps it waiting.  0, or EINVAL (not an RC QP, a FIFO of another
 * PD, flags other than IBV_SEND_SIGNALED and IBV_SEND_FENCE, a length
 * over 2 GiB, the QP's state as ibv_post_send), ENOMEM (the send queue is
 * full), EOPNOTSUPP.
 */
struct srnic_fifo_read_wr {
	uint64_t wr_id;
	unsigned int send_flags;
	struct srnic_fifo *fifo;
	uint32_t tag;		/* each record's msn */
	uint32_t rkey;
	uint64_t remote_addr;
	uint32_t length;
};

int srnic_post_fifo_read(struct ibv_qp *qp,
			 const struct srnic_fifo_read_wr *wr);

/*
 * Third-party RDMA (docs/third-party.md): a controller has a data source
 * WRITE a range of its memory straight into a target's, and hears of it
 * as of its own WRITE.  The controller has RC QPs to both; the WRITE is a
 * message of its QP to the target (to_target), ordered among that QP's
 * other messages, and completes there (IBV_WC_RDMA_WRITE) once the target
 * has every byte.  The source sends the bytes, on its own ports: the
 * controller's carry the request and the target's ACKs, not the data.
 *
 * The source's region must allow it: IBV_ACCESS_REMOTE_READ and
 * srnic_mr_allow_third_party (a later ibv_rereg_mr takes the right away),
 * and its QP to the controller (to_source's peer) remote read access;
 * otherwise the WRITE completes with IBV_WC_REM_ACCESS_ERR.  The target's
 * region needs remote write, as for any WRITE to it.  The source and the
 * target must reach each other (their nodes on one wire).
 */
struct srnic_3p_wr {
	uint64_t wr_id;
	uint32_t length;	/* bytes, at most 2^31 */
	unsigned int send_flags; /* IBV_SEND_SIGNALED, IBV_SEND_FENCE */
	uint32_t src_rkey;	/* the source's region, as its rkey */
	uint64_t src_addr;
	uint32_t dst_rkey;	/* the target's region, as its rkey */
	uint64_t dst_addr;
};

/* Post it on to_target (an RC QP in RTS), naming to_source (an RC QP of
 * the same context; gone or out of RTS when the WRITE starts, it fails
 * with IBV_WC_LOC_QP_OP_ERR).  0, or an errno as ibv_post_send: EINVAL
 * (the QPs, flags, a range that wraps, to_target's state), ENOMEM. */
int srnic_post_3p(struct ibv_qp *to_target, struct ibv_qp *to_source,
		  const struct srnic_3p_wr *wr);
/* The source's consent: region mr (with IBV_ACCESS_REMOTE_READ) may be
 * sent to a third node at a controller's word.  0, EINVAL (no remote
 * read), EBUSY (memory windows bound in it), EOPNOTSUPP. */
int srnic_mr_allow_third_party(struct ibv_mr *mr);

/*
 * The system-wide protection table (seed 004; docs/published-keys.md): a
 * program publishes a region under a name of its choosing, and every node
 * integrated with this one keeps a copy, so a program there finds the
 * region's key, address and rights by the node's GID and the name,
 * without a message to that node.  A restarted node's table is emptied
 * on every peer as soon as the peer hears of the restart, and its new
 * one comes only after integration (BOOTING, BOOT_ACK, RDMA_READY): no
 * lookup returns a region of a process the node had before.  A region
 * deregistered or unpublished, or whose process ended, leaves the table
 * (re-registered, its entry follows its new range and remote rights);
 * peers hear of each change within milliseconds (until then a lookup
 * there may still return it as it was, and a request the region no longer
 * allows fails with IBV_WC_REM_ACCESS_ERR).  A node publishes up to 32
 * regions.
 */
struct srnic_published_mr {
	uint32_t rkey;
	uint32_t access;	/* IBV_ACCESS_REMOTE_WRITE, _READ, _ATOMIC */
	uint64_t addr;		/* its first byte, in the publisher's space */
	uint64_t length;
};

/* mr (with a remote right) under name (not 0), for every node.  0,
 * EINVAL (name 0, no remote right), EEXIST (this node has published a
 * region under name), ENOSPC (the node's 32), EOPNOTSUPP. */
int srnic_mr_publish(struct ibv_mr *mr, uint32_t name);
/* Its publication withdrawn: 0, ENOENT (not published), EOPNOTSUPP. */
int srnic_mr_unpublish(struct ibv_mr *mr);
/* The region node (its RoCE v2 GID, ::ffff:IPv4, or an IPv6 node's
 * IPv6 address; this node's own too)
 * published under name.  0, ENOENT (none, or the node is not integrated
 * with this one: not yet, or restarting), EINVAL, EOPNOTSUPP, or why the
 * device could not start (as ibv_create_cq). */
int srnic_mr_lookup(struct ibv_context *context, const union ibv_gid *node,
		    uint32_t name, struct srnic_published_mr *out);

/*
 * The registration cache (docs/registration-cache.md): a region for a
 * buffer a program sends from (or lets peers at) without keeping it
 * registered.  srnic_mr_cache_get returns a region that covers [addr, addr
 * + length) with at least access (IBV_ACCESS_LOCAL_WRITE, REMOTE_WRITE,
 * REMOTE_READ, REMOTE_ATOMIC; 0: local reads only): a whole fragment of
 * SRNIC_MR_CACHE_FRAG_MB (16) MiB, aligned, registered once and handed out
 * again for any buffer inside it, so its keys may name memory beyond the
 * buffer; with remote rights, a region of the buffer's pages only, and
 * on-demand (a peer's access to memory unmapped since fails its message).
 * Give it back with srnic_mr_cache_put; a region nobody holds is
 * deregistered after SRNIC_MR_CACHE_IDLE_S (10) seconds idle, or once its
 * memory is unmapped (munmap, mremap, shmdt), which libsrnic-preload.so,
 * preloaded by ./srnic exec, tells the cache of: such a region is never
 * handed out again.  The cache is the process's, under a lock of its own.
 */
struct ibv_mr *srnic_mr_cache_get(struct ibv_pd *pd, void *addr,
				  size_t length, int access);
/* 0, EINVAL (not a region the cache handed out and not put back yet),
 * EOPNOTSUPP. */
int srnic_mr_cache_put(struct ibv_mr *mr);

struct srnic_mr_cache_attr {
	uint64_t gets;		/* srnic_mr_cache_get calls that were served */
	uint64_t hits;		/* ... from a region cached already */
	uint64_t registrations;	/* regions registered */
	uint64_t deregistrations;
	uint64_t invalidated;	/* regions whose memory was unmapped */
	uint64_t regions;	/* held now */
	uint64_t cached_bytes;	/* ... their bytes */
	uint64_t frag_bytes;	/* the fragment */
	uint64_t idle_ms;	/* the idle time before deregistration */
	uint32_t hooked;	/* the preload library's unmap hook is in */
};

/* The process's cache: 0, EINVAL, EOPNOTSUPP. */
int srnic_mr_cache_query(struct ibv_context *context,
			 struct srnic_mr_cache_attr *attr);

/*
 * Early completion events (seed 002's early interrupt): cq's event, once
 * armed, comes as a message that will complete into it begins to arrive
 * (its first packet; RC QPs), not when it has landed, so that the
 * program's wake-up overlaps the landing; until that message's
 * completion is polled, any poll of cq that finds nothing waits for it,
 * running the datapath for spin_us (ibv_poll_cq's wait does so while cq
 * is armed for any completion too, its arm lent to the wait: completions
 * landed meanwhile make no event but are the poll's, and any the poll
 * leaves make the event once it returns) and then giving the CPU up
 * between looks (a second at most).  0: events as
 * messages complete again.  The message's completion makes no event of
 * its own (unless a poll gave up waiting for it): a program must poll
 * after each event, as verbs asks, and may arm the CQ again before that
 * poll.  Not for a CQ armed for
 * solicited completions only, nor a moderated one.
 * 0, EOPNOTSUPP, or EINVAL (cq has no completion channel, or spin_us is
 * over SRNIC_MAX_EARLY_US).  cq_early_us in the node's configuration
 * does it for every CQ made with a channel (docs/interrupts.md).
 */
#define SRNIC_MAX_EARLY_US 10000
int srnic_cq_set_early(struct ibv_cq *cq, unsigned spin_us);

/*
 * Completion at both ends (seed 002): an RDMA WRITE or READ posted
 * (ibv_post_send) on an RC QP with SRNIC_SEND_REMOTE_NOTIFY in send_flags
 * gives its target a completion too, if the target QP accepts them
 * (srnic_qp_accept_notify(qp, 1); 0, EOPNOTSUPP, or EINVAL for a QP not
 * RC): in the target QP's receive CQ, without consuming a receive WQE;
 * status IBV_WC_SUCCESS, byte_len the operation's length, wr_id the
 * remote address it wrote or read at, qp_num the target QP, src_qp the
 * requester's; an armed CQ's event as any completion.
 *  - A WRITE's, opcode SRNIC_WC_REMOTE_WRITE: once the whole WRITE has
 *    landed, in the order of the QP's other messages.  The writer's own
 *    completion is as ever.
 *  - A READ's, opcode SRNIC_WC_REMOTE_READ: once the whole answer has
 *    landed at the reader, which says so (the target's memory will not
 *    be read for it again: the program may reuse it); in the order of
 *    the QP's other such READs, not of its other messages.  The reader's
 *    own completion comes after the target's: the target answers that it
 *    completed the READ, and a reader that hears no answer says it again,
 *    up to its QP's retry_cnt timeouts (then IBV_WC_RETRY_EXC_ERR, the
 *    target's completion made or not, as a WRITE's landing then).
 * A target that does not accept them refuses the operation (the
 * requester's completes with IBV_WC_REM_INV_REQ_ERR).  An srnic older
 * than the flag ignores it on a WRITE (the WRITE completes at the writer
 * only) and drops such a READ as malformed (it fails at the reader when
 * its retries run out).  ibv_post_send fails with EINVAL for the flag on
 * other operations or QP types; the ibv_wr_* API takes no such flag.
 * Not solicited, nor early (srnic_cq_set_early): an event of a CQ armed
 * for any completion.
 */
#define SRNIC_SEND_REMOTE_NOTIFY (1u << 30)
/* (receives' values, opcode & IBV_WC_RECV set: verbs leaves
 * IBV_WC_DRIVER1-3 to providers) */
#define SRNIC_WC_REMOTE_WRITE IBV_WC_DRIVER1
#define SRNIC_WC_REMOTE_READ IBV_WC_DRIVER2
int srnic_qp_accept_notify(struct ibv_qp *qp, int accept);

#ifdef __cplusplus
}
#endif

#endif
