/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmbd target: exports of local RAM, served to clients over RDMA.
 *
 * Objects and their lifetimes:
 *  - an export owns its memory, allocated in slabs of 2 MiB chunks; it is
 *    reference counted so that sessions can outlive its deletion while
 *    they are torn down;
 *  - a listener owns one listening rdma_cm id;
 *  - a session is one client: one admin queue and up to
 *    RMBD_MAX_IO_QUEUES_WIRE I/O queues, a protection domain of its own,
 *    and one memory registration per slab the client mapped.  Only queues of
 *    that session can use its rkeys.
 * rmbd_t_mutex protects exports, listeners and the links between exports
 * and sessions.  rmbd_t_sess_mutex protects the session list and the I/O
 * queue slots of a session; rdma_cm handlers take only this one, and never
 * for long, and nothing holding it waits for an rdma_cm handler.
 */
#ifndef RMBD_TARGET_H
#define RMBD_TARGET_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <linux/rmbd_target.h>
#include "proto.h"

#define RMBD_T_ADMIN_RECVS	4

struct rmbd_slab {
	struct page		**chunks;
	unsigned int		nr_chunks;
	u64			len;
};

struct rmbd_export {
	struct kref		ref;
	struct list_head	entry;		/* rmbd_t_exports */
	char			name[RMBD_EXPORT_NAME_MAX];
	u64			id;		/* random, never 0 */
	u64			size;
	u64			slab_size;
	u32			nr_slabs;
	struct rmbd_slab	*slabs;
	u64			mem;
	struct list_head	sessions;
	unsigned int		nr_sessions;
	atomic_t		nr_mapped;
	bool			deleted;
	/* A session mapped a slab for writing: it may not hold zeroes. */
	bool			written;
	/*
	 * Sessions of one host at a time unless @shared; none writes if
	 * @read_only.  Fixed when it is added.
	 */
	bool			shared;
	bool			read_only;
	/* Who may open it: any host, or those on @hosts (rmbd_t_mutex). */
	bool			any_host;
	unsigned int		nr_hosts;
	struct list_head	hosts;		/* struct rmbd_export_host */
};

struct rmbd_export_host {
	struct list_head	entry;
	char			name[RMBD_HOST_MAX];
	/* 0, or the secret the host must prove it has (never shown). */
	unsigned int		secret_len;
	u8			secret[RMBD_SECRET_MAX];
};

struct rmbd_t_session;

/* What an rdma_cm id's context points to. */
enum rmbd_t_ctx_kind {
	RMBD_T_CTX_LISTENER = 1,
	RMBD_T_CTX_QUEUE,
	RMBD_T_CTX_PARKED,	/* park.c */
};

struct rmbd_t_queue {
	enum rmbd_t_ctx_kind	kind;
	struct rmbd_t_session	*sess;
	struct rdma_cm_id	*cm_id;
	struct ib_cq		*cq;
	unsigned int		cq_size;
	u16			qid;
	u16			qtype;
	bool			has_qp;
	/* rdma_cm said DEVICE_REMOVAL (under its handler lock): not parked */
	bool			removed;
};

struct rmbd_t_recv {
	struct ib_cqe		cqe;
	struct list_head	entry;
	struct rmbd_t_session	*sess;
	void			*buf;
	u64			dma;
	u32			len;
};

/* One slab registered for one session. */
struct rmbd_t_map {
	struct ib_mr		*mr;
	struct sg_table		sgt;
	int			nents;
	u32			len;		/* bytes, while @mr is */
};

enum {
	RMBD_T_SESS_RELEASING,		/* a release was asked for */
	RMBD_T_SESS_ACCEPTED,		/* the admin queue was accepted */
	RMBD_T_SESS_RELEASE_QUEUED,	/* release_work was queued */
};

struct rmbd_t_session {
	struct list_head	entry;		/* rmbd_t_sessions */
	struct list_head	export_entry;	/* export->sessions */
	u64			id;
	unsigned long		flags;
	struct ib_device	*ibdev;
	struct rmbd_listener	*listener;	/* that accepted it; a ref */
	struct ib_pd		*pd;
	struct rmbd_export	*export;
	struct rmbd_t_map	*maps;
	/* Random, set at OPEN: where slab i appears to the peer, + i slabs. */
	u64			iova_base;
	/* The host identity the client gave at OPEN, "" for none. */
	char			host[RMBD_HOST_MAX];
	/*
	 * @up: opened, and authenticated if it must be: it holds the export,
	 * may map and add I/O queues (set under rmbd_t_mutex, once).
	 * @read_only: its slabs are registered without remote write.
	 */
	bool			up;
	bool			read_only;
	bool			authenticated;	/* proved it has the secret */
	/*
	 * Authentication, from OPEN to AUTH: the host's secret as it was at
	 * OPEN, and both challenges.  No MAP while @auth_pending; a wrong
	 * answer ends the session (@auth_failed).
	 */
	bool			auth_pending;
	bool			auth_failed;
	unsigned int		secret_len;
	u8			secret[RMBD_SECRET_MAX];
	u8			nt[RMBD_CHALLENGE_LEN];
	u8			nc[RMBD_CHALLENGE_LEN];
	/* What its I/O queues must bring to join it (OPEN reply). */
	u8			join_key[RMBD_JOIN_KEY_LEN];

	struct rmbd_t_queue	admin;
	struct rmbd_t_queue	**ioq;		/* [RMBD_MAX_IO_QUEUES_WIRE] */
	/* Its live slab registrations, and the bytes they expose */
	atomic_t		nr_mapped;
	atomic64_t		mapped_bytes;

	struct rmbd_t_recv	recv[RMBD_T_ADMIN_RECVS];
	spinlock_t		recv_lock;
	struct list_head	recv_pending;
	struct work_struct	msg_work;

	void			*send_buf;
	u64			send_dma;
	struct ib_cqe		send_cqe;
	struct ib_cqe		reg_cqe;
	struct completion	send_done;
	struct completion	reg_done;
	int			wr_status;

	/* Released when the admin queue is silent for @timeout jiffies. */
	unsigned long		last_heard;
	unsigned long		timeout;
	unsigned long		created;	/* accepted, jiffies: OPEN in 10 s */
	struct delayed_work	timeout_work;

	struct work_struct	release_work;
};

/*
 * A listener lives while it is listed and while a session it accepted
 * is not freed (@ref): @nr_sessions counts those, up to @max_sessions.
 */
struct rmbd_listener {
	enum rmbd_t_ctx_kind	kind;
	struct kref		ref;
	struct list_head	entry;
	struct work_struct	remove_work;
	struct rdma_cm_id	*cm_id;
	struct sockaddr_storage	addr;
	char			addr_str[RMBD_ADDR_MAX];
	u16			port;
	unsigned int		max_sessions;
	atomic_t		nr_sessions;
};

extern struct mutex rmbd_t_mutex;
extern struct mutex rmbd_t_sess_mutex;
extern struct list_head rmbd_t_exports;
extern struct list_head rmbd_t_sessions;
extern struct list_head rmbd_t_listeners;
extern struct workqueue_struct *rmbd_t_wq;
extern unsigned int rmbd_t_session_timeout;
extern unsigned int rmbd_t_max_sessions;

/* export.c */
struct rmbd_export *rmbd_export_find(const char *name);
int rmbd_export_create(const char *name, u64 size, u64 slab_size,
		       struct rmbd_export **out, const char **why);
void rmbd_export_put(struct rmbd_export *exp);
int rmbd_export_delete(struct rmbd_export *exp, bool force);
void rmbd_export_hosts_free(struct list_head *hosts);
struct rmbd_export_host *rmbd_export_host_find(struct rmbd_export *exp,
					       const char *host);
bool rmbd_export_allows(struct rmbd_export *exp, const char *host);
int rmbd_export_host_add(struct rmbd_export *exp, struct rmbd_export_host *h,
			 const char **why);
int rmbd_export_host_del(struct rmbd_export *exp, const char *host,
			 const char **why);
u64 rmbd_exports_mem(void);

/* session.c */
int rmbd_t_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev);
void rmbd_t_session_schedule_release(struct rmbd_t_session *sess);
void rmbd_t_release_all(void);

/* park.c */
bool rmbd_t_port_active(struct rdma_cm_id *id);
bool rmbd_t_park_ids(struct rmbd_t_session *sess);
int rmbd_t_parked_event(struct rdma_cm_id *id, struct rdma_cm_event *ev);
int rmbd_t_park_init(void);
void rmbd_t_unpark_all(void);

static inline enum rmbd_t_ctx_kind rmbd_t_ctx_kind(struct rdma_cm_id *cm_id)
{
	return *(enum rmbd_t_ctx_kind *)cm_id->context;
}

static inline bool rmbd_t_is_listener(struct rdma_cm_id *cm_id)
{
	return rmbd_t_ctx_kind(cm_id) == RMBD_T_CTX_LISTENER;
}

/* main.c */
int rmbd_t_listener_event(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev);
int rmbd_listener_add(const char *addr, u16 port, unsigned int max_sessions,
		      struct rmbd_listener **out, const char **why);
void rmbd_listener_put(struct rmbd_listener *l);
int rmbd_listener_del(const char *addr, u16 port, const char **why);

/* netlink.c */
int rmbd_t_netlink_init(void);
void rmbd_t_notify_session(struct rmbd_t_session *sess, u8 event);
void rmbd_t_netlink_exit(void);

#endif /* RMBD_TARGET_H */
