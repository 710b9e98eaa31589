/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmbd client: block devices backed by memory on an rmbd target.
 *
 * A device (struct rmbd_c_dev) is the block device: its blk-mq tag set
 * and disk, its index and state, and how long its I/O waits for a lost
 * session (the loss timeout).  It reaches its targets through its legs
 * (struct rmbd_c_leg; a mirror's copies): each the session to one export
 * of one target, with the admin exchange, the RDMA device and the memory
 * regions registered there, the export's slabs, the keepalive, the error
 * work and the reconnects.
 *
 * A leg has an admin queue (index 0) used while connecting, then one
 * queue (struct rmbd_c_queue) per blk-mq hardware queue: N
 * interrupt-driven I/O queues (index 1..N) and P polled ones (N+1..N+P).
 * Each is an RC QP that only issues one-sided RDMA READ and WRITE.  The
 * target's slabs are mapped at connect time; a request never crosses a
 * slab (chunk_sectors), so it is one work request to one (address, rkey).
 *
 * Locks, outer first; none is taken with one after it held:
 *  1. leg->recovery_lock: one leg's recovery, reconnect, replace and stop.
 *     Two at once only as a replace takes them (the new leg's, then the
 *     old one's, nested 1) and the disk's add (every leg's, nested by
 *     index).
 *  2. rmbd_c_events_sem (read: an event being sent), then
 *  3. rmbd_c_mutex: the device list, a device's legs and connect,
 *     disconnect and replace bookkeeping.  Never held across I/O the
 *     device itself must complete (its recovery takes it).
 *  4. q->poll_lock: a polled completion may report a broken leg, which
 *     takes dev->state_lock under it.
 *  5. dev->state_lock (state.c; any context, interrupts off), and apart
 *     from it dev->spare_lock and dev->uevent_lock: nothing is taken
 *     under these but the block layer's and the workqueues' own.
 *  6. dev->sync_lock, q->lock: the I/O path's, innermost.
 */
#ifndef RMBD_CLIENT_H
#define RMBD_CLIENT_H

#include <linux/blk-mq.h>
#include <linux/kfifo.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mempool.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>
#include <rdma/mr_pool.h>
#include <rdma/rdma_cm.h>
#include <linux/rmbd_client.h>
#include <linux/rmbd_target.h>
#include "proto.h"

#define RMBD_C_MINORS		16
#define RMBD_C_ADMIN_DEPTH	2
/*
 * The segments of a request: 1 MiB of scattered pages, the largest
 * request, so that a 1 MiB read is one request.  A work request carries
 * what the RDMA device allows (often about 30), so a request may post
 * several, up to RMBD_C_MAX_REQ_WRS.
 */
#define RMBD_C_MAX_SEGS		256
#define RMBD_C_MAX_REQ_WRS	16
/* The least queue depth a device falls back to (rmbd_c_queue_establish()) */
#define RMBD_C_MIN_DEPTH	16
/* The largest request */
#define RMBD_C_MAX_IO_BYTES	(1U << 20)
/*
 * Sessions a request may break with a failure of its own (an error, not
 * a flush; a refused post; a timeout) before it fails with EIO: one that
 * a target or device refuses every time must not loop through reconnects.
 */
#define RMBD_C_MAX_FAULTS	3
/* How long an open must last for a disconnect to take it for a user */
#define RMBD_C_OPEN_GRACE_MS	2000

enum {
	RMBD_C_Q_ALLOCATED,	/* QP and CQ exist */
	RMBD_C_Q_LIVE,		/* connected; I/O may be posted */
	RMBD_C_Q_POLLABLE,	/* blk-mq may reap the poll CQ (not draining) */
};

/*
 * enum rmbd_c_state - a device's state (state.c, the one place that
 * changes it; the table of its transitions is in Documentation/design.rst)
 * @RMBD_C_NEW: its legs are being set up; a failure fails the connect
 * @RMBD_C_ADDING: its disk is being added (a partition scan does I/O):
 *	a failure recovers as on a live device
 * @RMBD_C_LIVE: I/O flows; legs that are up hold all of its data
 * @RMBD_C_RECONNECTING: no leg that is up holds some of its data: I/O
 *	waits for one, up to the loss timeout
 * @RMBD_C_FAILED: given up: I/O fails until it is disconnected
 * @RMBD_C_DELETING: being disconnected: I/O fails
 */
enum rmbd_c_state {
	RMBD_C_NEW,
	RMBD_C_ADDING,
	RMBD_C_LIVE,
	RMBD_C_RECONNECTING,
	RMBD_C_FAILED,
	RMBD_C_DELETING,
};

/*
 * rmbd_c_dev.flags: what becomes of the device's requests, as its state
 * says (set and cleared by state.c alone, for the I/O path to read
 * without a lock)
 */
enum {
	RMBD_C_DEV_RECOVERING,	/* RECONNECTING: requests wait on the requeue list */
	RMBD_C_DEV_DEAD,	/* FAILED or DELETING: requests fail with EIO */
	RMBD_C_DEV_NO_RESYNC,	/* a replace holds the resync off */
};

/* rmbd_c_leg.flags */
enum {
	RMBD_C_LEG_IBDEV_GONE,	/* rdma_cm removes the RDMA device under us */
	RMBD_C_LEG_ERR_PENDING,	/* err_work found recovery_lock taken */
	RMBD_C_LEG_UP,		/* its session is set up and not failed */
	/*
	 * It holds every write the device completed: reads may go to it.
	 * Cleared, under dev->sync_lock, when a write completes without it
	 * (its dirty map then says where); set at connect.
	 */
	RMBD_C_LEG_IN_SYNC,
	RMBD_C_LEG_RECOVERING,	/* lost: its reconnect_work is on */
	RMBD_C_LEG_FAILED,	/* refused for good: no more reconnects */
	RMBD_C_LEG_PORT_WAIT,	/* the reconnect said it waits for the port */
};

struct rmbd_c_dev;
struct rmbd_c_leg;

struct rmbd_c_queue {
	struct rmbd_c_leg	*leg;
	unsigned int		idx;		/* 0: admin */
	unsigned int		depth;
	unsigned long		flags;
	struct rdma_cm_id	*cm_id;
	struct ib_cq		*cq;
	unsigned int		cq_size;
	bool			cq_from_pool;
	bool			poll;		/* IB_POLL_DIRECT, blk-mq polls */
	struct completion	cm_done;
	/* Serialises polling with destroying the CQ (poll queues). */
	spinlock_t		poll_lock;

	/*
	 * Work requests of one dispatch batch are posted together when blk-mq
	 * says the batch ended; only the last one is signaled.  Posted
	 * requests sit on @posted in posting order: a completion covers every
	 * request posted before it on this queue (RC send queues complete in
	 * order).  @lock serialises posting and completing on this queue only.
	 */
	spinlock_t		lock;
	struct list_head	batch;
	struct list_head	posted;
	/*
	 * A soft provider's batches, posted from another CPU while the
	 * queue is busy (rmbd_c_queue_commit()); under @lock: whether it
	 * does now, and its idle commits in a row, or inline posts since.
	 */
	struct work_struct	post_work;
	bool			handoff;
	unsigned int		streak;
	unsigned long		handoff_at;	/* jiffies of the last one */
	/* READ sinks, one per request, when leg->read_mr (iWARP) */
	struct list_head	read_mrs;
	/*
	 * The send queue's slots (rmbd_c_wr_budget()), and how many of them
	 * the requests prepared for it hold (io->wrs) until they complete
	 */
	unsigned int		wr_budget;
	atomic_t		wr_used;
	int			cm_error;
	const char		*cm_why;
};

struct rmbd_c_slab {
	u64			addr;
	u64			len;
	u32			rkey;
};

/* Legs that hold a copy of a sector: every leg of a mirror */
#define RMBD_C_MAX_COPIES	RMBD_MAX_LEGS
/* The device's dirty map: regions of 1 MiB, at most 2^20 of them */
#define RMBD_C_REGION_SHIFT	20
#define RMBD_C_MAX_REGIONS_SHIFT 20
/*
 * Writes in flight, counted by region modulo this: the resync holds off
 * the writes of one such bucket while it copies a region (layout.c).
 */
#define RMBD_C_BARRIER_BUCKETS	64
/* A resync tells how far it is this often (RMBD_DEV_EVENT_RESYNC) */
#define RMBD_C_RESYNC_EVENT_SECS 5
/* The resync's buffer, what it copies at a time at most */
#define RMBD_C_RESYNC_PAGES	256

struct rmbd_c_req;

/*
 * Segments a request maps without an allocation: a 4 KiB one has one,
 * the zero writes of a discard two (rmbd_c_setup_zeroes()).
 */
#define RMBD_C_INLINE_SEGS	4
/*
 * An I/O queue's send queue has room for every request at its smallest
 * and for one in this many at its largest: see rmbd_c_wr_budget().
 */
#define RMBD_C_LARGE_SHARE	4

/*
 * A request's work on one leg: its work requests on one of the leg's
 * queues, in the blk-mq PDU after the request (struct rmbd_c_req), one
 * per copy.  @wr is the last work request and carries @cqe.  Before it go
 * @parts, unsignaled, when the request has more segments than one work
 * request takes, or when it is a discard that crosses a slab boundary
 * (discards may merge across chunk_sectors); @head is the first.  It
 * ends with dev->req_wrs - 1 parts, enough for any leg: dev->io_size
 * bytes in all.
 *
 * A request of up to RMBD_C_INLINE_SEGS segments maps them into the
 * scatterlist and SGEs held here; a larger one takes both, for
 * dev->max_segs entries, from dev->seg_pool as long as it is in flight.
 * So a request costs what it uses, not what the largest one would.
 */
struct rmbd_c_io {
	struct ib_cqe		cqe;
	struct ib_cqe		part_cqe;
	struct rmbd_c_req	*req;
	struct rmbd_c_queue	*queue;
	struct list_head	entry;		/* queue->batch or ->posted */
	struct ib_send_wr	*head;
	struct ib_rdma_wr	wr;
	blk_status_t		status;
	bool			done;		/* completed, since queued */
	unsigned int		wrs;		/* of queue->wr_budget */
	int			nents;		/* DMA-mapped entries of @sgl */
	struct scatterlist	*sgl;		/* @inline_sgl, or pooled */
	struct ib_sge		*sge;		/* @inline_sge, or pooled */
	/* A READ's registered sink (leg->read_mr), from queue->read_mrs */
	struct ib_mr		*mr;
	struct ib_reg_wr	reg;
	struct scatterlist	inline_sgl[RMBD_C_INLINE_SEGS];
	struct ib_sge		inline_sge[RMBD_C_INLINE_SEGS];
	struct ib_rdma_wr	parts[];
};

/*
 * Per-request state, in the blk-mq PDU: only a request of many segments
 * takes more (rmbd_c_io, dev->seg_pool).
 * The request completes when the last of its @pending parts (@io) did,
 * with an error if one of them failed.
 */
struct rmbd_c_req {
	blk_status_t		status;
	/* Sessions on which it failed itself (not flushed), this request */
	u8			faults;
	u8			nr_io;		/* parts it was sent as */
	/*
	 * A read: the legs it failed on, by index (rmbd_c_read_leg() starts
	 * over when it failed on every leg that holds the data)
	 */
	u16			tried;
	/*
	 * A write of a device with several legs: the regions, from
	 * @wr_region on, it is counted in (dev->wr_inflight); 0 when none.
	 */
	u8			wr_regions;
	unsigned long		wr_region;
#define RMBD_C_TRIED_BITS	16
	atomic_t		pending;
	struct rmbd_c_io	*io[RMBD_C_MAX_COPIES];
};

/*
 * A leg: the session to one export of one target, for device @dev.  What
 * it learns at first connect (the export's geometry, the request layout
 * its RDMA device allows) stays: a reconnect must find the same again.
 */
struct rmbd_c_leg {
	struct rmbd_c_dev	*dev;
	unsigned int		index;		/* in dev->legs[] */
	unsigned long		flags;
	/*
	 * What its queues call when one of them breaks (a failed work
	 * request or post, a connection lost): rmbd_c_schedule_fail().
	 */
	void			(*broken)(struct rmbd_c_leg *leg);
	/* Its queues are being torn down for good (rmbd_c_leg_stop()) */
	bool			stopping;
	/* On dev->retired, once replaced (rmbd_c_dev_replace()) */
	struct list_head	retired_entry;
	/*
	 * The device's regions (dev->region_shift) that it may not hold as
	 * the device completed them: set with atomic bit operations when a
	 * write completes without it, under dev->sync_lock.
	 */
	unsigned long		*dirty;
	struct sockaddr_storage	addr;
	char			addr_str[RMBD_ADDR_MAX];
	u16			port;
	char			export_name[RMBD_EXPORT_NAME_MAX];
	bool			shared;		/* connected with "shared" */
	/* Asked for, or the export is (since the first OPEN) */
	bool			read_only;
	/* Who holds the export, when the target refused it as in use. */
	char			holder[RMBD_HOST_MAX];
	/* The last OPEN was refused for good (rmbd_c_final()). */
	bool			refused;
	/*
	 * NULL, or HMAC-SHA-256 keyed with the host's secret, made at
	 * connect: every connect (reconnects too) authenticates both ways,
	 * with nothing to allocate.
	 */
	struct crypto_shash	*auth_tfm;

	u64			session_id;
	u64			export_id;
	/* At the first OPEN: the export was never written (RMBD_OPEN_BLANK). */
	bool			blank;
	/* The target takes RMBD_OP_MAP_RANGE (its last OPEN reply said) */
	bool			map_range;
	/* From the OPEN reply: what the I/O queues bring to join. */
	u8			join_key[RMBD_JOIN_KEY_LEN];
	u64			size;
	u64			slab_size;
	unsigned int		slab_shift;
	u32			nr_slabs;
	struct rmbd_c_slab	*slabs;

	struct ib_device	*ibdev;
	u32			ibport;		/* of the session's queues */
	struct ib_pd		*pd;
	unsigned int		max_segs;	/* of a request */
	unsigned int		wr_sges;	/* SGEs of an RDMA WRITE */
	unsigned int		max_seg_size;	/* of a request segment (DMA) */
	unsigned int		rd_sges;	/* SGEs of an RDMA READ */
	/*
	 * An RDMA READ lands in a memory region registered for it with
	 * REMOTE_WRITE, not at the PD's local DMA lkey: iWARP requires it
	 * (and the read_mr parameter asks for it everywhere, for tests).
	 * Each request's READ then registers its pages (REG_MR), reads into
	 * them, and invalidates the region as it completes: with READ with
	 * invalidate on iWARP, a fenced LOCAL_INV elsewhere.
	 */
	bool			read_mr;
	bool			read_inv;	/* READ with invalidate */
	unsigned int		mr_pages;	/* pages of a READ sink */
	/*
	 * The provider does its work in the poster's context or its own
	 * softirqs (rxe, siw) rather than in the NIC: see
	 * rmbd_c_post_begin().
	 */
	bool			soft_post;
	/*
	 * iWARP: an RDMA WRITE completes once it is handed to the transport
	 * (siw: to TCP), not once the target placed it, and before an RDMA
	 * READ posted ahead of it has its response.  So every request's
	 * last work request is signaled and its completion covers that
	 * request alone, and a write ends with a one-byte RDMA READ into
	 * @flush_mr (@flush_sge) that the target answers only once the WRITEs
	 * before it are placed.  Elsewhere the send queue completes in order, a WRITE
	 * when the target's RDMA device acknowledged it, and the last request
	 * of a batch covers the batch.
	 */
	bool			signal_each;
	struct ib_sge		flush_sge;
	struct ib_mr		*flush_mr;
	struct page		*flush_page;
	u64			flush_dma;
	unsigned int		req_wrs;	/* work requests of a request */

	/*
	 * Discard and write zeroes are RDMA WRITEs from @zero_mr: @zero_len
	 * bytes of local address space, every page of it the zero page.
	 * @zero_len is 0 when the RDMA device cannot fast-register memory.
	 */
	struct ib_mr		*zero_mr;
	u64			zero_dma;
	u32			zero_len;
	unsigned int		nr_queues;	/* admin + I/O + poll */
	struct rmbd_c_queue	*queues;	/* [nr_queues] */

	/* admin messages, one at a time */
	void			*send_buf;
	u64			send_dma;
	void			*recv_buf;
	u64			recv_dma;
	struct ib_cqe		send_cqe;
	struct ib_cqe		recv_cqe;
	struct completion	send_done;
	struct completion	recv_done;
	int			send_status;
	int			recv_status;
	u32			recv_len;
	u32			tag;
	/*
	 * One attempt to set the session up (rmbd_c_leg_start()) ends by
	 * @deadline (jiffies; 0 outside one), and when @abort_gen moves
	 * past @start_gen (rmbd_c_leg_abort(): a disconnect, the RDMA
	 * device's removal, the module's unload).  Its waits are killable.
	 */
	unsigned long		deadline;
	atomic_t		abort_gen;
	int			start_gen;

	/*
	 * Recovery: err_work tears a broken session down and parks the
	 * requests; reconnect_work tries again every dev->reconnect_delay s
	 * (and the device's loss_work fails the parked I/O when its
	 * loss_timeout has passed).  @recovery_lock serialises teardown and
	 * reconnect (it is taken in memalloc_noio scopes only, and dropped
	 * with rmbd_c_recovery_unlock()).  A reconnect attempt may hold it
	 * for long when memory or the network is gone: err_work does not
	 * wait for it, the holder runs it again.
	 */
	struct work_struct	err_work;
	struct delayed_work	reconnect_work;
	struct mutex		recovery_lock;
	u32			nr_reconnects;
	/* Since when it is down while the device is live (jiffies); 0: up */
	unsigned long		down_since;
	/* When its session last came up (jiffies) */
	unsigned long		up_since;
	/* Since when its reconnect waits for the port (RMBD_C_LEG_PORT_WAIT) */
	unsigned long		port_wait_since;
	/* RMBD_OP_KEEPALIVE every @ka_interval jiffies; 0: the target wants none */
	struct delayed_work	ka_work;
	unsigned long		ka_interval;
};

/* A spare leg: where it would go */
struct rmbd_c_spare {
	char			addr[RMBD_ADDR_MAX];
	u16			port;
	char			export_name[RMBD_EXPORT_NAME_MAX];
};

/* The kinds of request a device counts */
enum {
	RMBD_C_STAT_READ,
	RMBD_C_STAT_WRITE,
	RMBD_C_STAT_DISCARD,	/* and write zeroes */
	RMBD_C_STAT_OPS,
};

/*
 * Counters of one blk-mq hardware queue of a device: requests ended, with
 * their bytes, by kind; requests ended with an error; times a request
 * went back to wait (parked while the device recovers, or held off by a
 * resync or a full queue); timeouts.  One cache line each: a queue's
 * CPUs, and the completion vectors of its legs' queues, update them.
 */
struct rmbd_c_stats {
	atomic64_t		ios[RMBD_C_STAT_OPS];
	atomic64_t		bytes[RMBD_C_STAT_OPS];
	atomic64_t		errors;
	atomic64_t		requeues;
	atomic64_t		timeouts;
	/* Its started requests, as the last count under rmbd_c_mutex found */
	u32			in_flight;
} ____cacheline_aligned_in_smp;

struct rmbd_c_dev {
	struct kref		ref;		/* the list's, and remove_one's */
	struct list_head	entry;
	int			index;
	/*
	 * enum rmbd_c_state, changed by rmbd_c_dev_change_state() alone,
	 * under @state_lock (any context: a completion may find the data
	 * gone); read with READ_ONCE().  @down_untold: it waits since a
	 * completion or a request found its data gone, and the leg's error
	 * work has still to say so.
	 */
	u8			state;
	bool			down_untold;
	spinlock_t		state_lock;
	/*
	 * rmbd_c_dev_connect() returned it and no disconnect began (under
	 * rmbd_c_mutex): it may be disconnected, and its counters read.
	 */
	bool			connected;
	/* A leg is being replaced: not to be disconnected, nor replaced */
	bool			replacing;
	/* The new leg of that replace, until it is in place */
	struct rmbd_c_leg	*new_leg;
	unsigned long		flags;
	/* The disk's: asked for, or the leg's export is */
	bool			read_only;
	bool			shared;		/* connected with "shared" */
	char			host[RMBD_HOST_MAX];	/* "" for none */
	/*
	 * "ADDR-EXPORT" of the first leg it was connected with, its
	 * /dev/disk/by-id name: kept when a replace or a spare changes the
	 * leg, so that the name of a mounted device does not move.
	 */
	char			id[RMBD_ADDR_MAX + RMBD_EXPORT_NAME_MAX];
	/* The host's secret, for the legs a replace adds; NULL for none */
	u8			*secret;
	unsigned int		secret_len;
	/* blk-mq's hardware queues: each has its queue on the leg */
	unsigned int		nr_io_queues;
	unsigned int		nr_poll_queues;
	/* The tag set's; the leg's first connect may lower it */
	unsigned int		queue_depth;
	/* The disk's discard limit: a reconnect must offer at least this */
	u32			zero_limit;
	/* Bytes of a request's part for one leg in the PDU (rmbd_c_io) */
	unsigned int		io_size;
	/*
	 * What such a part takes, whatever its leg (rmbd_c_dev_limits()):
	 * a request's segments, as many as the leg that takes the fewest
	 * (from @seg_pool beyond RMBD_C_INLINE_SEGS), and the work requests
	 * of the leg that needs the most for them.
	 */
	unsigned int		max_segs;
	unsigned int		req_wrs;

	/*
	 * The leg reconnects every @reconnect_delay s; loss_work fails the
	 * parked I/O when @loss_timeout s have passed since @loss_start.
	 */
	struct delayed_work	loss_work;
	u32			reconnect_delay;
	u32			loss_timeout;
	unsigned long		loss_start;	/* jiffies */
	/*
	 * Its legs (enum rmbd_layout): a mirror's each hold the whole
	 * device; a pool's extents (1 << @extent_shift bytes, the smallest
	 * slab size) are each on @copies legs, placed as layout.c says (a
	 * mirror is the case @copies == @nr_legs).  The block layer's limits
	 * (size, segments, request layout, read sinks) are the device's own,
	 * that every leg satisfies (rmbd_c_dev_limits()).  Each leg holds
	 * @leg_bytes of it.
	 */
	u8			layout;
	u8			copies;
	unsigned int		extent_shift;
	u64			leg_bytes;
	u64			size;		/* bytes, once the disk is set up */
	unsigned int		nr_legs;
	struct rmbd_c_leg	*legs[RMBD_MAX_LEGS];
	/*
	 * Legs replaced, their sessions gone: freed with the device, as
	 * rmbd_c_remove_one() may still hold one it found before.
	 */
	struct list_head	retired;
	/*
	 * Spares named at connect, not used yet: spare_work replaces a leg
	 * failed for good, or down for @loss_timeout s, by the first, which
	 * stays listed until it took the place or was given up.  Changed
	 * under @spare_lock, which readers take; once @spares_stopped is set
	 * (under it), nothing queues spare_work.
	 */
	spinlock_t		spare_lock;
	struct rmbd_c_spare	spares[RMBD_MAX_SPARES];
	unsigned int		nr_spares;
	bool			spares_stopped;
	struct delayed_work	spare_work;
	/*
	 * Serialises what decides that a leg misses a write: a write that
	 * completes without a leg (RMBD_C_LEG_IN_SYNC, leg->dirty) must have
	 * reached a leg that is in sync at that moment.
	 */
	spinlock_t		sync_lock;
	/* The dirty maps' regions: 1 << @region_shift bytes each */
	unsigned int		region_shift;
	unsigned long		nr_regions;
	/*
	 * The resync (rmbd_c_resync_work()) copies a stale leg's dirty
	 * regions from a leg in sync: it reads each region through the disk
	 * into @resync_pages and writes it back, to every leg that is up.
	 * Meanwhile writes of the region's bucket (@resync_bucket, else -1)
	 * wait, and it waits for those in flight (@wr_inflight) to end, so
	 * that no write falls between its read and its write.  Its own
	 * requests are driver-private (rmbd_c_rq_op()) on the tag set's
	 * reserved tag: the writes it holds keep theirs.
	 */
	struct work_struct	resync_work;
	struct page		**resync_pages;
	int			resync_bucket;
	wait_queue_head_t	resync_wait;
	atomic_t		wr_inflight[RMBD_C_BARRIER_BUCKETS];
	/*
	 * The disk's change uevents (sysfs.c): rmbd_c_uevent() queues each
	 * event with the state it left, allocating nothing, and @uevent_work
	 * sends them in order.  Queued only while @uevents_on (from the
	 * disk's add to its delete), under @uevent_lock.
	 */
	spinlock_t		uevent_lock;
	bool			uevents_on;
	/*
	 * One per hardware queue, from the tag set's allocation on; read by
	 * netlink while @connected.
	 */
	struct rmbd_c_stats	*stats;
	/*
	 * Scatterlists and SGEs of requests of more than RMBD_C_INLINE_SEGS
	 * segments, max_segs of each an element; two elements per leg are
	 * held back for when the page allocator has none.
	 */
	mempool_t		*seg_pool;
	DECLARE_KFIFO(uevents, u16, 16);
	struct work_struct	uevent_work;
	struct blk_mq_tag_set	tag_set;
	struct gendisk		*disk;
};

/*
 * @rq's operation as the legs carry it out: the resync's own requests
 * (layout.c) are driver-private, REQ_OP_DRV_IN to read and REQ_OP_DRV_OUT
 * to write, so that they may take the tag set's reserved tag.
 */
static inline enum req_op rmbd_c_rq_op(struct request *rq)
{
	switch (req_op(rq)) {
	case REQ_OP_DRV_IN:
		return REQ_OP_READ;
	case REQ_OP_DRV_OUT:
		return REQ_OP_WRITE;
	default:
		return req_op(rq);
	}
}

/* The counters of @rq's hardware queue */
static inline struct rmbd_c_stats *rmbd_c_rq_stats(struct request *rq)
{
	struct rmbd_c_dev *dev = rq->q->queuedata;

	return &dev->stats[rq->mq_hctx->queue_num];
}

static inline void rmbd_c_count_requeue(struct request *rq)
{
	atomic64_inc(&rmbd_c_rq_stats(rq)->requeues);
}

/* @leg's queue for blk-mq's hardware queue @hctx */
static inline struct rmbd_c_queue *
rmbd_c_leg_queue(struct rmbd_c_leg *leg, struct blk_mq_hw_ctx *hctx)
{
	return &leg->queues[hctx->queue_num + 1];
}

extern struct mutex rmbd_c_mutex;
extern struct list_head rmbd_c_devs;
extern struct workqueue_struct *rmbd_c_wq;
extern struct workqueue_struct *rmbd_c_post_wq;

/* leg.c: the session to the target */
int rmbd_c_leg_start(struct rmbd_c_leg *leg, const char **why);
void rmbd_c_leg_abort(struct rmbd_c_leg *leg);
void rmbd_c_leg_halt(struct rmbd_c_leg *leg);
bool rmbd_c_leg_port_active(struct rmbd_c_leg *leg);
void rmbd_c_leg_flush(struct rmbd_c_leg *leg);
void rmbd_c_leg_teardown(struct rmbd_c_leg *leg);
void rmbd_c_leg_teardown_quiesced(struct rmbd_c_leg *leg);
void rmbd_c_leg_stop(struct rmbd_c_leg *leg);
void rmbd_c_leg_lost(struct rmbd_c_leg *leg);
void rmbd_c_schedule_fail(struct rmbd_c_leg *leg);
void rmbd_c_queues_fail(struct rmbd_c_leg *leg);
void rmbd_c_keepalive_work(struct work_struct *work);
void rmbd_c_keepalive_start(struct rmbd_c_leg *leg);
void rmbd_c_recover(struct rmbd_c_leg *leg);
void rmbd_c_recovery_unlock(struct rmbd_c_leg *leg);
void rmbd_c_err_work(struct work_struct *work);
void rmbd_c_reconnect_work(struct work_struct *work);

/* queue.c: queue pairs and the I/O on them */
int rmbd_c_queue_resolve(struct rmbd_c_queue *q, const char **why);
int rmbd_c_queue_establish(struct rmbd_c_queue *q, unsigned int min_depth,
			   const char **why);
void rmbd_c_queue_destroy_qp(struct rmbd_c_queue *q);
void rmbd_c_queue_abort(struct rmbd_c_queue *q);
void rmbd_c_queue_drain(struct rmbd_c_queue *q);
void rmbd_c_post_begin(struct rmbd_c_leg *leg);
void rmbd_c_post_end(struct rmbd_c_leg *leg);
void rmbd_c_read_write_done(struct ib_cq *cq, struct ib_wc *wc);
void rmbd_c_part_done(struct ib_cq *cq, struct ib_wc *wc);
void rmbd_c_post_batch(struct rmbd_c_queue *q);
void rmbd_c_queue_commit(struct rmbd_c_queue *q);
bool rmbd_c_queue_post_stuck(struct rmbd_c_queue *q);
void rmbd_c_post_work(struct work_struct *work);
int rmbd_c_poll_cq(struct rmbd_c_queue *q);
blk_status_t rmbd_c_io_prep(struct rmbd_c_queue *q, struct rmbd_c_io *io,
			    struct request *rq, u64 idx, u64 off);
void rmbd_c_io_queue(struct rmbd_c_queue *q, struct rmbd_c_io *io);
void rmbd_c_io_unprep(struct rmbd_c_io *io);
unsigned int rmbd_c_wr_budget(const struct rmbd_c_leg *leg,
			      unsigned int depth);

/* @req broke its session itself (RMBD_C_MAX_FAULTS); saturates. */
static inline void rmbd_c_req_fault(struct rmbd_c_req *req)
{
	if (req->faults < U8_MAX)
		req->faults++;
}

/* dev.c: the block device */
struct rmbd_c_leg_args {
	const char	*addr;
	u16		port;
	const char	*export_name;
	const struct nlattr *nla;	/* its RMBD_CLIENT_ATTR_LEG, or NULL */
};

struct rmbd_c_connect_args {
	unsigned int		nr_legs;
	/* The legs, then the spares */
	struct rmbd_c_leg_args	legs[RMBD_MAX_LEGS + RMBD_MAX_SPARES];
	unsigned int		nr_spares;
	u8		layout;
	u8		copies;		/* of each extent: R */
	const char	*host;		/* valid, or "" */
	const u8	*secret;	/* NULL, or secret_len bytes */
	unsigned int	secret_len;
	u32		nr_io_queues;
	u32		nr_poll_queues;
	u32		queue_depth;
	u32		reconnect_delay;
	u32		loss_timeout;
	bool		shared;
	bool		read_only;
	/* Output: who holds the export, when refused as in use; or "". */
	char		holder[RMBD_HOST_MAX];
	/* Output: the leg (or spare, after the legs) that failed, or -1 */
	int		failed_leg;
};

int rmbd_c_dev_connect(struct rmbd_c_connect_args *args, int *index,
		       const char **why);
int rmbd_c_dev_disconnect(int index, bool force, const char **why);
int rmbd_c_dev_replace(int index, unsigned int i,
		       const struct rmbd_c_leg_args *la,
		       const struct rmbd_c_leg *expect, bool *new_leg_failed,
		       const char **why);
struct rmbd_c_dev *rmbd_c_dev_find(int index);
void rmbd_c_release_requests(struct rmbd_c_dev *dev);
void rmbd_c_spare_kick(struct rmbd_c_dev *dev, unsigned long delay);
void rmbd_c_dev_put(struct rmbd_c_dev *dev);
void rmbd_c_end_request(struct request *rq, blk_status_t status);
int rmbd_c_dev_init(void);
void rmbd_c_dev_exit(void);

/* layout.c: which legs hold what, and what they missed */
u64 rmbd_c_layout_size(struct rmbd_c_dev *dev, u64 leg_size, u64 extent);
bool rmbd_c_dev_readable(struct rmbd_c_dev *dev);
bool rmbd_c_dev_readable_without(struct rmbd_c_dev *dev, unsigned int i);
bool rmbd_c_dev_recoverable(struct rmbd_c_dev *dev);
void rmbd_c_leg_mark_held(struct rmbd_c_leg *leg);
void rmbd_c_leg_missed(struct rmbd_c_leg *leg, u64 pos, u64 len);
struct rmbd_c_leg *rmbd_c_read_leg(struct rmbd_c_dev *dev,
				   struct rmbd_c_req *req, struct request *rq,
				   u64 *leg_pos);
void rmbd_c_unprep(struct rmbd_c_req *req, unsigned int n);
blk_status_t rmbd_c_write_parts(struct rmbd_c_dev *dev,
				struct blk_mq_hw_ctx *hctx, struct rmbd_c_req *req,
				struct request *rq, u64 pos, unsigned int *nr);
blk_status_t rmbd_c_read_parts(struct rmbd_c_dev *dev,
			       struct blk_mq_hw_ctx *hctx, struct rmbd_c_req *req,
			       struct request *rq, unsigned int *nr);

/* What rmbd_c_legs_decide() says of a request that failed on some legs */
enum rmbd_c_verdict {
	RMBD_C_UNDECIDED,	/* as on a device of one leg: wait, or fail */
	RMBD_C_SUCCEEDED,	/* a leg that holds every write took it */
	RMBD_C_RETRY,		/* a read: on a leg it has not tried */
};

enum rmbd_c_verdict rmbd_c_legs_decide(struct rmbd_c_dev *dev,
				       struct request *rq);
int rmbd_c_dirty_alloc(struct rmbd_c_dev *dev);
void rmbd_c_initial_sync(struct rmbd_c_dev *dev);
void rmbd_c_dirty_free(struct rmbd_c_dev *dev);
bool rmbd_c_write_enter(struct rmbd_c_dev *dev, struct request *rq);
void rmbd_c_write_exit(struct rmbd_c_dev *dev, struct rmbd_c_req *req);
void rmbd_c_resync_start(struct rmbd_c_dev *dev);
void rmbd_c_resync_work(struct work_struct *work);

/* state.c: the device's state */
u8 rmbd_c_dev_uapi_state(struct rmbd_c_dev *dev);
void rmbd_c_dev_state_init(struct rmbd_c_dev *dev);
bool rmbd_c_dev_settle(struct rmbd_c_dev *dev);
bool rmbd_c_dev_change_state(struct rmbd_c_dev *dev, enum rmbd_c_state new);
enum rmbd_c_state rmbd_c_dev_unreadable(struct rmbd_c_dev *dev);
void rmbd_c_dev_revive(struct rmbd_c_dev *dev);
bool rmbd_c_dev_leg_down(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg);
bool rmbd_c_dev_leg_up(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg,
		       bool *gone);
void rmbd_c_dev_leg_refused(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg);
bool rmbd_c_dev_loss_expired(struct rmbd_c_dev *dev);

/* netlink.c */
int rmbd_c_netlink_init(void);
u8 rmbd_c_leg_state(struct rmbd_c_leg *leg);
void rmbd_c_notify(struct rmbd_c_dev *dev, u8 event);
void rmbd_c_notify_progress(struct rmbd_c_dev *dev, u8 event);
void rmbd_c_netlink_exit(void);

/* sysfs.c */
extern const struct attribute_group *rmbd_c_attr_groups[];
void rmbd_c_uevent_init(struct rmbd_c_dev *dev);
void rmbd_c_uevent_start(struct rmbd_c_dev *dev);
void rmbd_c_uevent_stop(struct rmbd_c_dev *dev);
void rmbd_c_uevent(struct rmbd_c_dev *dev, u8 event);

#endif /* RMBD_CLIENT_H */
