/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * verbs_private.h - srnic's own declaration of libibverbs' provider ABI.
 *
 * Debian 12 ships libibverbs 44 but not the provider header, so srnic
 * declares the private provider interface here.  Everything below was
 * written for srnic after reading rdma-core v44.0; it is not a copy.
 *
 * What is ABI and what is ours:
 *   - Struct layouts (member types, order, sizes) are ABI: libibverbs
 *     reads and writes these objects directly.  Do not reorder, insert or
 *     remove members; the _Static_asserts at the end catch most slips.
 *   - Exported function names (verbs_register_driver_34, verbs_set_ops,
 *     ...) are ABI and keep libibverbs' spelling.
 *   - Struct tags and member names are not ABI, but we keep libibverbs'
 *     vocabulary so the code reads like every other provider.
 *   - Macros and inline helpers prefixed SRNIC_/srnic_ are our own.
 *
 * The contract is the symbol version IBVERBS_PRIVATE_34.  rdma-core
 * renames that version whenever these layouts change; every private
 * function below is bound to that exact version (see SRNIC_PIN_PRIVATE),
 * so a libibverbs with a different private ABI fails at link time and
 * ld.so refuses to load the provider, instead of corrupting memory.
 * The structures below are identical in rdma-core v43.0 .. v56 (all
 * IBVERBS_PRIVATE_34); v57 moved to IBVERBS_PRIVATE_57.
 *
 * No ibv_cmd_* prototypes: they talk to the kernel, and srnic has none.
 */
#ifndef SRNIC_VERBS_PRIVATE_H
#define SRNIC_VERBS_PRIVATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
#error "verbs_private.h is C only (it relies on C11 atomics and layout)"
#endif

/* The private ABI generation this header describes. */
#define SRNIC_IBVERBS_PABI          34
#define SRNIC_IBVERBS_PRIVATE_VER   "IBVERBS_PRIVATE_34"
/* libibverbs dlopen()s "<RDMAV_DRIVERS entry>" + this suffix. */
#define SRNIC_PROVIDER_SUFFIX       "-rdmav34.so"

/* ------------------------------------------------------------------ */
/* Intrusive list link used inside libibverbs' objects.               */
/* libibverbs owns these links; a provider must never touch them.     */
/* Same shape as libibverbs' internal doubly linked list node.        */
struct srnic_verbs_list_link {
	struct srnic_verbs_list_link *next;
	struct srnic_verbs_list_link *prev;
};

/* ------------------------------------------------------------------ */
/* Device matching                                                    */

/* Values of verbs_match_ent.kind.  A kind of 0 ends a match table. */
enum {
	VERBS_MATCH_SENTINEL  = 0,
	VERBS_MATCH_PCI       = 1, /* vendor/device against a pci: modalias */
	VERBS_MATCH_MODALIAS  = 2, /* fnmatch() pattern in u.modalias */
	VERBS_MATCH_DRIVER_ID = 3, /* u.driver_id; only netlink discovery */
};

/* One row of a provider's match table (layout is ABI). */
struct verbs_match_ent {
	void *driver_data;          /* handed back via sysfs_dev->match */
	union {
		const char *modalias; /* pattern, for MODALIAS */
		uint64_t driver_id;   /* enum rdma_driver_id, for DRIVER_ID */
	} u;
	uint16_t vendor;            /* PCI only */
	uint16_t device;            /* PCI only */
	uint8_t kind;               /* VERBS_MATCH_* */
};

/*
 * Match by IB device name prefix.  libibverbs tests every MODALIAS
 * pattern against the string "rdma_device:N<ibdev name>" with fnmatch(),
 * so a prefix match is the pattern "rdma_device:*N<prefix>*".  It needs
 * no extra sysfs file, which makes it the simplest choice for srnic
 * (DRIVER_ID rows never match: driver_id only comes from netlink).
 */
#define SRNIC_NAME_MATCH_ENT(name_prefix, data)                              \
	{ .driver_data = (void *)(data),                                     \
	  .u.modalias = "rdma_device:*N" name_prefix "*",                    \
	  .kind = VERBS_MATCH_MODALIAS }

#define SRNIC_DRIVER_ID_MATCH_ENT(id)                                        \
	{ .u.driver_id = (id), .kind = VERBS_MATCH_DRIVER_ID }

/* Terminates a match table (kind == VERBS_MATCH_SENTINEL). */
#define SRNIC_MATCH_END { .kind = VERBS_MATCH_SENTINEL }

/* ------------------------------------------------------------------ */
/* What libibverbs found in sysfs, passed to alloc_device()           */

/* verbs_sysfs_dev.flags: which lazily read values are cached. */
enum {
	VSYSFS_READ_MODALIAS  = 1 << 0,
	VSYSFS_READ_NODE_GUID = 1 << 1,
};

/*
 * Owned by libibverbs.  It is freed when the device's refcount drops to
 * zero, *before* uninit_device() runs, so uninit_device() must not read
 * it.  Read-only for the provider.
 */
struct verbs_sysfs_dev {
	struct srnic_verbs_list_link entry;
	void *provider_data;
	const struct verbs_match_ent *match;   /* row that matched, or NULL */
	unsigned int flags;                     /* VSYSFS_READ_* */
	char sysfs_name[IBV_SYSFS_NAME_MAX];    /* "uverbs0" */
	dev_t sysfs_cdev;                       /* from uverbsN/dev */
	char ibdev_name[IBV_SYSFS_NAME_MAX];    /* from uverbsN/ibdev */
	char ibdev_path[IBV_SYSFS_PATH_MAX];    /* $SYSFS_PATH/class/infiniband/<ibdev> */
	char modalias[512];
	uint64_t node_guid;                     /* host order, once cached */
	uint32_t driver_id;                     /* netlink only; else 0 */
	enum ibv_node_type node_type;           /* from <ibdev>/node_type */
	int ibdev_idx;                          /* netlink index, -1 via sysfs */
	uint32_t num_ports;                     /* netlink only */
	uint32_t abi_ver;                       /* from uverbsN/abi_version, 0 if absent */
	struct timespec time_created;           /* mtime of ibdev_path */
};

/* ------------------------------------------------------------------ */
/* Provider and device                                                */

struct verbs_device;

/* The provider's entry table; registered once per process (layout is ABI). */
struct verbs_device_ops {
	const char *name;

	/* Accepted range for uverbsN/abi_version (0 if the file is absent). */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	/* Ends with a SENTINEL row; may be NULL if match_device is set. */
	const struct verbs_match_ent *match_table;
	/* Used only by statically linked libibverbs builds; leave NULL. */
	const struct verbs_device_ops **static_providers;

	/* Optional.  If set, it alone decides (after the table lookup). */
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	/* ibv_open_device(): cmd_fd is the opened /dev/infiniband/uverbsN. */
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd,
					       void *private_data);
	/* ibv_import_device(); NULL means EOPNOTSUPP. */
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	/* Must return zeroed memory embedding struct verbs_device. */
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	/* Called when the last reference goes; frees alloc_device's memory. */
	void (*uninit_device)(struct verbs_device *device);
};

/*
 * The object alloc_device() returns, usually embedded in a bigger
 * provider struct.  libibverbs fills ops, refcount, the ibv_device
 * names/paths and sysfs after alloc_device() returns (layout is ABI).
 */
struct verbs_device {
	struct ibv_device device;   /* first: ibv_device * is cast back */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct srnic_verbs_list_link entry;
	struct verbs_sysfs_dev *sysfs;
	/* IB_UVERBS_CORE_SUPPORT_* bits; only OPTIONAL_MR_ACCESS is read (if
	 * clear, ibv_reg_mr strips IBV_ACCESS_OPTIONAL_RANGE bits). */
	uint64_t core_support;
};

static inline struct verbs_device *srnic_verbs_device(struct ibv_device *dev)
{
	return (struct verbs_device *)((char *)dev -
				       offsetof(struct verbs_device, device));
}

/* ------------------------------------------------------------------ */
/* Wrappers libibverbs expects around some verbs objects.             */
/* A provider allocates these (plus its own tail) and returns the     */
/* embedded public object.                                            */

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask bits */
enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX   = 1 << 1,
};

/*
 * A QP created through create_qp_ex must be a verbs_qp: ibv_qp_to_qp_ex()
 * and the ibv_wr_* API treat the ibv_qp as the start of an ibv_qp_ex.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;          /* VERBS_QP_* */
	struct verbs_xrcd *xrcd;
};

/* A CQ from create_cq_ex: the ibv_cq_ex overlays the ibv_cq. */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* verbs_mr.mr_type */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/*
 * reg_mr returns &verbs_mr.ibv_mr, and libibverbs hands the verbs_mr back
 * to dereg_mr/rereg_mr, so every MR must be allocated as a verbs_mr.
 * ibv_dereg_mr() reads mr_type and access before calling dereg_mr (to
 * undo its ibv_dontfork_range), so set mr_type = IBV_MR_TYPE_MR and
 * access in reg_mr.  libibverbs itself fills ibv_mr.context/pd/addr/length
 * after reg_mr returns; lkey/rkey/handle are the provider's.
 */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

static inline struct verbs_mr *srnic_verbs_mr(struct ibv_mr *mr)
{
	return (struct verbs_mr *)((char *)mr -
				   offsetof(struct verbs_mr, ibv_mr));
}

enum ibv_flow_action_type {
	IBV_FLOW_ACTION_UNSPECIFIED,
	IBV_FLOW_ACTION_ESP = 1,
};

struct verbs_flow_action {
	struct ibv_flow_action action;
	uint32_t handle;
	enum ibv_flow_action_type type;
};

struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

struct verbs_counters {
	struct ibv_counters counters;
	uint32_t handle;
};

/* ------------------------------------------------------------------ */
/* Context operations                                                 */

/*
 * Every op a provider may implement.  verbs_set_ops() walks this struct
 * member by member and installs each non-NULL pointer, so the members,
 * their order and their types must be exactly v44's (alphabetical, 76
 * function pointers).  NULL members keep libibverbs' defaults, which fail
 * with EOPNOTSUPP/ENOSYS (free_context's default does nothing).
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(
		struct ibv_context *context,
		struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(
		struct ibv_context *context,
		struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(
		struct ibv_context *context,
		struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);   /* note: verbs_mr, not ibv_mr */
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(
		struct ibv_context *context,
		struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	/* attr_size: write at most this many bytes of *attr (232 or 400). */
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	/* port_attr is a full, zeroed struct ibv_port_attr. */
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ------------------------------------------------------------------ */
/* Functions exported by libibverbs under IBVERBS_PRIVATE_34          */

/* Adds ops to libibverbs' provider list; call from a constructor. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/*
 * calloc()s alloc_size bytes, initialises the verbs_context found
 * context_offset bytes into it (device ref, cmd_fd, async_fd = -1, ops
 * set to defaults) and returns the start of the allocation, or NULL with
 * errno set.  Takes ownership of cmd_fd: closes it on failure.
 * context_offset is an offset disguised as a pointer.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/* Installs every non-NULL member of ops; may be called repeatedly. */
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/*
 * Undoes the init: closes cmd_fd and async_fd (when != -1) and drops the
 * device reference.  Does not free the provider's context allocation.
 */
void verbs_uninit_context(struct verbs_context *context);

/*
 * Fills the generic ibv_cq fields (context, channel, cq_context, event
 * counters, mutex/cond).  ibv_create_cq() and ibv_create_cq_ex() already
 * call it on the CQ the provider returns, so a provider rarely needs it.
 */
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

/* What ibv_open_device() does; a provider normally never calls it. */
struct ibv_context *verbs_open_device(struct ibv_device *device,
				      void *private_data);

/* Levels for __verbs_log (VERBS_LOG_LEVEL env var selects). */
enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};
void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Reads <ibdev_path>/<printf(fnfmt,...)>; strips the trailing newline. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/* GID type as read from sysfs ports/<p>/gid_attrs/types/<i>. */
enum ibv_gid_type_sysfs {
	IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
	IBV_GID_TYPE_SYSFS_ROCE_V2,
};
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
		       unsigned int index, enum ibv_gid_type_sysfs *type);

/* Set from RDMAV_ALLOW_DISASSOC_DESTROY; irrelevant without a kernel. */
extern bool verbs_allow_disassociate_destroy;

/* Older public exports (IBVERBS_1.0 / 1.1) that verbs.h does not declare. */
const char *ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
			size_t size);
int ibv_dontfork_range(void *base, size_t size);
int ibv_dofork_range(void *base, size_t size);

/*
 * Bind each private reference to the IBVERBS_PRIVATE_34 version node.
 * A plain reference would silently bind to whatever version the linker
 * finds (e.g. IBVERBS_PRIVATE_57); a pinned one makes ld fail ("no symbol
 * version section for versioned symbol ...@IBVERBS_PRIVATE_34") and ld.so
 * refuse to load the provider if libibverbs lacks that exact node.
 * Verified with gcc 12 (also -flto) and clang 14.  Define
 * SRNIC_VERBS_NO_SYMVER_PIN to opt out if a toolchain mishandles it.
 */
#ifndef SRNIC_VERBS_NO_SYMVER_PIN
#define SRNIC_PIN_PRIVATE(sym)                                               \
	__asm__(".symver " #sym "," #sym "@" SRNIC_IBVERBS_PRIVATE_VER)
SRNIC_PIN_PRIVATE(verbs_register_driver_34);
SRNIC_PIN_PRIVATE(_verbs_init_and_alloc_context);
SRNIC_PIN_PRIVATE(verbs_set_ops);
SRNIC_PIN_PRIVATE(verbs_uninit_context);
SRNIC_PIN_PRIVATE(verbs_init_cq);
SRNIC_PIN_PRIVATE(verbs_open_device);
SRNIC_PIN_PRIVATE(__verbs_log);
SRNIC_PIN_PRIVATE(ibv_read_ibdev_sysfs_file);
SRNIC_PIN_PRIVATE(ibv_query_gid_type);
SRNIC_PIN_PRIVATE(verbs_allow_disassociate_destroy);
#undef SRNIC_PIN_PRIVATE
#endif

/* ------------------------------------------------------------------ */
/* srnic helpers (our own)                                            */

/*
 * Registers a provider when the .so is dlopen()ed.  libibverbs only
 * keeps the pointer, so ops must have static storage duration.
 */
#define SRNIC_PROVIDER_REGISTER(ops_var)                                     \
	__attribute__((constructor)) static void                             \
	srnic_provider_register_##ops_var(void)                              \
	{                                                                    \
		verbs_register_driver_34(&(ops_var));                        \
	}

/*
 * Allocates a zeroed provider context of type *ptr_type that embeds a
 * struct verbs_context as member `member`, and initialises that member.
 * Usage:
 *   struct srnic_ctx *c = SRNIC_ALLOC_CONTEXT(ibdev, cmd_fd,
 *                                             struct srnic_ctx, vctx, 0);
 * Returns NULL (errno set, cmd_fd closed) on failure.
 */
#define SRNIC_ALLOC_CONTEXT(ibdev, cmd_fd, type, member, driver_id)          \
	((type *)_verbs_init_and_alloc_context(                               \
		(ibdev), (cmd_fd), sizeof(type),                             \
		(struct verbs_context *)(uintptr_t)offsetof(type, member),    \
		(driver_id)))

/* True if `input` uses no bits outside `supported`. */
static inline bool srnic_comp_mask_ok(uint64_t input, uint64_t supported)
{
	return (input & ~supported) == 0;
}

/* ------------------------------------------------------------------ */
/* Layout guards (values measured against rdma-core v44.0 on LP64).   */
#if defined(__x86_64__) || defined(__aarch64__)
_Static_assert(sizeof(struct srnic_verbs_list_link) == 16, "list link");
_Static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
_Static_assert(offsetof(struct verbs_match_ent, kind) == 20, "match kind");
_Static_assert(offsetof(struct verbs_sysfs_dev, sysfs_name) == 36,
	       "sysfs_dev.sysfs_name");
_Static_assert(offsetof(struct verbs_sysfs_dev, modalias) == 432,
	       "sysfs_dev.modalias");
_Static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968,
	       "sysfs_dev.abi_ver");
_Static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_device, ops) ==
	       sizeof(struct ibv_device), "device must come first");
_Static_assert(sizeof(struct verbs_device) == 712, "verbs_device");
_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void (*)(void)),
	       "verbs_context_ops must hold exactly v44's 76 ops");
_Static_assert(offsetof(struct verbs_context_ops, query_device_ex) ==
	       58 * sizeof(void (*)(void)), "query_device_ex slot");
_Static_assert(offsetof(struct verbs_context_ops, unimport_pd) ==
	       75 * sizeof(void (*)(void)), "last op slot");
_Static_assert(offsetof(struct verbs_qp, comp_mask) ==
	       sizeof(struct ibv_qp_ex), "verbs_qp");
_Static_assert(sizeof(struct verbs_mr) == sizeof(struct ibv_mr) + 8,
	       "verbs_mr");
#endif

#endif /* SRNIC_VERBS_PRIVATE_H */
