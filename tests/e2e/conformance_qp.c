/* SPDX-License-Identifier: MIT */
/*
 * The QP state machine, for RC, UC and UD: every (from, to) pair of
 * states, from every state ibv_modify_qp can reach.  For a transition the
 * verbs state machine has, leaving out any one required attribute, or
 * adding any one it does not allow, fails EINVAL and leaves the state
 * alone; each optional attribute is accepted and read back; exactly the
 * required ones succeed, and ibv_query_qp then reports the new state and
 * every attribute set so far.  A transition it does not have fails EINVAL.
 *
 * The reference is the InfiniBand specification's table of QP attributes
 * per transition (ibv_modify_qp(3) lists the required ones), as the Linux
 * kernel's ib_modify_qp_is_ok() applies it for every hardware provider;
 * rule_of() below is that table, written out for the three types.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "conformance.h"

struct rule {
	int valid;
	int req;	/* besides IBV_QP_STATE */
	int opt;
};

#define RTR_UC (IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN)
#define RTR_RC (RTR_UC | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RTS_RC                                                              \
	(IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |                 \
	 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC)
#define SQD_RC                                                              \
	(IBV_QP_PORT | IBV_QP_AV | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |       \
	 IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |                         \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |  \
	 IBV_QP_PKEY_INDEX | IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE)
#define SQD_UC                                                              \
	(IBV_QP_AV | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |                 \
	 IBV_QP_PKEY_INDEX | IBV_QP_PATH_MIG_STATE)
/* Alternate paths: RoCE has none (the kernel refuses them on a RoCE
 * port), and a device without IBV_DEVICE_AUTO_PATH_MIG may refuse them. */
#define APM_BITS (IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE)

/* What ibv_query_qp can be checked for: the attributes that are values. */
#define READABLE                                                            \
	(IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY |                     \
	 IBV_QP_ACCESS_FLAGS | IBV_QP_AV | IBV_QP_PATH_MTU |                  \
	 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN |                    \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MAX_QP_RD_ATOMIC |                \
	 IBV_QP_MIN_RNR_TIMER | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |           \
	 IBV_QP_RNR_RETRY)

static const struct {
	int bit;
	const char *name;
} attr_bits[] = {
	{IBV_QP_CUR_STATE, "CUR_STATE"},
	{IBV_QP_EN_SQD_ASYNC_NOTIFY, "EN_SQD_ASYNC_NOTIFY"},
	{IBV_QP_ACCESS_FLAGS, "ACCESS_FLAGS"},
	{IBV_QP_PKEY_INDEX, "PKEY_INDEX"},
	{IBV_QP_PORT, "PORT"},
	{IBV_QP_QKEY, "QKEY"},
	{IBV_QP_AV, "AV"},
	{IBV_QP_PATH_MTU, "PATH_MTU"},
	{IBV_QP_TIMEOUT, "TIMEOUT"},
	{IBV_QP_RETRY_CNT, "RETRY_CNT"},
	{IBV_QP_RNR_RETRY, "RNR_RETRY"},
	{IBV_QP_RQ_PSN, "RQ_PSN"},
	{IBV_QP_MAX_QP_RD_ATOMIC, "MAX_QP_RD_ATOMIC"},
	{IBV_QP_ALT_PATH, "ALT_PATH"},
	{IBV_QP_MIN_RNR_TIMER, "MIN_RNR_TIMER"},
	{IBV_QP_SQ_PSN, "SQ_PSN"},
	{IBV_QP_MAX_DEST_RD_ATOMIC, "MAX_DEST_RD_ATOMIC"},
	{IBV_QP_PATH_MIG_STATE, "PATH_MIG_STATE"},
	{IBV_QP_CAP, "CAP"},
	{IBV_QP_DEST_QPN, "DEST_QPN"},
	{IBV_QP_RATE_LIMIT, "RATE_LIMIT"},
};
#define N_BITS (sizeof(attr_bits) / sizeof(attr_bits[0]))

static const char *bit_name(int bit)
{
	unsigned i;

	for (i = 0; i < N_BITS; i++)
		if (attr_bits[i].bit == bit)
			return attr_bits[i].name;
	return "?";
}

static const char *mask_names(int mask, char *buf, size_t len)
{
	unsigned i;
	size_t used = 0;

	buf[0] = 0;
	for (i = 0; i < N_BITS && used < len; i++)
		if (mask & attr_bits[i].bit)
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? "|" : "", attr_bits[i].name);
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}

/* Attributes that may come along into RTS (from RTR, RTS or SQD). */
static int rts_opt(enum ibv_qp_type type)
{
	if (type == IBV_QPT_UD)
		return IBV_QP_CUR_STATE | IBV_QP_QKEY;
	return IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | APM_BITS |
	       (type == IBV_QPT_RC ? IBV_QP_MIN_RNR_TIMER : 0);
}

/* The specification's transition from -> to for type.  (RESET -> ERR is
 * the one the sources disagree on: see reset_to_err().) */
static struct rule rule_of(enum ibv_qp_type type, int from, int to)
{
	int ud = type == IBV_QPT_UD, rc = type == IBV_QPT_RC;
	int init = IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	struct rule r = {0, 0, 0};

	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) {
		r.valid = 1;	/* from any state, with nothing else */
		return r;
	}
	switch (from) {
	case IBV_QPS_RESET:
		if (to == IBV_QPS_INIT)
			r = (struct rule){1, init, 0};
		break;
	case IBV_QPS_INIT:
		if (to == IBV_QPS_INIT)
			r = (struct rule){1, 0, init};
		else if (to == IBV_QPS_RTR)
			r = (struct rule){1, rc ? RTR_RC : ud ? 0 : RTR_UC,
					  ud ? IBV_QP_PKEY_INDEX | IBV_QP_QKEY
					     : IBV_QP_ALT_PATH |
						       IBV_QP_ACCESS_FLAGS |
						       IBV_QP_PKEY_INDEX};
		break;
	case IBV_QPS_RTR:
		if (to == IBV_QPS_RTS)
			r = (struct rule){1, rc ? RTS_RC : IBV_QP_SQ_PSN,
					  rts_opt(type)};
		break;
	case IBV_QPS_RTS:
		if (to == IBV_QPS_RTS)
			r = (struct rule){1, 0, rts_opt(type)};
		else if (to == IBV_QPS_SQD)
			r = (struct rule){1, 0, IBV_QP_EN_SQD_ASYNC_NOTIFY};
		break;
	case IBV_QPS_SQD:
		if (to == IBV_QPS_RTS)
			r = (struct rule){1, 0, rts_opt(type)};
		else if (to == IBV_QPS_SQD)
			r = (struct rule){1, 0,
					  ud ? IBV_QP_PKEY_INDEX | IBV_QP_QKEY
					  : rc ? SQD_RC : SQD_UC};
		break;
	default:	/* SQE is reached by a send error only; ERR: above */
		break;
	}
	return r;
}

/* What a program would pass to enter state `to` the usual way. */
static int natural_mask(enum ibv_qp_type type, int to)
{
	switch (to) {
	case IBV_QPS_INIT: return rule_of(type, IBV_QPS_RESET, to).req;
	case IBV_QPS_RTR: return rule_of(type, IBV_QPS_INIT, to).req;
	case IBV_QPS_RTS: return rule_of(type, IBV_QPS_RTR, to).req;
	default: return 0;
	}
}

/* ---- one QP walked around ---- */

struct walk {
	struct cf_node *n;
	enum ibv_qp_type type;
	const char *tn;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;
	struct ibv_qp_attr base;	/* a valid value for every attribute */
	struct ibv_qp_attr alt;		/* another valid value for each */
	struct ibv_qp_attr want;	/* what query_qp should report */
	int want_mask;
	int apm;			/* try ALT_PATH and PATH_MIG_STATE */
	/* IBV_QP_CUR_STATE where the transition does not allow it: one
	 * check for the type, not one a transition */
	unsigned cur_tried;
	char cur_bad[512];
};

static void copy_fields(struct ibv_qp_attr *d, const struct ibv_qp_attr *s,
			int mask)
{
#define COPY(bit, field)                                                     \
	do {                                                                 \
		if (mask & (bit))                                            \
			d->field = s->field;                                 \
	} while (0)
	COPY(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
	COPY(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	COPY(IBV_QP_PKEY_INDEX, pkey_index);
	COPY(IBV_QP_PORT, port_num);
	COPY(IBV_QP_QKEY, qkey);
	COPY(IBV_QP_AV, ah_attr);
	COPY(IBV_QP_PATH_MTU, path_mtu);
	COPY(IBV_QP_TIMEOUT, timeout);
	COPY(IBV_QP_RETRY_CNT, retry_cnt);
	COPY(IBV_QP_RNR_RETRY, rnr_retry);
	COPY(IBV_QP_RQ_PSN, rq_psn);
	COPY(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	COPY(IBV_QP_ALT_PATH, alt_ah_attr);
	COPY(IBV_QP_ALT_PATH, alt_pkey_index);
	COPY(IBV_QP_ALT_PATH, alt_port_num);
	COPY(IBV_QP_ALT_PATH, alt_timeout);
	COPY(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	COPY(IBV_QP_SQ_PSN, sq_psn);
	COPY(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	COPY(IBV_QP_PATH_MIG_STATE, path_mig_state);
	COPY(IBV_QP_CAP, cap);
	COPY(IBV_QP_DEST_QPN, dest_qp_num);
	COPY(IBV_QP_RATE_LIMIT, rate_limit);
#undef COPY
}

static void walk_values(struct walk *w)
{
	struct cf_node *n = w->n;
	struct ibv_qp_attr *b = &w->base, *a = &w->alt;
	int rd = n->dev.max_qp_init_rd_atom < 2 ? n->dev.max_qp_init_rd_atom
						: 2;
	int dest_rd = n->dev.max_qp_rd_atom < 3 ? n->dev.max_qp_rd_atom : 3;

	memset(b, 0, sizeof(*b));
	b->pkey_index = 0;
	b->port_num = VU_PORT;
	b->qkey = CF_QKEY;
	b->qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (w->type == IBV_QPT_RC)
		b->qp_access_flags |= IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC;
	b->ah_attr.is_global = 1;
	b->ah_attr.grh.dgid = n->peer_gid;
	b->ah_attr.grh.sgid_index = VU_GID_INDEX;
	b->ah_attr.grh.hop_limit = 64;
	b->ah_attr.port_num = VU_PORT;
	b->path_mtu = n->mtu < IBV_MTU_1024 ? n->mtu : IBV_MTU_1024;
	b->dest_qp_num = CF_NO_QPN;
	b->rq_psn = 0x123456;
	b->sq_psn = 0x654321;
	b->max_dest_rd_atomic = dest_rd;
	b->min_rnr_timer = 9;
	b->timeout = 17;
	b->retry_cnt = 5;
	b->rnr_retry = 3;
	b->max_rd_atomic = rd;
	b->en_sqd_async_notify = 1;
	b->path_mig_state = IBV_MIG_MIGRATED;
	b->alt_ah_attr = b->ah_attr;
	b->alt_port_num = VU_PORT;
	b->alt_timeout = 17;

	*a = *b;
	a->qkey = CF_QKEY ^ 0x00ff0000u;
	a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	a->ah_attr.grh.hop_limit = 32;
	a->min_rnr_timer = 20;
	a->timeout = 19;
	a->retry_cnt = 6;
	a->rnr_retry = 4;
	a->max_rd_atomic = 1;
	a->max_dest_rd_atomic = 1;
}

/*
 * One modify, with the base value of every attribute in mask except those
 * in alt_bits, which take their other value.  Keeps track of what query_qp
 * should say.  0 or an errno value.
 */
static int try_modify(struct walk *w, int from, int to, int mask,
		      int alt_bits)
{
	struct ibv_qp_attr a = w->base;
	int rc;

	copy_fields(&a, &w->alt, alt_bits);
	a.qp_state = to;
	a.cur_qp_state = from;
	rc = ibv_modify_qp(w->qp, &a, mask);
	if (rc)
		return rc;
	if ((mask & IBV_QP_STATE) && to == IBV_QPS_RESET) {
		w->want_mask = 0;
		return 0;
	}
	copy_fields(&w->want, &a, mask & READABLE);
	w->want_mask |= mask & READABLE;
	return 0;
}

/* Append to a message being built, "; " between parts. */
static void add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	if (used)
		snprintf(buf + used, len - used, "; ");
	used = strlen(buf);
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* Does query_qp report state and what was set?  Mismatches go to buf. */
static int query_matches(struct walk *w, int state, char *buf, size_t len)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr q;
	const struct ibv_qp_attr *e = &w->want;
	int m = w->want_mask, rc;

	buf[0] = 0;
	memset(&q, 0, sizeof(q));
	rc = ibv_query_qp(w->qp, &q, IBV_QP_STATE | READABLE, &ia);
	if (rc) {
		add(buf, len, "query_qp returned %s", cf_err(rc));
		return 0;
	}
	if ((int)q.qp_state != state)
		add(buf, len, "state %s", cf_state(q.qp_state));
#define CHECK(bit, field, name)                                              \
	do {                                                                 \
		if ((m & (bit)) && q.field != e->field)                      \
			add(buf, len, name " %lld, not %lld",                \
			    (long long)q.field, (long long)e->field);        \
	} while (0)
	CHECK(IBV_QP_PKEY_INDEX, pkey_index, "pkey_index");
	CHECK(IBV_QP_PORT, port_num, "port_num");
	CHECK(IBV_QP_QKEY, qkey, "qkey");
	CHECK(IBV_QP_ACCESS_FLAGS, qp_access_flags, "qp_access_flags");
	CHECK(IBV_QP_PATH_MTU, path_mtu, "path_mtu");
	CHECK(IBV_QP_DEST_QPN, dest_qp_num, "dest_qp_num");
	CHECK(IBV_QP_RQ_PSN, rq_psn, "rq_psn");
	CHECK(IBV_QP_SQ_PSN, sq_psn, "sq_psn");
	CHECK(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic,
	      "max_dest_rd_atomic");
	CHECK(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic, "max_rd_atomic");
	CHECK(IBV_QP_MIN_RNR_TIMER, min_rnr_timer, "min_rnr_timer");
	CHECK(IBV_QP_TIMEOUT, timeout, "timeout");
	CHECK(IBV_QP_RETRY_CNT, retry_cnt, "retry_cnt");
	CHECK(IBV_QP_RNR_RETRY, rnr_retry, "rnr_retry");
	CHECK(IBV_QP_AV, ah_attr.is_global, "ah_attr.is_global");
	CHECK(IBV_QP_AV, ah_attr.grh.sgid_index, "ah_attr.grh.sgid_index");
	CHECK(IBV_QP_AV, ah_attr.grh.hop_limit, "ah_attr.grh.hop_limit");
#undef CHECK
	if ((m & IBV_QP_AV) &&
	    memcmp(q.ah_attr.grh.dgid.raw, e->ah_attr.grh.dgid.raw, 16))
		add(buf, len, "ah_attr.grh.dgid differs");
	return buf[0] == 0;
}

/* Bring the QP to state s the usual way (through RESET).  0 or -1. */
static int reach(struct walk *w, int s)
{
	static const int path[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS,
				   IBV_QPS_SQD};
	int cur = IBV_QPS_RESET, rc, i;
	char detail[96];

	rc = try_modify(w, vu_qp_state(w->qp), IBV_QPS_RESET, IBV_QP_STATE, 0);
	for (i = 0; !rc && cur != s && i < 4; i++) {
		if (s == IBV_QPS_ERR && cur == IBV_QPS_INIT)
			break;
		rc = try_modify(w, cur, path[i],
				IBV_QP_STATE | rule_of(w->type, cur,
						       path[i]).req,
				0);
		if (!rc)
			cur = path[i];
	}
	if (!rc && s == IBV_QPS_ERR)
		rc = try_modify(w, cur, IBV_QPS_ERR, IBV_QP_STATE, 0);
	if (!rc && vu_qp_state(w->qp) == s)
		return 0;
	snprintf(detail, sizeof(detail), "stuck in %s, %s",
		 cf_state(vu_qp_state(w->qp)), cf_err(rc));
	cf_report(0, detail, "%s: a QP can be brought to %s the usual way",
		  w->tn, cf_state(s));
	return -1;
}

static int ensure(struct walk *w, int s)
{
	return vu_qp_state(w->qp) == s ? 0 : reach(w, s);
}

/* ---- the checks of one (from, to) pair ---- */

static void invalid_pair(struct walk *w, int from, int to)
{
	char detail[96], m[160];
	int mask = IBV_QP_STATE | natural_mask(w->type, to), rc, st;

	if (ensure(w, from))
		return;
	rc = try_modify(w, from, to, mask, 0);
	st = vu_qp_state(w->qp);
	snprintf(detail, sizeof(detail), "returned %s, state %s", cf_err(rc),
		 cf_state(st));
	cf_report(rc == EINVAL && st == from, detail,
		  "%s %s->%s (not a transition; attributes %s) fails EINVAL, "
		  "state stays %s", w->tn, cf_state(from), cf_state(to),
		  mask_names(mask & ~IBV_QP_STATE, m, sizeof(m)),
		  cf_state(from));
}

static void missing_required(struct walk *w, int from, int to,
			     const struct rule *r)
{
	char detail[96];
	unsigned i;
	int rc, st;

	for (i = 0; i < N_BITS; i++) {
		int bit = attr_bits[i].bit;

		if (!(r->req & bit) || ensure(w, from))
			continue;
		rc = try_modify(w, from, to, IBV_QP_STATE | (r->req & ~bit), 0);
		st = vu_qp_state(w->qp);
		snprintf(detail, sizeof(detail), "returned %s, state %s",
			 cf_err(rc), cf_state(st));
		cf_report(rc == EINVAL && st == from, detail,
			  "%s %s->%s without required %s fails EINVAL", w->tn,
			  cf_state(from), cf_state(to), attr_bits[i].name);
	}
}

static void not_allowed(struct walk *w, int from, int to,
			const struct rule *r)
{
	char bad[512] = "";
	unsigned i, tried = 0;
	int rc, st;

	for (i = 0; i < N_BITS; i++) {
		int bit = attr_bits[i].bit;

		if ((r->req | r->opt) & bit)
			continue;
		if (ensure(w, from))
			return;
		rc = try_modify(w, from, to, IBV_QP_STATE | r->req | bit, 0);
		st = vu_qp_state(w->qp);
		if (bit == IBV_QP_CUR_STATE) {
			w->cur_tried++;
			if (rc != EINVAL || st != from)
				add(w->cur_bad, sizeof(w->cur_bad), "%s->%s",
				    cf_state(from), cf_state(to));
			continue;
		}
		tried++;
		if (rc != EINVAL || st != from)
			add(bad, sizeof(bad), "%s accepted (%s, state %s)",
			    attr_bits[i].name, cf_err(rc), cf_state(st));
	}
	cf_report(!bad[0], bad,
		  "%s %s->%s with any one of the %u attributes it does not "
		  "allow (CUR_STATE aside) fails EINVAL", w->tn,
		  cf_state(from), cf_state(to), tried);
}

static void optional(struct walk *w, int from, int to, const struct rule *r)
{
	char bad[512] = "", why[256], names[160];
	int opt = r->opt & ~(w->apm ? 0 : APM_BITS), rc;
	unsigned i;

	if (!opt)
		return;
	for (i = 0; i < N_BITS; i++) {
		int bit = attr_bits[i].bit;

		if (!(opt & bit) || ensure(w, from))
			continue;
		rc = try_modify(w, from, to, IBV_QP_STATE | r->req | bit, bit);
		if (rc)
			add(bad, sizeof(bad), "%s refused (%s)",
			    attr_bits[i].name, cf_err(rc));
		else if (!query_matches(w, to, why, sizeof(why)))
			add(bad, sizeof(bad), "%s: %s", attr_bits[i].name,
			    why);
	}
	cf_report(!bad[0], bad,
		  "%s %s->%s accepts each optional attribute (%s), and "
		  "query_qp reads it back", w->tn, cf_state(from),
		  cf_state(to), mask_names(opt, names, sizeof(names)));
}

static void exact(struct walk *w, int from, int to, const struct rule *r)
{
	char detail[256], names[160];
	int rc, st;

	if (ensure(w, from))
		return;
	rc = try_modify(w, from, to, IBV_QP_STATE | r->req, 0);
	st = vu_qp_state(w->qp);
	snprintf(detail, sizeof(detail), "returned %s, state %s", cf_err(rc),
		 cf_state(st));
	cf_report(rc == 0 && st == to, detail,
		  "%s %s->%s with exactly the required attributes (%s) "
		  "succeeds", w->tn, cf_state(from), cf_state(to),
		  mask_names(r->req, names, sizeof(names)));
	if (rc)
		return;
	cf_report(query_matches(w, to, detail, sizeof(detail)), detail,
		  "%s: after %s->%s query_qp reports %s and every attribute "
		  "set since RESET", w->tn, cf_state(from), cf_state(to),
		  cf_state(to));
}

/*
 * RESET -> ERR: the sources disagree.  "Any state to Error" is the usual
 * reading of the specification, and srnic allows it; Linux's
 * ib_modify_qp_is_ok() has no RESET -> ERR, so hardware providers refuse
 * it (IPoIB looks for RESET before it moves a QP to ERR for that reason).
 * Either answer is accepted, as long as the state agrees with it.
 */
static void reset_to_err(struct walk *w)
{
	char detail[96];
	int rc, st;

	if (ensure(w, IBV_QPS_RESET))
		return;
	rc = try_modify(w, IBV_QPS_RESET, IBV_QPS_ERR, IBV_QP_STATE, 0);
	st = vu_qp_state(w->qp);
	snprintf(detail, sizeof(detail), "returned %s, state %s", cf_err(rc),
		 cf_state(st));
	cf_report((rc == 0 && st == IBV_QPS_ERR) ||
			  (rc == EINVAL && st == IBV_QPS_RESET),
		  detail, "%s RESET->ERR succeeds (IBTA) or fails EINVAL "
		  "(Linux), and the state says which", w->tn);
	cf_note("%s RESET->ERR: %s", w->tn, detail);
}

static void check_pair(struct walk *w, int from, int to)
{
	struct rule r;

	if (from == IBV_QPS_RESET && to == IBV_QPS_ERR) {
		reset_to_err(w);
		return;
	}
	r = rule_of(w->type, from, to);
	if (!r.valid) {
		invalid_pair(w, from, to);
		return;
	}
	missing_required(w, from, to, &r);
	not_allowed(w, from, to, &r);
	optional(w, from, to, &r);
	exact(w, from, to, &r);
}

/* ---- modify without IBV_QP_STATE: the current state's X -> X ---- */

static void in_place(struct walk *w)
{
	/* One attribute each state's X -> X allows, if any. */
	int rts_bit = w->type == IBV_QPT_RC   ? IBV_QP_MIN_RNR_TIMER
		      : w->type == IBV_QPT_UC ? IBV_QP_ACCESS_FLAGS
					      : IBV_QP_QKEY;
	static const int states[] = {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
				     IBV_QPS_RTS, IBV_QPS_ERR};
	char detail[256];
	unsigned i;
	int rc, st;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		int s = states[i];
		int bit = s == IBV_QPS_RTS ? rts_bit : IBV_QP_PKEY_INDEX;
		int ok_want = s == IBV_QPS_INIT || s == IBV_QPS_RTS;

		if (ensure(w, s))
			continue;
		rc = try_modify(w, s, s, bit, bit);
		st = vu_qp_state(w->qp);
		if (!ok_want) {
			snprintf(detail, sizeof(detail),
				 "returned %s, state %s", cf_err(rc),
				 cf_state(st));
			cf_report(rc == EINVAL && st == s, detail,
				  "%s in %s, modify_qp of %s alone (no "
				  "IBV_QP_STATE) fails EINVAL", w->tn,
				  cf_state(s), bit_name(bit));
			continue;
		}
		if (rc)
			snprintf(detail, sizeof(detail), "returned %s",
				 cf_err(rc));
		cf_report(!rc && query_matches(w, s, detail, sizeof(detail)),
			  detail, "%s in %s, modify_qp of %s alone (no "
			  "IBV_QP_STATE) succeeds, state stays, and query_qp "
			  "reads it back", w->tn, cf_state(s), bit_name(bit));
	}
}

/* ---- values out of range ---- */

typedef void spoil_fn(struct ibv_qp_attr *a, const struct cf_node *n);

static void bad_value(struct walk *w, int from, int to, spoil_fn *spoil,
		      const char *what)
{
	struct ibv_qp_attr a = w->base;
	int mask = IBV_QP_STATE | rule_of(w->type, from, to).req;
	char detail[96];
	int rc, st;

	if (ensure(w, from))
		return;
	a.qp_state = to;
	spoil(&a, w->n);
	rc = ibv_modify_qp(w->qp, &a, mask);
	st = vu_qp_state(w->qp);
	snprintf(detail, sizeof(detail), "returned %s, state %s", cf_err(rc),
		 cf_state(st));
	cf_report(rc == EINVAL && st == from, detail,
		  "%s %s->%s with %s fails EINVAL", w->tn, cf_state(from),
		  cf_state(to), what);
}

static void port_0(struct ibv_qp_attr *a, const struct cf_node *n)
{
	(void)n;
	a->port_num = 0;
}

static void port_2(struct ibv_qp_attr *a, const struct cf_node *n)
{
	(void)n;
	a->port_num = 2;
}

static void pkey_beyond(struct ibv_qp_attr *a, const struct cf_node *n)
{
	a->pkey_index = n->port.pkey_tbl_len;
}

static void qpn_25_bits(struct ibv_qp_attr *a, const struct cf_node *n)
{
	(void)n;
	a->dest_qp_num = 1u << 24;
}

static void mtu_0(struct ibv_qp_attr *a, const struct cf_node *n)
{
	(void)n;
	a->path_mtu = (enum ibv_mtu)0;
}

static void rnr_timer_32(struct ibv_qp_attr *a, const struct cf_node *n)
{
	(void)n;
	a->min_rnr_timer = 32;
}

static void dest_rd_beyond(struct ibv_qp_attr *a, const struct cf_node *n)
{
	a->max_dest_rd_atomic = n->dev.max_qp_rd_atom + 1;
}

static void rd_beyond(struct ibv_qp_attr *a, const struct cf_node *n)
{
	a->max_rd_atomic = n->dev.max_qp_init_rd_atom + 1;
}

static void bad_values(struct walk *w)
{
	int R = IBV_QPS_RESET, I = IBV_QPS_INIT, RTR = IBV_QPS_RTR;

	bad_value(w, R, I, port_0, "port_num 0");
	bad_value(w, R, I, port_2, "port_num 2 (one port)");
	bad_value(w, R, I, pkey_beyond, "pkey_index = pkey_tbl_len");
	if (w->type == IBV_QPT_UD)
		return;
	bad_value(w, I, RTR, qpn_25_bits, "dest_qp_num 2^24");
	bad_value(w, I, RTR, mtu_0, "path_mtu 0 (no such MTU)");
	if (w->type != IBV_QPT_RC)
		return;
	bad_value(w, I, RTR, rnr_timer_32, "min_rnr_timer 32");
	bad_value(w, I, RTR, dest_rd_beyond,
		  "max_dest_rd_atomic above max_qp_rd_atom");
	bad_value(w, RTR, IBV_QPS_RTS, rd_beyond,
		  "max_rd_atomic above max_qp_init_rd_atom");
}

/* ---- what create_qp set, as query_qp tells it ---- */

static void init_attr_check(struct walk *w)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr q;
	char bad[256] = "";
	int rc;

	memset(&ia, 0, sizeof(ia));
	rc = ibv_query_qp(w->qp, &q, IBV_QP_STATE | IBV_QP_CAP, &ia);
	if (rc)
		add(bad, sizeof(bad), "query_qp returned %s", cf_err(rc));
	if (!rc && ia.qp_type != w->type)
		add(bad, sizeof(bad), "qp_type %d", ia.qp_type);
	if (!rc && !ia.sq_sig_all)
		add(bad, sizeof(bad), "sq_sig_all 0");
	if (!rc && (ia.send_cq != w->cq || ia.recv_cq != w->cq || ia.srq))
		add(bad, sizeof(bad), "other CQs or an SRQ");
	if (!rc && memcmp(&ia.cap, &w->cap, sizeof(w->cap)))
		add(bad, sizeof(bad), "init caps %u/%u/%u/%u/%u",
		    ia.cap.max_send_wr, ia.cap.max_recv_wr,
		    ia.cap.max_send_sge, ia.cap.max_recv_sge,
		    ia.cap.max_inline_data);
	if (!rc && memcmp(&q.cap, &w->cap, sizeof(w->cap)))
		add(bad, sizeof(bad), "attr caps %u/%u/%u/%u/%u",
		    q.cap.max_send_wr, q.cap.max_recv_wr, q.cap.max_send_sge,
		    q.cap.max_recv_sge, q.cap.max_inline_data);
	if (!rc && q.qp_state != IBV_QPS_RESET)
		add(bad, sizeof(bad), "state %s", cf_state(q.qp_state));
	cf_report(!bad[0], bad,
		  "%s: query_qp of a new QP reports RESET, its type, "
		  "sq_sig_all, CQs and the caps create_qp returned", w->tn);
}

static void walk_type(struct cf_node *n, enum ibv_qp_type type)
{
	struct walk w;
	int from, to;

	memset(&w, 0, sizeof(w));
	w.n = n;
	w.type = type;
	w.tn = cf_type(type);
	w.apm = !!(n->dev.device_cap_flags & IBV_DEVICE_AUTO_PATH_MIG);
	walk_values(&w);
	w.cq = ibv_create_cq(n->ctx, 16, NULL, NULL, 0);
	if (!w.cq)
		cf_die("create_cq");
	w.qp = cf_create_qp(n, type, w.cq, 5, 3, 2, 0, 1, &w.cap);
	if (!w.qp)
		cf_die("create_qp for the state walk");
	init_attr_check(&w);

	for (from = IBV_QPS_RESET; from <= IBV_QPS_ERR; from++) {
		if (from == IBV_QPS_SQE)
			continue;	/* see the send queue error checks */
		for (to = IBV_QPS_RESET; to <= IBV_QPS_ERR; to++)
			check_pair(&w, from, to);
	}
	/* The specification has CurrentQPState only where the QP may have
	 * left the state the program believes it in: into RTS. */
	cf_report(!w.cur_bad[0], w.cur_bad,
		  "%s IBV_QP_CUR_STATE (with the right state) fails EINVAL in "
		  "the %u transitions that do not allow it (all but RTR->RTS, "
		  "RTS->RTS, SQD->RTS)", w.tn, w.cur_tried);
	in_place(&w);
	bad_values(&w);

	if (ibv_destroy_qp(w.qp))
		cf_report(0, NULL, "%s: destroy_qp of the walked QP", w.tn);
	ibv_destroy_cq(w.cq);
}

void cf_state_checks(struct cf_node *n)
{
	if (!(n->dev.device_cap_flags & IBV_DEVICE_AUTO_PATH_MIG))
		cf_note("no IBV_DEVICE_AUTO_PATH_MIG: optional ALT_PATH and "
			"PATH_MIG_STATE are not tried");
	cf_note("SQE is entered through a send error only: see the send "
		"queue error checks");
	walk_type(n, IBV_QPT_RC);
	walk_type(n, IBV_QPT_UC);
	walk_type(n, IBV_QPT_UD);
}
