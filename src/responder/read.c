/* SPDX-License-Identifier: MIT */
/*
 * Responder, READ and atomic answers (datapath thread).  A READ or atomic
 * whose turn has come (complete.c) becomes a job: the packets of its
 * answer, sent as the scheduler gives the QP turns, each range checked
 * again as it goes (the region may go meanwhile).  A request asked for
 * again is answered again: a READ is idempotent, an atomic is not, so an
 * atomic's answer is the value it found, kept.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "responder_internal.h"

/* The next answer job, cleared, for attempt txid of message msn; the
 * caller saw that one is free and activates the QP once it is filled. */
static struct srnic_read_job *job_new(struct srnic_qp *qp, uint32_t msn,
				      uint32_t txid, uint8_t shift)
{
	struct srnic_read_job *j =
		&qp->rcv.rd_jobs[qp->rcv.rd_tail++ % SRNIC_MAX_RD_ATOMIC];

	memset(j, 0, sizeof(*j));
	j->msn = msn;
	j->txid = txid;
	j->shift = shift;
	return j;
}

bool resp_jobs_full(const struct srnic_qp *qp)
{
	return qp->rcv.rd_tail - qp->rcv.rd_head == SRNIC_MAX_RD_ATOMIC;
}

void resp_read_job_from_slot(struct srnic_engine *eng, struct srnic_qp *qp,
			     const struct srnic_rmsg *s)
{
	struct srnic_read_job *j = job_new(qp, s->msn, s->txid, s->trk.shift);

	j->rkey = s->rkey;
	j->pd = s->pd;
	j->va = s->va;
	j->len = j->end = s->msg_len;
	j->atomic = s->opcode == SRNIC_OP_ATOMIC_REQ;
	j->value = j->atomic ? s->operand[0] : 0;
	srnic_qp_activate(eng, qp);
}

/*
 * Run atomic s on the application's memory, checked again (the region may
 * have gone since the request came): a locked instruction of the CPU, so
 * it is atomic against every other atomic of this node and the CPUs' own.
 * Leaves the old value in s->operand[0] and keeps it for copies of the
 * request.  False when the check fails, or the page is not there (s is
 * failed and NAKed).
 */
bool resp_run_atomic(struct srnic_engine *eng, struct srnic_qp *qp,
		     struct srnic_rmsg *s)
{
	enum srnic_mem_check r = remote_check(eng, qp, s->pd, s->rkey, s->va,
					      SRNIC_ATOMIC_LEN,
					      SRNIC_ACCESS_REMOTE_ATOMIC);
	uint64_t *p = (uint64_t *)(uintptr_t)s->va, old;
	struct srnic_atomic_done *d;

	if (r != SRNIC_MEM_OK) {
		count_access(eng, r);
		resp_fail(eng, qp, s, SRNIC_NAK_ACCESS, SRNIC_WC_REM_ACCESS_ERR);
		return false;
	}
	if (!srnic_mem_atomic(&eng->mem, p,
			      s->flags & SRNIC_F_CAS ? SRNIC_AMO_CAS
						     : SRNIC_AMO_ADD,
			      s->operand[0], s->operand[1], &old)) {
		srnic_page_fault(eng, s->rkey);	/* a page not there */
		resp_fail(eng, qp, s, SRNIC_NAK_ACCESS, SRNIC_WC_REM_ACCESS_ERR);
		return false;
	}
	s->operand[0] = old;
	d = &qp->rcv.atomic_done[qp->rcv.atomic_next++ % SRNIC_MAX_RD_ATOMIC];
	d->msn = s->msn;
	d->value = old;
	d->valid = 1;
	eng->st->atomics++;
	return true;
}

/*
 * A copy of an atomic request that ran already (its answer was lost, or is
 * late): answer with what it found then, never run it again.  One too old
 * to be remembered cannot be outstanding any more (the requester has at
 * most SRNIC_MAX_RD_ATOMIC); it is dropped.
 */
void resp_reanswer_atomic(struct srnic_engine *eng, struct srnic_qp *qp,
			  const struct srnic_pkt *pkt)
{
	const struct srnic_atomic_done *d = NULL;
	struct srnic_read_job *j;
	uint32_t i;

	for (i = 0; i < SRNIC_MAX_RD_ATOMIC; i++)
		if (qp->rcv.atomic_done[i].valid &&
		    qp->rcv.atomic_done[i].msn == pkt->msn)
			d = &qp->rcv.atomic_done[i];
	for (i = qp->rcv.rd_head; d && i != qp->rcv.rd_tail; i++) {
		j = &qp->rcv.rd_jobs[i % SRNIC_MAX_RD_ATOMIC];
		/* (a third-party job's msn is of another QP's messages) */
		if (!j->tp && j->msn == pkt->msn) {
			if (seq_diff(pkt->txid, j->txid) > 0)
				j->txid = pkt->txid;	/* still going out */
			else if (pkt->txid != j->txid)
				eng->st->drops[SRNIC_DROP_STALE_TXID]++;
			return;
		}
	}
	if (!d || resp_jobs_full(qp)) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	j = job_new(qp, pkt->msn, pkt->txid, pkt->stride_shift);
	j->len = j->end = SRNIC_ATOMIC_LEN;
	j->atomic = 1;
	j->value = d->value;
	srnic_qp_activate(eng, qp);
}

/*
 * Whether [va, va + len) is mapped in this process.  A region can stay
 * registered after its program unmapped the memory: UCX's cache of
 * registrations lets go of them a while later, and MPI frees a send
 * buffer as soon as the peer's READ of it has completed.  A request for
 * part of that READ again, from a requester that had not seen the answer
 * yet, then read through the hole and killed the process (e2e/18, once
 * in CI).  Such a request gets no answer the requester still needs, so it
 * pays a system call (msync validates the range and, MS_ASYNC, does
 * nothing else); a first request, and every packet, pays none.  The
 * program can still unmap the memory between this check and the job's
 * last copy: the requester that asked again lacked only packets that were
 * late, they came, the READ completed and MPI freed the buffer while the
 * job was still answering (e2e/18b, four nodes on the tap wire, two
 * ranks each: three ranks died of it in its first run, a segfault in
 * srnic_responder_reads; guarded, a run met three such holes).  So a
 * job asked for again (j->again) copies under the guard of on-demand
 * regions (guard.c), never zero-copy, and a hole ends it as this check
 * does; a first request's job is never guarded: its requester waits for
 * every byte of it, which the program may not free meanwhile.
 */
static bool mapped(uint64_t va, uint64_t len)
{
	static uintptr_t page;
	uintptr_t start;

	if (!len)
		return true;
	if (!page)
		page = (uintptr_t)sysconf(_SC_PAGESIZE);
	start = (uintptr_t)va & ~(page - 1);
	return msync((void *)start, (uintptr_t)(va + len) - start,
		     MS_ASYNC) == 0;
}

/* A job asked for again copies guarded (mapped()): whether it can be,
 * the guard's handler installed. */
static uint8_t guard_again(void)
{
	return srnic_guard_enable() == 0;
}

/*
 * A READ asked for again while its job still answers: true when that is
 * all it needs (a copy of the request, a late one, or a newer attempt the
 * job now answers instead); else *end is what is not on its way yet, and
 * the request needs a job of its own.
 */
static bool reread_joins_job(struct srnic_engine *eng, struct srnic_qp *qp,
			     const struct srnic_pkt *pkt, uint32_t *end)
{
	struct srnic_read_job *j;
	uint32_t i;

	for (i = qp->rcv.rd_head; i != qp->rcv.rd_tail; i++) {
		j = &qp->rcv.rd_jobs[i % SRNIC_MAX_RD_ATOMIC];
		if (j->tp || j->msn != pkt->msn)
			continue;
		if (j->txid == pkt->txid && j->sent <= pkt->msg_off &&
		    *end <= j->end) {
			/* A copy of a request being answered: it will be. */
			eng->st->drops[SRNIC_DROP_DUPLICATE]++;
			return true;
		}
		if (j->txid == pkt->txid && pkt->msg_off < j->sent &&
		    *end > j->sent && *end <= j->end)
			*end = j->sent;	/* the rest is on its way already */
		if (seq_diff(pkt->txid, j->txid) < 0) {
			/* A late request of an older attempt: the requester
			 * no longer listens to its answer. */
			eng->st->drops[SRNIC_DROP_STALE_TXID]++;
			return true;
		}
		if (j->txid != pkt->txid) {
			/* Still answering an older attempt: answer this one
			 * instead (its other ranges get jobs of their own). */
			if (pkt->va != j->va || pkt->rkey != j->rkey ||
			    pkt->msg_len != j->len)
				eng->st->drops[SRNIC_DROP_MALFORMED]++;
			else {
				j->txid = pkt->txid;
				j->sent = pkt->msg_off;
				j->end = *end;
				j->again = guard_again();
			}
			return true;
		}
	}
	return false;
}

/*
 * Answer a READ again: the request is idempotent, the response is not
 * kept.  Asked again for what was answered already (all of it, or the
 * part the requester lacks), the range is checked as the first request
 * was; a region gone since is NAKed, as the first request would have
 * been.
 */
void resp_reread(struct srnic_engine *eng, struct srnic_qp *qp,
		 const struct srnic_pkt *pkt)
{
	uint32_t end = pkt->read_len ? pkt->msg_off + pkt->read_len
				     : pkt->msg_len;
	struct srnic_srq *srq;
	uint32_t pd;

	if (reread_joins_job(eng, qp, pkt, &end))
		return;
	if ((1u << pkt->stride_shift) > eng->payload_max) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	if (!resp_request_pd(eng, qp, pkt, &pd, &srq)) {
		resp_nak(eng, qp, SRNIC_NAK_INVALID, pkt->msn, pkt->txid);
		return;
	}
	/* (a FIFO's program is asked again, for what the requester lacks;
	 * a READ of no bytes asks for its one empty answer) */
	if (resp_fifo_reads(eng, qp, pkt->rkey, pd)) {
		if ((end > pkt->msg_off || !pkt->msg_len) && end <= pkt->msg_len)
			resp_fifo_read_request(eng, qp, pkt->rkey, pkt->msn,
					       pkt->msg_len, pkt->va, pkt->txid,
					       pkt->stride_shift, pkt->msg_off,
					       end);
		return;
	}
	if (resp_jobs_full(qp)) {
		eng->st->drops[SRNIC_DROP_DUPLICATE]++;
		return;
	}
	if (!resp_range_readable(eng, qp, pkt, pd, end,
				 SRNIC_ACCESS_REMOTE_READ)) {
		resp_nak(eng, qp, SRNIC_NAK_ACCESS, pkt->msn, pkt->txid);
		return;
	}
	resp_range_job(eng, qp, pkt, pd, end);
}

bool resp_range_readable(struct srnic_engine *eng, const struct srnic_qp *qp,
			 const struct srnic_pkt *pkt, uint32_t pd, uint32_t end,
			 uint32_t right)
{
	enum srnic_mem_check r = remote_check(eng, qp, pd, pkt->rkey,
					      pkt->va + pkt->msg_off,
					      end - pkt->msg_off, right);

	if (r != SRNIC_MEM_OK) {
		count_access(eng, r);
		return false;
	}
	if (!mapped(pkt->va + pkt->msg_off, end - pkt->msg_off)) {
		eng->st->drops[SRNIC_DROP_UNMAPPED]++;
		return false;
	}
	return true;
}

struct srnic_read_job *resp_range_job(struct srnic_engine *eng,
				      struct srnic_qp *qp,
				      const struct srnic_pkt *pkt, uint32_t pd,
				      uint32_t end)
{
	struct srnic_read_job *j =
		job_new(qp, pkt->msn, pkt->txid, pkt->stride_shift);

	j->rkey = pkt->rkey;
	j->pd = pd;
	j->va = pkt->va;
	j->len = pkt->msg_len;
	j->sent = pkt->msg_off;
	j->end = end;
	j->again = guard_again();
	srnic_qp_activate(eng, qp);
	return j;
}

enum answer {
	ANSWER_SENT,	/* one more packet of the job went out */
	ANSWER_FAILED,	/* the memory is gone: the job ends in a NAK */
	ANSWER_NO_MBUF,	/* try again at the QP's next turn */
};

/* The header of job j's next packet. */
static void answer_header(struct srnic_pkt *pkt, struct srnic_engine *eng,
			  struct srnic_qp *qp, const struct srnic_read_job *j)
{
	uint32_t left = j->end - j->sent;

	srnic_qp_pkt_init(pkt, eng, qp, SRNIC_OP_READ_RESP, j->msn);
	pkt->txid = j->txid;
	pkt->msg_off = j->sent;
	pkt->msg_len = j->len;
	pkt->stride_shift = j->shift;
	pkt->pkt_len = left < (1u << j->shift) ? left : (1u << j->shift);
	if (j->sent + pkt->pkt_len == j->len)
		pkt->flags |= SRNIC_F_LAST;	/* the READ's last byte */
}

/* The payload of job j's next packet into the packet; false (counted)
 * when a page of the region is not there (the key fenced, unless it is
 * on-demand), or a job asked for again met memory unmapped since
 * (mapped()). */
static bool answer_copy(struct srnic_engine *eng,
			const struct srnic_read_job *j, uint8_t *payload,
			uint32_t len)
{
	const void *src = (const void *)(uintptr_t)(j->va + j->sent);

	if (j->atomic) {	/* the 8 bytes as they were */
		memcpy(payload, &j->value, SRNIC_ATOMIC_LEN);
		return true;
	}
	if (j->again ? srnic_guard_copy(payload, src, len)
		     : srnic_mem_copy(&eng->mem, payload, src, len))
		return true;
	if (j->again)
		eng->st->drops[SRNIC_DROP_UNMAPPED]++;
	else
		srnic_page_fault(eng, j->rkey);
	return false;
}

/* Job j's next packet, on port to mac (its requester's, or a third-party
 * job's target's). */
static enum answer answer_packet(struct srnic_engine *eng,
				 struct srnic_qp *qp, struct srnic_read_job *j,
				 int port, const uint8_t *mac)
{
	const void *src = (const void *)(uintptr_t)(j->va + j->sent);
	enum srnic_mem_check r = SRNIC_MEM_OK;
	struct srnic_pkt pkt;
	struct rte_mbuf *m;
	uint8_t *payload;

	if (j->tp)
		resp_tp_header(&pkt, j);
	else
		answer_header(&pkt, eng, qp, j);
	/* The region may have gone since the request was checked (an
	 * atomic's answer is the value it found, kept). */
	if (pkt.pkt_len && !j->atomic)
		r = srnic_mem_check_remote(&eng->mem, j->rkey, j->pd,
					   qp->q.qpn, j->va + j->sent,
					   pkt.pkt_len,
					   SRNIC_ACCESS_REMOTE_READ |
						   (j->tp ? SRNIC_ACCESS_THIRD_PARTY
							  : 0));
	if (r != SRNIC_MEM_OK) {
		count_access(eng, r);
		return ANSWER_FAILED;
	}
	if (!j->atomic && !j->again && pkt.pkt_len >= SRNIC_ZC_MIN &&
	    eng->node->port[port].zero_copy && srnic_mem_zero_copy_ok(&eng->mem)) {
		/* Zero-copy: straight out of the region. */
		m = srnic_pkt_alloc_ext(eng, &pkt, mac, port, src);
		if (!m)
			return ANSWER_NO_MBUF;
	} else {
		m = srnic_pkt_alloc(eng, &pkt, mac, port, &payload);
		if (!m)
			return ANSWER_NO_MBUF;
		if (!answer_copy(eng, j, payload, pkt.pkt_len)) {
			rte_pktmbuf_free(m);
			return ANSWER_FAILED;
		}
	}
	srnic_port_tx(eng, port, m);
	j->sent += pkt.pkt_len;
	return ANSWER_SENT;
}

unsigned srnic_responder_reads(struct srnic_engine *eng, struct srnic_qp *qp,
			       unsigned budget)
{
	unsigned n = 0;

	while (n < budget && qp->rcv.rd_head != qp->rcv.rd_tail) {
		struct srnic_read_job *j =
			&qp->rcv.rd_jobs[qp->rcv.rd_head % SRNIC_MAX_RD_ATOMIC];
		const uint8_t *mac = NULL;
		bool gone = false;
		int port = j->tp ? resp_tp_port(eng, j, &mac, &gone)
				 : srnic_qp_pick_port(eng, qp);

		if (port < 0 && j->tp) {
			/* (a target gone: the job goes, its controller asks
			 * again or gives up) */
			if (!gone)
				break;
			qp->rcv.rd_head++;
			continue;
		}
		if (port < 0) {
			/* Nobody to answer: drop the jobs; the requester asks
			 * again (READ is idempotent) or gives up. */
			if (!srnic_qp_peer_reachable(eng, qp))
				qp->rcv.rd_head = qp->rcv.rd_tail;
			break;
		}
		switch (answer_packet(eng, qp, j, port,
				      j->tp ? mac : qp->peer->mac[port])) {
		case ANSWER_NO_MBUF:
			goto out;
		case ANSWER_FAILED:
			if (j->tp)
				resp_tp_nak(eng, qp, j, SRNIC_NAK_ACCESS);
			else
				resp_nak(eng, qp, SRNIC_NAK_ACCESS, j->msn,
					 j->txid);
			qp->rcv.rd_head++;
			continue;
		case ANSWER_SENT:
			n++;
			if (j->sent == j->end)
				qp->rcv.rd_head++;
			break;
		}
	}
out:
	if (qp->rcv.rd_head == qp->rcv.rd_tail)
		resp_advance(eng, qp);	/* a READ may wait for a free job */
	return n;
}
