// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: the block device.  Its blk-mq queues send each request to
 * the legs that hold its sectors (a mirror: a write to every leg that is
 * up, a read to one that holds every write), and decide its fate when a
 * leg fails it; connect, disconnect, and giving up when no leg with the
 * data comes back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/error-injection.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/idr.h>
#include <linux/inet.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <crypto/hash.h>
#include "auth.h"
#include "client.h"

/*
 * Elements of the devices' seg_pool: a slab cache of its own keeps freed
 * ones for the next request, where kmalloc() would hand each of these
 * 12 KiB back to the page allocator and ask it for an order-2 block again.
 */
static struct kmem_cache *rmbd_c_seg_cache;

static DEFINE_IDA(rmbd_c_ida);

/* A read's tried legs are bits of rmbd_c_req.tried. */
static_assert(RMBD_MAX_LEGS <= RMBD_C_TRIED_BITS);
static int rmbd_c_major;

#define RMBD_C_IO_TIMEOUT	(30 * HZ)

/*
 * Recovering: @rq (started) waits on the requeue list, unkicked, until the
 * session is back or the device gives up, when rmbd_c_release_requests()
 * kicks the list.  Kick it here if that happened meanwhile.
 */
static void rmbd_c_park(struct rmbd_c_dev *dev, struct request *rq)
{
	rmbd_c_count_requeue(rq);
	blk_mq_requeue_request(rq, false);
	/* Pairs with the barrier in rmbd_c_release_requests(). */
	smp_mb();
	if (!test_bit(RMBD_C_DEV_RECOVERING, &dev->flags) ||
	    test_bit(RMBD_C_DEV_DEAD, &dev->flags))
		blk_mq_kick_requeue_list(dev->disk->queue);
}

/*
 * Recovering, and @rq's submitter (md's failfast, dm-multipath, readahead)
 * would rather see a path error now than wait: a failed readahead is
 * read again when it is needed, so it fails without a log line.
 */
static blk_status_t rmbd_c_fail_fast(struct request *rq)
{
	if (rq->cmd_flags & REQ_RAHEAD)
		rq->rq_flags |= RQF_QUIET;
	return BLK_STS_TRANSPORT;
}

/* Post what ->queue_rq() queued on the legs' queues of @hctx. */
static void rmbd_c_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct rmbd_c_dev *dev = hctx->driver_data;
	unsigned int i;

	for (i = 0; i < dev->nr_legs; i++)
		rmbd_c_queue_commit(rmbd_c_leg_queue(dev->legs[i], hctx));
}

/*
 * No leg that is up holds the data @rq needs: it waits for one, as all
 * requests do while the device recovers, or fails at once without a loss
 * timeout.
 */
static blk_status_t rmbd_c_wait_leg(struct rmbd_c_dev *dev,
				    struct blk_mq_hw_ctx *hctx,
				    struct request *rq, bool last)
{
	if (!dev->loss_timeout)
		return BLK_STS_IOERR;
	if (blk_noretry_request(rq))
		return rmbd_c_fail_fast(rq);
	switch (rmbd_c_dev_unreadable(dev)) {
	case RMBD_C_RECONNECTING:
		blk_mq_start_request(rq);
		rmbd_c_park(dev, rq);
		break;
	case RMBD_C_LIVE:
	case RMBD_C_ADDING:
		/* A leg with its data came back meanwhile: try again. */
		rmbd_c_count_requeue(rq);
		blk_mq_start_request(rq);
		blk_mq_requeue_request(rq, true);
		break;
	default:
		return BLK_STS_IOERR;
	}
	if (last)
		rmbd_c_commit_rqs(hctx);
	return BLK_STS_OK;
}

static blk_status_t __rmbd_c_queue_rq(struct blk_mq_hw_ctx *hctx,
				      const struct blk_mq_queue_data *bd)
{
	struct rmbd_c_dev *dev = hctx->driver_data;
	struct request *rq = bd->rq;
	struct rmbd_c_req *req = blk_mq_rq_to_pdu(rq);
	u64 pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	blk_status_t status;
	unsigned int i, n;

	/* The submitter reports its own errors: the block layer none. */
	if (unlikely(rq->bio && bio_flagged(rq->bio, BIO_QUIET)))
		rq->rq_flags |= RQF_QUIET;
	/* Given up: fail at once, without a look at the session. */
	if (unlikely(test_bit(RMBD_C_DEV_DEAD, &dev->flags)))
		return BLK_STS_IOERR;
	/* New, not requeued: none of its tries failed yet. */
	if (!(rq->rq_flags & RQF_DONTPREP)) {
		req->faults = 0;
		req->tried = 0;
		rq->rq_flags |= RQF_DONTPREP;
	}
	/* Pairs with rmbd_c_release_requests(): the new session's state. */
	if (unlikely(test_bit_acquire(RMBD_C_DEV_RECOVERING, &dev->flags))) {
		if (blk_noretry_request(rq))
			return rmbd_c_fail_fast(rq);
		blk_mq_start_request(rq);
		rmbd_c_park(dev, rq);
		if (bd->last)
			rmbd_c_commit_rqs(hctx);
		return BLK_STS_OK;
	}
	if (op_is_write(req_op(rq))) {
		/* The block layer only warns about writes to a read-only disk. */
		if (unlikely(dev->read_only))
			return BLK_STS_IOERR;
		/* Held off while the resync copies its region */
		if (dev->nr_legs > 1 && rmbd_c_write_enter(dev, rq)) {
			if (bd->last)
				rmbd_c_commit_rqs(hctx);
			return BLK_STS_OK;
		}
		status = rmbd_c_write_parts(dev, hctx, req, rq, pos, &n);
		if (unlikely(status || !n) && req->wr_regions)
			rmbd_c_write_exit(dev, req);
		if (unlikely(status))
			return status;
		if (unlikely(!n))
			return rmbd_c_wait_leg(dev, hctx, rq, bd->last);
	} else {
		status = rmbd_c_read_parts(dev, hctx, req, rq, &n);
		if (unlikely(status))
			return status;
		if (unlikely(!n))
			return rmbd_c_wait_leg(dev, hctx, rq, bd->last);
	}
	req->status = BLK_STS_OK;
	req->nr_io = n;
	atomic_set(&req->pending, n);
	blk_mq_start_request(rq);
	for (i = 0; i < n; i++)
		rmbd_c_io_queue(req->io[i]->queue, req->io[i]);
	/*
	 * The last of a batch posts what the batch queued on every leg:
	 * an earlier request of it may have gone to another leg than this
	 * one, and blk-mq calls ->commit_rqs() only when no request was
	 * the last.
	 */
	if (bd->last)
		rmbd_c_commit_rqs(hctx);
	return BLK_STS_OK;
}

/* End @rq with @status, and count it. */
void rmbd_c_end_request(struct request *rq, blk_status_t status)
{
	struct rmbd_c_stats *st = rmbd_c_rq_stats(rq);
	unsigned int op;

	if (unlikely(status)) {
		atomic64_inc(&st->errors);
	} else {
		switch (rmbd_c_rq_op(rq)) {
		case REQ_OP_READ:
			op = RMBD_C_STAT_READ;
			break;
		case REQ_OP_WRITE:
			op = RMBD_C_STAT_WRITE;
			break;
		default:
			op = RMBD_C_STAT_DISCARD;
			break;
		}
		atomic64_inc(&st->ios[op]);
		atomic64_add(blk_rq_bytes(rq), &st->bytes[op]);
	}
	blk_mq_end_request(rq, status);
}

/* blk-mq ends a request that this fails, and retries a busy one. */
static blk_status_t rmbd_c_queue_rq(struct blk_mq_hw_ctx *hctx,
				    const struct blk_mq_queue_data *bd)
{
	struct rmbd_c_dev *dev = hctx->driver_data;
	blk_status_t status = __rmbd_c_queue_rq(hctx, bd);

	if (likely(!status))
		return status;
	if (status == BLK_STS_RESOURCE || status == BLK_STS_DEV_RESOURCE)
		atomic64_inc(&dev->stats[hctx->queue_num].requeues);
	else
		atomic64_inc(&dev->stats[hctx->queue_num].errors);
	return status;
}

static void rmbd_c_complete_rq(struct request *rq)
{
	struct rmbd_c_req *req = blk_mq_rq_to_pdu(rq);
	struct rmbd_c_dev *dev = rq->q->queuedata;

	if (req->wr_regions)
		rmbd_c_write_exit(dev, req);
	/*
	 * A request that failed with the connection is parked until the
	 * session is back (or the loss timeout ends the wait).  Redoing a
	 * READ or WRITE that may have happened already is harmless.  A
	 * fail-fast one fails now, with a path error; so does one whose own
	 * work request failed on RMBD_C_MAX_FAULTS sessions: each reconnect
	 * succeeds, so the loss timeout would never end its loop.
	 */
	if (unlikely(req->status) && dev->nr_legs > 1 &&
	    !test_bit(RMBD_C_DEV_DEAD, &dev->flags)) {
		switch (rmbd_c_legs_decide(dev, rq)) {
		case RMBD_C_SUCCEEDED:
			rmbd_c_end_request(rq, BLK_STS_OK);
			return;
		case RMBD_C_RETRY:
			rmbd_c_count_requeue(rq);
			blk_mq_requeue_request(rq, true);
			return;
		case RMBD_C_UNDECIDED:
			break;
		}
	}
	if (unlikely(req->status) &&
	    test_bit(RMBD_C_DEV_RECOVERING, &dev->flags) &&
	    !test_bit(RMBD_C_DEV_DEAD, &dev->flags)) {
		if (blk_noretry_request(rq)) {
			rmbd_c_end_request(rq, rmbd_c_fail_fast(rq));
		} else if (req->faults >= RMBD_C_MAX_FAULTS) {
			pr_err_ratelimited("rmbd%d: %s of %u bytes at sector %llu failed on %u sessions: giving it up\n",
					   dev->index, blk_op_str(req_op(rq)),
					   blk_rq_bytes(rq),
					   (unsigned long long)blk_rq_pos(rq),
					   req->faults);
			rmbd_c_end_request(rq, BLK_STS_IOERR);
		} else {
			rmbd_c_park(dev, rq);
		}
		return;
	}
	rmbd_c_end_request(rq, req->status);
}

static enum blk_eh_timer_return rmbd_c_timeout(struct request *rq)
{
	struct rmbd_c_req *req = blk_mq_rq_to_pdu(rq);
	struct rmbd_c_dev *dev = rq->q->queuedata;
	unsigned int i;
	bool stuck;

	/* On a poll queue nobody may be polling: look before failing. */
	for (i = 0; i < req->nr_io; i++) {
		if (!req->io[i]->queue->poll)
			continue;
		rmbd_c_poll_cq(req->io[i]->queue);
		if (blk_mq_rq_state(rq) != MQ_RQ_IN_FLIGHT)
			return BLK_EH_DONE;
	}

	/* Never posted: its worker did not run (rmbd_c_queue_commit()). */
	stuck = false;
	for (i = 0; i < req->nr_io; i++)
		if (!READ_ONCE(req->io[i]->done) &&
		    rmbd_c_queue_post_stuck(req->io[i]->queue))
			stuck = true;
	if (stuck) {
		pr_warn_ratelimited("rmbd%d: I/O waited for a CPU to post it; posting inline\n",
				    dev->index);
		return BLK_EH_RESET_TIMER;
	}

	atomic64_inc(&rmbd_c_rq_stats(rq)->timeouts);
	/* The first to time out is what a reset is for: it counts. */
	if (!test_bit(RMBD_C_DEV_RECOVERING, &dev->flags)) {
		pr_warn_ratelimited("rmbd%d: I/O timed out, resetting the connection\n",
				    dev->index);
		rmbd_c_req_fault(req);
	}
	/*
	 * The request completes from its flushed work requests once the QPs
	 * are in the error state: it completes exactly once.  Only the legs
	 * that did not answer fail.
	 */
	for (i = 0; i < req->nr_io; i++)
		if (!READ_ONCE(req->io[i]->done))
			rmbd_c_schedule_fail(req->io[i]->queue->leg);
	return BLK_EH_RESET_TIMER;
}

static int rmbd_c_poll(struct blk_mq_hw_ctx *hctx, struct io_comp_batch *iob)
{
	struct rmbd_c_dev *dev = hctx->driver_data;
	unsigned int i;
	int n = 0;

	for (i = 0; i < dev->nr_legs; i++)
		n += rmbd_c_poll_cq(rmbd_c_leg_queue(dev->legs[i], hctx));
	return n;
}

static void rmbd_c_map_queues(struct blk_mq_tag_set *set)
{
	struct rmbd_c_dev *dev = set->driver_data;
	struct blk_mq_queue_map *map = set->map;

	map[HCTX_TYPE_DEFAULT].nr_queues = dev->nr_io_queues;
	map[HCTX_TYPE_DEFAULT].queue_offset = 0;
	blk_mq_map_queues(&map[HCTX_TYPE_DEFAULT]);
	if (set->nr_maps < HCTX_MAX_TYPES)
		return;
	/* Reads share the default queues; polled I/O has its own. */
	map[HCTX_TYPE_READ].nr_queues = dev->nr_io_queues;
	map[HCTX_TYPE_READ].queue_offset = 0;
	blk_mq_map_queues(&map[HCTX_TYPE_READ]);
	map[HCTX_TYPE_POLL].nr_queues = dev->nr_poll_queues;
	map[HCTX_TYPE_POLL].queue_offset = dev->nr_io_queues;
	blk_mq_map_queues(&map[HCTX_TYPE_POLL]);
}

static int rmbd_c_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			    unsigned int hctx_idx)
{
	hctx->driver_data = data;
	return 0;
}

static int rmbd_c_init_request(struct blk_mq_tag_set *set, struct request *rq,
			       unsigned int hctx_idx, unsigned int numa_node)
{
	struct rmbd_c_dev *dev = set->driver_data;
	struct rmbd_c_req *req = blk_mq_rq_to_pdu(rq);
	struct rmbd_c_io *io;
	unsigned int c, i;

	req->nr_io = 0;
	req->wr_regions = 0;
	for (c = 0; c < dev->nr_legs; c++) {
		io = (void *)(req + 1) + c * dev->io_size;
		req->io[c] = io;
		io->req = req;
		io->cqe.done = rmbd_c_read_write_done;
		io->wr.wr.wr_cqe = &io->cqe;
		io->part_cqe.done = rmbd_c_part_done;
		io->mr = NULL;
		io->wrs = 0;
		io->nents = 0;
		io->sgl = io->inline_sgl;
		io->sge = io->inline_sge;
		for (i = 0; i < dev->req_wrs - 1; i++)
			io->parts[i].wr.wr_cqe = &io->part_cqe;
	}
	return 0;
}

static const struct blk_mq_ops rmbd_c_mq_ops = {
	.queue_rq	= rmbd_c_queue_rq,
	.commit_rqs	= rmbd_c_commit_rqs,
	.complete	= rmbd_c_complete_rq,
	.timeout	= rmbd_c_timeout,
	.init_hctx	= rmbd_c_init_hctx,
	.init_request	= rmbd_c_init_request,
	.map_queues	= rmbd_c_map_queues,
	.poll		= rmbd_c_poll,
};

static const struct block_device_operations rmbd_c_fops = {
	.owner		= THIS_MODULE,
};

/*
 * Let parked requests run again: on the new session, or to fail.  The
 * state machine cleared RMBD_C_DEV_RECOVERING or set RMBD_C_DEV_DEAD.
 * Any context.
 */
void rmbd_c_release_requests(struct rmbd_c_dev *dev)
{
	if (!dev->disk)
		return;
	/* Pairs with the barrier in rmbd_c_park(). */
	smp_mb();
	blk_mq_kick_requeue_list(dev->disk->queue);
}

static void rmbd_c_loss_work(struct work_struct *work)
{
	struct rmbd_c_dev *dev = container_of(to_delayed_work(work),
					      struct rmbd_c_dev, loss_work);

	/*
	 * Not under recovery_lock: a reconnect attempt may hold it for long.
	 * Parked and new I/O fails with EIO from now on.
	 */
	if (!rmbd_c_dev_loss_expired(dev))
		return;
	if (dev->nr_legs == 1)
		pr_warn("rmbd%d: %pISpc not back within %u s, I/O fails\n",
			dev->index, &dev->legs[0]->addr, dev->loss_timeout);
	else
		pr_warn("rmbd%d: no leg with its data back within %u s, I/O fails\n",
			dev->index, dev->loss_timeout);
	rmbd_c_notify(dev, RMBD_DEV_EVENT_FAILED);
}

/*
 * No recovery from here on: end one under way and wait for its works.
 * The device is DELETING: requests it parked fail.
 */
static void rmbd_c_recovery_end(struct rmbd_c_dev *dev)
{
	unsigned int i;

	/* A replace's new leg (a spare's, on unload) ends its attempt now. */
	mutex_lock(&rmbd_c_mutex);
	if (dev->new_leg)
		rmbd_c_leg_abort(dev->new_leg);
	mutex_unlock(&rmbd_c_mutex);

	/*
	 * First, while recovery still works: a spare's replace under way
	 * (on module exit, which does not wait for dev->replacing) ends.
	 */
	spin_lock(&dev->spare_lock);
	dev->spares_stopped = true;
	spin_unlock(&dev->spare_lock);
	cancel_delayed_work_sync(&dev->spare_work);
	rmbd_c_dev_change_state(dev, RMBD_C_DELETING);
	/* A reconnect under way ends at its next wait. */
	mutex_lock(&rmbd_c_mutex);
	for (i = 0; i < dev->nr_legs; i++)
		rmbd_c_leg_abort(dev->legs[i]);
	mutex_unlock(&rmbd_c_mutex);
	for (i = 0; i < dev->nr_legs; i++) {
		flush_work(&dev->legs[i]->err_work);
		cancel_delayed_work_sync(&dev->legs[i]->reconnect_work);
	}
	cancel_delayed_work_sync(&dev->loss_work);
}

/* The disk's limits, that every leg satisfies */
struct rmbd_c_limits {
	u64		size;		/* bytes */
	u64		max_io;		/* bytes of a request */
	u64		chunk;		/* bytes no request crosses: a slab */
	unsigned int	max_seg_size;
	bool		virt_boundary;	/* a READ sink is one region */
	u32		zero_limit;	/* bytes of a discard; 0: none */
};

/*
 * The device's request layout (@dev->max_segs, @dev->req_wrs) and the
 * disk's limits @lim, from its legs, whose first sessions are set up.
 */
static void rmbd_c_dev_limits(struct rmbd_c_dev *dev,
			      struct rmbd_c_limits *lim)
{
	struct rmbd_c_leg *leg;
	unsigned int i;

	dev->max_segs = UINT_MAX;
	dev->req_wrs = 0;
	lim->size = U64_MAX;
	lim->max_io = RMBD_C_MAX_IO_BYTES;
	lim->chunk = U64_MAX;
	lim->max_seg_size = UINT_MAX;
	lim->virt_boundary = false;
	lim->zero_limit = U32_MAX;
	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		dev->max_segs = min(dev->max_segs, leg->max_segs);
		dev->req_wrs = max(dev->req_wrs, leg->req_wrs);
		lim->size = min(lim->size, leg->size);
		lim->chunk = min(lim->chunk, leg->slab_size);
		lim->max_seg_size = min(lim->max_seg_size, leg->max_seg_size);
		lim->zero_limit = min(lim->zero_limit, leg->zero_len);
		if (leg->read_mr) {
			/*
			 * A READ sink is one region: pages without gaps, and
			 * one page to spare for a request that starts inside
			 * one.
			 */
			lim->virt_boundary = true;
			lim->max_io = min_t(u64, lim->max_io,
					    (u64)(leg->mr_pages - 1) << PAGE_SHIFT);
		}
	}
	lim->max_io = min(lim->max_io, lim->chunk);
	lim->size = rmbd_c_layout_size(dev, lim->size, lim->chunk);
	/*
	 * A virtual boundary lifts the segment size limit: then a request is
	 * no larger than a segment may be.
	 */
	if (lim->virt_boundary)
		lim->max_io = min_t(u64, lim->max_io, lim->max_seg_size);
}

static noinline int rmbd_c_disk_add(struct rmbd_c_dev *dev)
{
	struct blk_mq_tag_set *set = &dev->tag_set;
	struct rmbd_c_limits lim;
	struct request_queue *q;
	struct gendisk *disk;
	unsigned int i;
	int ret;

	rmbd_c_dev_limits(dev, &lim);

	set->ops = &rmbd_c_mq_ops;
	set->nr_hw_queues = dev->nr_io_queues + dev->nr_poll_queues;
	set->nr_maps = dev->nr_poll_queues ? HCTX_MAX_TYPES : 1;
	/*
	 * One more for the resync's own requests, which the writes it holds
	 * back must not starve (rmbd_c_write_enter()).  A leg's queue may
	 * then be given one more request than its depth: its work-request
	 * budget (rmbd_c_io_prep()) sends that one back.
	 */
	set->reserved_tags = dev->nr_legs > 1 ? 1 : 0;
	set->queue_depth = dev->queue_depth + set->reserved_tags;
	set->numa_node = NUMA_NO_NODE;
	dev->io_size = ALIGN(sizeof(struct rmbd_c_io) +
			     (dev->req_wrs - 1) * sizeof(struct ib_rdma_wr),
			     __alignof__(struct rmbd_c_io));
	set->cmd_size = sizeof(struct rmbd_c_req) +
			dev->nr_legs * dev->io_size;
	set->flags = BLK_MQ_F_SHOULD_MERGE;
	set->driver_data = dev;
	set->timeout = RMBD_C_IO_TIMEOUT;
	dev->stats = kcalloc(set->nr_hw_queues, sizeof(*dev->stats),
			     GFP_KERNEL);
	if (!dev->stats)
		return -ENOMEM;
	/* Enough for a request's every copy, whatever else is short */
	if (dev->max_segs > RMBD_C_INLINE_SEGS) {
		dev->seg_pool = mempool_create_slab_pool(2 * dev->nr_legs,
							 rmbd_c_seg_cache);
		if (!dev->seg_pool)
			return -ENOMEM;
	}
	ret = blk_mq_alloc_tag_set(set);
	if (ret)
		return ret;

	/* Published once valid: a recovery may look at it meanwhile. */
	disk = blk_mq_alloc_disk(set, dev);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto out_free_tag_set;
	}
	WRITE_ONCE(dev->disk, disk);
	q = dev->disk->queue;
	blk_queue_logical_block_size(q, SECTOR_SIZE);
	blk_queue_physical_block_size(q, PAGE_SIZE);
	blk_queue_io_min(q, PAGE_SIZE);
	blk_queue_max_segments(q, dev->max_segs);
	blk_queue_max_segment_size(q, lim.max_seg_size);
	if (lim.virt_boundary)
		blk_queue_virt_boundary(q, PAGE_SIZE - 1);
	blk_queue_max_hw_sectors(q, lim.max_io >> SECTOR_SHIFT);
	blk_queue_chunk_sectors(q, lim.chunk >> SECTOR_SHIFT);
	/* A write is in the target's memory when it completes. */
	blk_queue_write_cache(q, false, false);
	/* A reconnect must offer at least this much. */
	dev->zero_limit = lim.zero_limit;
	if (dev->zero_limit) {
		/*
		 * Discarded ranges read back as zeroes.  Not a pool's: the
		 * block layer neither splits discards nor write zeroes at
		 * chunk_sectors (it merges discards across them too), so
		 * either may span extents that other legs hold.  Zeroes are
		 * then written as data, which is split there.
		 */
		q->limits.discard_granularity = PAGE_SIZE;
		if (dev->layout != RMBD_LAYOUT_POOL) {
			blk_queue_max_discard_sectors(q, dev->zero_limit >>
						      SECTOR_SHIFT);
			blk_queue_max_write_zeroes_sectors(q, dev->zero_limit >>
							   SECTOR_SHIFT);
		}
	}
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);

	dev->disk->major = rmbd_c_major;
	dev->disk->first_minor = dev->index * RMBD_C_MINORS;
	dev->disk->minors = RMBD_C_MINORS;
	dev->disk->fops = &rmbd_c_fops;
	dev->disk->private_data = dev;
	snprintf(dev->disk->disk_name, DISK_NAME_LEN, "rmbd%d", dev->index);
	set_capacity(dev->disk, lim.size >> SECTOR_SHIFT);
	dev->size = lim.size;
	set_disk_ro(dev->disk, dev->read_only);
	/*
	 * From now on a failure (in add_disk()'s partition scan, say)
	 * recovers within the loss timeout as on a live device: its I/O
	 * waits, and the scan with it.
	 */
	rmbd_c_dev_change_state(dev, RMBD_C_ADDING);
	ret = device_add_disk(NULL, dev->disk, rmbd_c_attr_groups);
	if (ret)
		goto out_put_disk;
	rmbd_c_uevent_start(dev);
	return 0;

out_put_disk:
	/*
	 * Before the disk goes: the recovery's works use it, and so does
	 * rmbd_c_remove_one(), under recovery_lock.
	 */
	rmbd_c_recovery_end(dev);
	rmbd_c_release_requests(dev);
	cancel_work_sync(&dev->resync_work);
	for (i = 0; i < dev->nr_legs; i++)
		mutex_lock_nested(&dev->legs[i]->recovery_lock, i);
	disk = dev->disk;
	dev->disk = NULL;
	for (i = dev->nr_legs; i-- > 0; )
		rmbd_c_recovery_unlock(dev->legs[i]);
	put_disk(disk);
out_free_tag_set:
	blk_mq_free_tag_set(set);
	return ret;
}
ALLOW_ERROR_INJECTION(rmbd_c_disk_add, ERRNO);

struct rmbd_c_dev *rmbd_c_dev_find(int index)
{
	struct rmbd_c_dev *dev;

	lockdep_assert_held(&rmbd_c_mutex);
	list_for_each_entry(dev, &rmbd_c_devs, entry)
		if (dev->index == index)
			return dev;
	return NULL;
}

/* What a leg, stopped, still holds, and the leg. */
static void rmbd_c_leg_free(struct rmbd_c_leg *leg)
{
	crypto_free_shash(leg->auth_tfm);
	if (leg->flush_page)
		__free_page(leg->flush_page);
	bitmap_free(leg->dirty);
	kfree(leg);
}

static void rmbd_c_dev_release(struct kref *ref)
{
	struct rmbd_c_dev *dev = container_of(ref, struct rmbd_c_dev, ref);
	struct rmbd_c_leg *leg;
	unsigned int i;

	rmbd_c_dirty_free(dev);
	for (i = 0; i < dev->nr_legs; i++)
		rmbd_c_leg_free(dev->legs[i]);
	while ((leg = list_first_entry_or_null(&dev->retired,
					       struct rmbd_c_leg,
					       retired_entry))) {
		list_del(&leg->retired_entry);
		rmbd_c_leg_free(leg);
	}
	kfree_sensitive(dev->secret);
	kfree(dev->stats);
	mempool_destroy(dev->seg_pool);
	kfree(dev);
}

void rmbd_c_dev_put(struct rmbd_c_dev *dev)
{
	kref_put(&dev->ref, rmbd_c_dev_release);
}

static void rmbd_c_dev_free(struct rmbd_c_dev *dev)
{
	mutex_lock(&rmbd_c_mutex);
	list_del(&dev->entry);
	mutex_unlock(&rmbd_c_mutex);
	ida_free(&rmbd_c_ida, dev->index);
	rmbd_c_dev_put(dev);
}

/* Whether @a and @b are the same address and port. */
static bool rmbd_c_same_addr(const struct sockaddr_storage *a,
			     const struct sockaddr_storage *b)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
	const struct sockaddr_in *b4 = (const struct sockaddr_in *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr &&
		       a4->sin_port == b4->sin_port;
	return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
	       a6->sin6_port == b6->sin6_port &&
	       a6->sin6_scope_id == b6->sin6_scope_id;
}

/* @addr and @port as the connection manager takes them: 0 or -EINVAL */
static int rmbd_c_parse_addr(const char *addr, u16 port,
			     struct sockaddr_storage *ss)
{
	char p[8];

	snprintf(p, sizeof(p), "%u", port);
	if (!rmbd_valid_addr(addr) ||
	    inet_pton_with_scope(&init_net, AF_UNSPEC, addr, p, ss))
		return -EINVAL;
	return 0;
}

/* Whether @a and @b are the same export: its name, address and port */
static bool rmbd_c_same_export(const char *a_export,
			       const struct sockaddr_storage *a,
			       const char *b_export,
			       const struct sockaddr_storage *b)
{
	return !strcmp(a_export, b_export) && rmbd_c_same_addr(a, b);
}

/*
 * A leg of a device of host identity @host, other than @skip, on the
 * export @b is for, that holds or may hold a session to it again (a
 * failed device never does): two legs of one host on one export corrupt
 * each other's data, unless both were asked for (and the target would
 * take the first one's session over for the second).  Devices that give
 * other identities are other hosts to the target, which keeps them
 * apart.  Called with rmbd_c_mutex held.
 */
static bool rmbd_c_export_taken(const char *host, const struct rmbd_c_leg *b,
				const struct rmbd_c_leg *skip)
{
	const struct rmbd_c_leg *a;
	struct rmbd_c_dev *d;
	unsigned int i;

	lockdep_assert_held(&rmbd_c_mutex);
	list_for_each_entry(d, &rmbd_c_devs, entry) {
		if (READ_ONCE(d->state) == RMBD_C_FAILED ||
		    READ_ONCE(d->state) == RMBD_C_DELETING)
			continue;
		if (strcmp(d->host, host))
			continue;
		for (i = 0; i <= d->nr_legs; i++) {
			/* and the leg a replace is setting up */
			a = i < d->nr_legs ? d->legs[i] : d->new_leg;
			if (a && a != skip && a != b &&
			    rmbd_c_same_export(a->export_name, &a->addr,
					       b->export_name, &b->addr))
				return true;
		}
	}
	return false;
}

/*
 * Whether another device uses an export of @dev's (rmbd_c_export_taken());
 * *@leg is then the leg of @dev.  Called with rmbd_c_mutex held, @dev not
 * on the list yet.
 */
static bool rmbd_c_dev_twin(const struct rmbd_c_dev *dev, int *leg)
{
	unsigned int j;

	for (j = 0; j < dev->nr_legs; j++) {
		if (rmbd_c_export_taken(dev->host, dev->legs[j], NULL)) {
			*leg = j;
			return true;
		}
	}
	return false;
}

/*
 * A new leg, to be leg @i of @dev, to where @la says, with the settings of
 * @args; an ERR_PTR, with *@why saying why, if not.
 */
static struct rmbd_c_leg *rmbd_c_leg_alloc(struct rmbd_c_dev *dev,
					   unsigned int i,
					   const struct rmbd_c_leg_args *la,
					   const struct rmbd_c_connect_args *args,
					   const char **why)
{
	struct rmbd_c_leg *leg;
	int ret;

	leg = kzalloc(sizeof(*leg), GFP_KERNEL);
	if (!leg) {
		*why = "could not allocate the device";
		return ERR_PTR(-ENOMEM);
	}
	leg->dev = dev;
	leg->index = i;
	mutex_init(&leg->recovery_lock);
	INIT_WORK(&leg->err_work, rmbd_c_err_work);
	init_completion(&leg->send_done);
	init_completion(&leg->recv_done);
	leg->broken = rmbd_c_schedule_fail;
	INIT_DELAYED_WORK(&leg->reconnect_work, rmbd_c_reconnect_work);
	INIT_DELAYED_WORK(&leg->ka_work, rmbd_c_keepalive_work);

	ret = rmbd_c_parse_addr(la->addr, la->port, &leg->addr);
	if (ret) {
		*why = "not an IPv4 or IPv6 address";
		goto out_free;
	}
	strscpy(leg->addr_str, la->addr, sizeof(leg->addr_str));
	strscpy(leg->export_name, la->export_name, sizeof(leg->export_name));
	leg->port = la->port;
	leg->shared = args->shared;
	leg->read_only = args->read_only;
	if (args->secret) {
		leg->auth_tfm = rmbd_auth_tfm(args->secret, args->secret_len);
		if (IS_ERR(leg->auth_tfm)) {
			ret = PTR_ERR(leg->auth_tfm);
			leg->auth_tfm = NULL;
			*why = "cannot set up HMAC-SHA-256 (crypto API)";
			if (ret != -ENOMEM)
				ret = -EIO;
			goto out_free;
		}
	}
	return leg;

out_free:
	rmbd_c_leg_free(leg);
	return ERR_PTR(ret);
}

/* A new leg @i of @dev, to where @la says; *@why says why not. */
static int rmbd_c_leg_new(struct rmbd_c_dev *dev, unsigned int i,
			  const struct rmbd_c_leg_args *la,
			  const struct rmbd_c_connect_args *args,
			  const char **why)
{
	struct rmbd_c_leg *leg = rmbd_c_leg_alloc(dev, i, la, args, why);

	if (IS_ERR(leg))
		return PTR_ERR(leg);
	/* From here on rmbd_c_dev_put() frees it. */
	dev->legs[i] = leg;
	dev->nr_legs = i + 1;
	if (!i)
		snprintf(dev->id, sizeof(dev->id), "%s-%s", leg->addr_str,
			 leg->export_name);
	return 0;
}

/*
 * Start every leg, each under its recovery lock: an error meanwhile (the
 * RDMA device removed, a queue failing) waits for it in the error work,
 * which would else tear the session down under us.
 */
static int rmbd_c_legs_start(struct rmbd_c_dev *dev, int *failed_leg,
			     const char **why)
{
	struct rmbd_c_leg *leg;
	unsigned int i;
	int ret;

	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		mutex_lock(&leg->recovery_lock);
		ret = rmbd_c_leg_start(leg, why);
		if (ret) {
			rmbd_c_leg_stop(leg);
			rmbd_c_recovery_unlock(leg);
			*failed_leg = i;
			return ret;
		}
		/* In sync unless rmbd_c_initial_sync() finds otherwise */
		set_bit(RMBD_C_LEG_IN_SYNC, &leg->flags);
		rmbd_c_recovery_unlock(leg);
	}
	return 0;
}

/* Stop every leg, on a failed connect or a disconnect. */
static void rmbd_c_legs_stop(struct rmbd_c_dev *dev)
{
	struct rmbd_c_leg *leg;
	unsigned int i;

	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		mutex_lock(&leg->recovery_lock);
		rmbd_c_leg_stop(leg);
		rmbd_c_recovery_unlock(leg);
		cancel_work_sync(&leg->err_work);
	}
}

/*
 * The spares of @args, after its legs: valid addresses, on exports that
 * no leg nor other spare uses; kept as strings until one is needed.
 */
static int rmbd_c_spares_set(struct rmbd_c_dev *dev,
			     struct rmbd_c_connect_args *args, const char **why)
{
	struct sockaddr_storage a, b;
	const struct rmbd_c_leg_args *la;
	struct rmbd_c_spare *sp;
	unsigned int s, j;

	for (s = 0; s < args->nr_spares; s++) {
		la = &args->legs[args->nr_legs + s];
		if (rmbd_c_parse_addr(la->addr, la->port, &a)) {
			args->failed_leg = args->nr_legs + s;
			*why = "not an IPv4 or IPv6 address";
			return -EINVAL;
		}
		for (j = 0; j < args->nr_legs + s; j++) {
			if (rmbd_c_parse_addr(args->legs[j].addr,
					      args->legs[j].port, &b) ||
			    !rmbd_c_same_export(la->export_name, &a,
						args->legs[j].export_name, &b))
				continue;
			args->failed_leg = args->nr_legs + s;
			*why = "a spare on the export of a leg or of another spare";
			return -EINVAL;
		}
		sp = &dev->spares[s];
		strscpy(sp->addr, la->addr, sizeof(sp->addr));
		sp->port = la->port;
		strscpy(sp->export_name, la->export_name,
			sizeof(sp->export_name));
	}
	dev->nr_spares = args->nr_spares;
	return 0;
}

static void rmbd_c_spare_work(struct work_struct *work);

/**
 * rmbd_c_dev_connect() - connect to exports and create their block device
 * @args: where and what to connect to; validated by the caller
 * @index: N of the new rmbdN; look it up under rmbd_c_mutex, it may be
 *	disconnected already
 * @why: a message for the administrator on failure; args->failed_leg
 *	then says which leg it is about, if one
 */
int rmbd_c_dev_connect(struct rmbd_c_connect_args *args, int *index,
		       const char **why)
{
	struct rmbd_c_leg *leg;
	struct rmbd_c_dev *dev;
	unsigned int i, j;
	int ret;

	args->failed_leg = -1;
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev) {
		*why = "could not allocate the device";
		return -ENOMEM;
	}
	/* From here on rmbd_c_dev_put() frees it and its legs. */
	kref_init(&dev->ref);
	rmbd_c_uevent_init(dev);
	spin_lock_init(&dev->sync_lock);
	rmbd_c_dev_state_init(dev);
	INIT_DELAYED_WORK(&dev->loss_work, rmbd_c_loss_work);
	INIT_WORK(&dev->resync_work, rmbd_c_resync_work);
	INIT_DELAYED_WORK(&dev->spare_work, rmbd_c_spare_work);
	spin_lock_init(&dev->spare_lock);
	init_waitqueue_head(&dev->resync_wait);
	dev->resync_bucket = -1;
	INIT_LIST_HEAD(&dev->retired);
	if (args->secret) {
		dev->secret = kmemdup(args->secret, args->secret_len,
				      GFP_KERNEL);
		if (!dev->secret) {
			rmbd_c_dev_put(dev);
			*why = "could not allocate the device";
			return -ENOMEM;
		}
		dev->secret_len = args->secret_len;
	}
	for (i = 0; i < args->nr_legs; i++) {
		ret = rmbd_c_leg_new(dev, i, &args->legs[i], args, why);
		if (ret) {
			args->failed_leg = i;
			rmbd_c_dev_put(dev);
			return ret;
		}
		for (j = 0; j < i; j++) {
			leg = dev->legs[j];
			if (rmbd_c_same_export(leg->export_name, &leg->addr,
					       dev->legs[i]->export_name,
					       &dev->legs[i]->addr)) {
				args->failed_leg = i;
				rmbd_c_dev_put(dev);
				*why = "two legs of a device on the same export";
				return -EINVAL;
			}
		}
	}
	ret = rmbd_c_spares_set(dev, args, why);
	if (ret) {
		rmbd_c_dev_put(dev);
		return ret;
	}
	strscpy(dev->host, args->host, sizeof(dev->host));
	dev->layout = args->layout;
	dev->copies = args->copies ?: args->nr_legs;
	dev->read_only = args->read_only;
	dev->shared = args->shared;
	dev->nr_io_queues = args->nr_io_queues;
	dev->nr_poll_queues = args->nr_poll_queues;
	dev->queue_depth = args->queue_depth;
	dev->reconnect_delay = args->reconnect_delay;
	dev->loss_timeout = args->loss_timeout;

	ret = ida_alloc_max(&rmbd_c_ida, MINORMASK / RMBD_C_MINORS,
			    GFP_KERNEL);
	if (ret < 0) {
		rmbd_c_dev_put(dev);
		*why = ret == -ENOSPC ? "too many devices" :
		       "could not allocate a device number";
		return ret;
	}
	dev->index = ret;
	mutex_lock(&rmbd_c_mutex);
	if (!args->shared && rmbd_c_dev_twin(dev, &args->failed_leg)) {
		mutex_unlock(&rmbd_c_mutex);
		ida_free(&rmbd_c_ida, dev->index);
		rmbd_c_dev_put(dev);
		*why = "export already connected here; disconnect it or connect shared";
		return -EEXIST;
	}
	list_add_tail(&dev->entry, &rmbd_c_devs);
	mutex_unlock(&rmbd_c_mutex);

	/*
	 * Not across rmbd_c_disk_add(): its partition scan does I/O, which
	 * a failure may leave waiting for the error work.
	 */
	ret = rmbd_c_legs_start(dev, &args->failed_leg, why);
	if (ret)
		goto out_stop;
	ret = rmbd_c_dirty_alloc(dev);
	if (ret) {
		*why = ret == -ENOSPC ?
		       "the exports are smaller than an extent of the pool (the smallest slab size)" :
		       "could not allocate the legs' dirty maps";
		goto out_stop;
	}
	rmbd_c_initial_sync(dev);
	ret = rmbd_c_disk_add(dev);
	if (ret) {
		*why = "cannot create the block device";
		goto out_stop;
	}
	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		pr_info("rmbd%d: %s%llu bytes of %s on %pISpc, %u I/O and %u poll queues\n",
			dev->index, dev->nr_legs == 1 ? "" :
			dev->layout == RMBD_LAYOUT_POOL ? "pool leg: " :
			"mirror leg: ",
			leg->size, leg->export_name, &leg->addr,
			dev->nr_io_queues, dev->nr_poll_queues);
	}
	mutex_lock(&rmbd_c_mutex);
	/*
	 * Recovering (or failed, with loss_timeout 0) if a queue failed
	 * meanwhile: the reconnect starts the keepalive.  Before the mutex
	 * is dropped: nobody can disconnect it before this is queued.
	 */
	if (rmbd_c_dev_settle(dev)) {
		for (i = 0; i < dev->nr_legs; i++)
			if (!test_bit(RMBD_C_LEG_RECOVERING,
				      &dev->legs[i]->flags))
				rmbd_c_keepalive_start(dev->legs[i]);
		/* A leg refused or lost while connecting: a spare's turn. */
		rmbd_c_spare_kick(dev, 0);
		/* Legs that rmbd_c_initial_sync() found stale */
		rmbd_c_resync_start(dev);
	}
	dev->connected = true;
	*index = dev->index;
	/* It may be disconnected as soon as the mutex is dropped. */
	kref_get(&dev->ref);
	mutex_unlock(&rmbd_c_mutex);
	rmbd_c_notify(dev, RMBD_DEV_EVENT_CONNECTED);
	rmbd_c_dev_put(dev);
	return 0;

out_stop:
	rmbd_c_recovery_end(dev);
	rmbd_c_legs_stop(dev);
	if (args->failed_leg >= 0)
		strscpy(args->holder, dev->legs[args->failed_leg]->holder,
			sizeof(args->holder));
	rmbd_c_dev_free(dev);
	return ret;
}

static void rmbd_c_dev_remove(struct rmbd_c_dev *dev)
{
	struct rmbd_c_leg *leg;
	unsigned int i;

	/* No reconnect from here on; parked requests fail. */
	rmbd_c_recovery_end(dev);
	rmbd_c_release_requests(dev);
	/* Its requests fail now, and it stops. */
	cancel_work_sync(&dev->resync_work);
	/* A session that stopped leaves nothing in flight for del_gendisk. */
	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		mutex_lock(&leg->recovery_lock);
		rmbd_c_leg_flush(leg);
		rmbd_c_recovery_unlock(leg);
	}
	/* Waits for in-flight I/O; a dead link fails it via the timeout. */
	rmbd_c_uevent_stop(dev);
	del_gendisk(dev->disk);
	rmbd_c_legs_stop(dev);
	rmbd_c_notify(dev, RMBD_DEV_EVENT_DISCONNECTED);
	put_disk(dev->disk);
	blk_mq_free_tag_set(&dev->tag_set);
	pr_info("rmbd%d: disconnected\n", dev->index);
	rmbd_c_dev_free(dev);
}

/*
 * The device @index, with rmbd_c_mutex held, unless it is not there or
 * busy with a connect or disconnect: NULL then, with the mutex released.
 */
static struct rmbd_c_dev *rmbd_c_dev_find_idle(int index, int *err,
					       const char **why)
{
	struct rmbd_c_dev *dev;

	mutex_lock(&rmbd_c_mutex);
	dev = rmbd_c_dev_find(index);
	if (!dev) {
		mutex_unlock(&rmbd_c_mutex);
		*why = "no such device";
		*err = -ENODEV;
		return NULL;
	}
	if (!dev->connected || dev->replacing) {
		mutex_unlock(&rmbd_c_mutex);
		*why = "device is connecting, being disconnected, or a leg of it being replaced";
		*err = -EBUSY;
		return NULL;
	}
	return dev;
}

/*
 * Whether @disk is open: mounted, swap, under md or dm (the whole disk
 * or a partition), or held open by a process.  udev's probe after a
 * change closes again at once, so an open that lasts RMBD_C_OPEN_GRACE_MS
 * is taken for a user.  Sleeps; no lock held.
 */
static bool rmbd_c_disk_in_use(struct gendisk *disk)
{
	unsigned long end = jiffies + msecs_to_jiffies(RMBD_C_OPEN_GRACE_MS);

	/* part0 counts the opens of every partition too. */
	while (disk_openers(disk)) {
		if (time_after(jiffies, end))
			return true;
		msleep(50);
	}
	return false;
}

/**
 * rmbd_c_dev_disconnect() - remove a device and close its session
 * @index: N of rmbdN
 * @force: even when it is open: mounted, swap, held by md or dm, or a
 *	process's
 * @why: a message for the administrator on failure
 */
int rmbd_c_dev_disconnect(int index, bool force, const char **why)
{
	struct rmbd_c_dev *dev;
	struct gendisk *disk;
	bool busy;
	int err;

	dev = rmbd_c_dev_find_idle(index, &err, why);
	if (!dev)
		return err;
	if (!force) {
		/* Waited for without the mutex, which recovery takes. */
		disk = dev->disk;
		get_device(disk_to_dev(disk));
		mutex_unlock(&rmbd_c_mutex);
		busy = rmbd_c_disk_in_use(disk);
		put_device(disk_to_dev(disk));
		if (busy) {
			*why = "device is in use (mounted, swap, held by md or dm, or open in a process); use force";
			return -EBUSY;
		}
		/* It may have gone meanwhile; an open from now on is forced. */
		dev = rmbd_c_dev_find_idle(index, &err, why);
		if (!dev)
			return err;
	}
	/* Deleting from here on (rmbd_c_recovery_end()) */
	dev->connected = false;
	mutex_unlock(&rmbd_c_mutex);
	rmbd_c_dev_remove(dev);
	return 0;
}

/*
 * Whether @leg, its first session set up, fits the disk of @dev: as
 * large, slabs no smaller than a request may span, and an RDMA device
 * that takes the device's requests as they are laid out.
 */
static int rmbd_c_leg_fits(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg,
			   const char **why)
{
	struct request_queue *q = dev->disk->queue;
	u64 max_io = (u64)queue_max_hw_sectors(q) << SECTOR_SHIFT;
	/* A virtual boundary lifts the segment size: a request is one. */
	u64 seg = queue_virt_boundary(q) ? max_io : queue_max_segment_size(q);

	if (leg->size < dev->leg_bytes) {
		*why = dev->layout == RMBD_LAYOUT_POOL ?
		       "the export is smaller than what each leg of the pool holds" :
		       "the export is smaller than the device";
		return -ENOSPC;
	}
	if (leg->slab_size < (u64)q->limits.chunk_sectors << SECTOR_SHIFT) {
		*why = "the export's slabs are smaller than the device's";
		return -EXDEV;
	}
	if (leg->max_segs < dev->max_segs || leg->req_wrs > dev->req_wrs ||
	    leg->max_seg_size < seg) {
		*why = "the RDMA device takes fewer segments per request than the device was created with";
		return -EXDEV;
	}
	if (leg->read_mr && (!queue_virt_boundary(q) ||
			     (u64)(leg->mr_pages - 1) << PAGE_SHIFT < max_io)) {
		*why = "the RDMA device needs READ sinks that the device's requests do not fit (another transport)";
		return -EXDEV;
	}
	if (leg->zero_len < dev->zero_limit) {
		*why = "the RDMA device takes smaller discards than the device was created with";
		return -EXDEV;
	}
	return 0;
}

/*
 * Put @leg, up and its recovery_lock held, in the place of leg @i of
 * @dev, whose session goes; -ENODATA, with nothing changed, when no other
 * leg is up and in sync by then.  The caller cancels the old leg's works,
 * once it dropped @leg's recovery_lock (which they take, for their leg).  In a memalloc_noio scope: while the
 * disk's queue is frozen, reclaim must not write to it.
 */
static int rmbd_c_leg_swap(struct rmbd_c_dev *dev, unsigned int i,
			   struct rmbd_c_leg *leg, bool spare, const char **why)
{
	struct rmbd_c_leg *old = dev->legs[i];
	struct request_queue *q = dev->disk->queue;
	bool ok, back;

	/*
	 * Its reconnect (which may hold the lock for long) is waited out
	 * before anything stops: I/O goes on over the other legs.
	 */
	mutex_lock_nested(&old->recovery_lock, 1);
	mutex_lock(&rmbd_c_mutex);
	/* A spare is for a leg that stays away: this one came back. */
	back = spare && test_bit(RMBD_C_LEG_UP, &old->flags) &&
	       !test_bit(RMBD_C_LEG_FAILED, &old->flags);
	ok = !back && rmbd_c_dev_readable_without(dev, i);
	if (ok) {
		set_bit(RMBD_C_LEG_FAILED, &old->flags);
		old->stopping = true;
	}
	mutex_unlock(&rmbd_c_mutex);
	if (!ok) {
		mutex_unlock(&old->recovery_lock);
		*why = back ? "the leg came back meanwhile" :
		       "no other leg is up and holds every write any more";
		return back ? -EAGAIN : -ENODATA;
	}
	/*
	 * What is posted on it is flushed, and what no completion covers
	 * swept: its requests complete over the other legs.  Then the
	 * freeze waits for the requests in flight only, and no request
	 * looks at dev->legs[] while it changes.
	 */
	rmbd_c_leg_lost(old);
	rmbd_c_leg_halt(old);
	blk_mq_quiesce_queue(q);
	rmbd_c_leg_flush(old);
	blk_mq_unquiesce_queue(q);
	blk_mq_freeze_queue(q);
	/*
	 * Not under rmbd_c_mutex, which a dump holds while it allocates:
	 * a dump sees one leg or the other, and the old one stays.
	 */
	WRITE_ONCE(dev->legs[i], leg);
	list_add_tail(&old->retired_entry, &dev->retired);
	blk_mq_unfreeze_queue(q);
	rmbd_c_leg_stop(old);
	rmbd_c_recovery_unlock(old);
	return 0;
}

/*
 * The checks before a replace: the device live, leg @i there, and another
 * leg up and in sync to copy from.  Called with rmbd_c_mutex held.
 */
static int rmbd_c_replace_ok(struct rmbd_c_dev *dev, unsigned int i,
			     const char **why)
{
	if (READ_ONCE(dev->state) != RMBD_C_LIVE) {
		*why = "the device is not live";
		return -EIO;
	}
	if (i >= dev->nr_legs) {
		*why = "the device has no such leg";
		return -ENOENT;
	}
	if (!rmbd_c_dev_readable_without(dev, i)) {
		*why = dev->layout == RMBD_LAYOUT_POOL ?
		       "no other leg is up and holds every write of some extent of this leg: the new leg would have nothing to copy from" :
		       "no other leg is up and holds every write: the new leg would have nothing to copy from";
		return -ENODATA;
	}
	return 0;
}

/* Whether @leg goes to the export of one of @dev's spares */
static bool rmbd_c_is_spare(struct rmbd_c_dev *dev,
			    const struct rmbd_c_leg *leg)
{
	struct rmbd_c_spare sp[RMBD_MAX_SPARES];
	struct sockaddr_storage a;
	unsigned int s, n;

	/* The one spare_work tries stays listed while it does. */
	spin_lock(&dev->spare_lock);
	n = dev->nr_spares;
	memcpy(sp, dev->spares, n * sizeof(sp[0]));
	spin_unlock(&dev->spare_lock);
	for (s = 0; s < n; s++)
		if (!rmbd_c_parse_addr(sp[s].addr, sp[s].port, &a) &&
		    rmbd_c_same_export(sp[s].export_name, &a,
				       leg->export_name, &leg->addr))
			return true;
	return false;
}

/* The new leg of a replace, up to where it is swapped in. */
static int rmbd_c_replace_start(struct rmbd_c_dev *dev, unsigned int i,
				struct rmbd_c_leg *leg, const char **why)
{
	int ret;

	/* Claimed: a connect or replace elsewhere sees it as in use. */
	mutex_lock(&rmbd_c_mutex);
	ret = !dev->shared && rmbd_c_export_taken(dev->host, leg, dev->legs[i]);
	if (!ret)
		dev->new_leg = leg;
	mutex_unlock(&rmbd_c_mutex);
	if (ret) {
		*why = "export already connected here; disconnect it or connect shared";
		return -EEXIST;
	}
	leg->dirty = bitmap_alloc(dev->nr_regions, GFP_KERNEL);
	if (!leg->dirty) {
		*why = "could not allocate the leg's dirty map";
		return -ENOMEM;
	}
	/* Everything it holds is to be copied to it. */
	rmbd_c_leg_mark_held(leg);
	ret = rmbd_c_leg_start(leg, why);
	if (!ret)
		ret = rmbd_c_leg_fits(dev, leg, why);
	return ret;
}

/**
 * rmbd_c_dev_replace() - replace a leg of a device with a new one
 * @index: N of rmbdN
 * @i: the leg
 * @la: where the new leg goes
 * @expect: NULL, or the leg that must still be leg @i, failed or down
 *	(else -EAGAIN): a spare's replace, chosen before
 * @new_leg_failed: NULL, or set on failure: true when the new leg
 *	itself failed (not the device's state, nor memory)
 * @why: a message for the administrator on failure
 *
 * The new leg connects with the device's settings, takes the old one's
 * place, and gets the whole device copied to it by the resync, from a
 * leg in sync, while I/O goes on.
 */
int rmbd_c_dev_replace(int index, unsigned int i,
		       const struct rmbd_c_leg_args *la,
		       const struct rmbd_c_leg *expect, bool *new_leg_failed,
		       const char **why)
{
	struct rmbd_c_connect_args args = { };
	struct rmbd_c_leg *leg, *old;
	struct rmbd_c_dev *dev;
	unsigned int j, noio;
	bool its_own = false;
	int ret;

	if (new_leg_failed)
		*new_leg_failed = false;
	dev = rmbd_c_dev_find_idle(index, &ret, why);
	if (!dev)
		return ret;
	ret = rmbd_c_replace_ok(dev, i, why);
	if (!ret && expect && dev->legs[i] != expect) {
		*why = "the leg was replaced meanwhile";
		ret = -EAGAIN;
	}
	if (ret) {
		mutex_unlock(&rmbd_c_mutex);
		return ret;
	}
	dev->replacing = true;
	kref_get(&dev->ref);
	mutex_unlock(&rmbd_c_mutex);

	/* The disk may be swap: reclaim must not wait for its I/O here. */
	noio = memalloc_noio_save();
	args.shared = dev->shared;
	args.read_only = dev->read_only;
	args.secret = dev->secret;
	args.secret_len = dev->secret_len;
	leg = rmbd_c_leg_alloc(dev, i, la, &args, why);
	if (IS_ERR(leg)) {
		ret = PTR_ERR(leg);
		its_own = ret != -ENOMEM;
		goto out_done;
	}
	its_own = true;
	for (j = 0; j < dev->nr_legs; j++) {
		if (j != i &&
		    rmbd_c_same_export(leg->export_name, &leg->addr,
				       dev->legs[j]->export_name,
				       &dev->legs[j]->addr)) {
			*why = "two legs of a device on the same export";
			ret = -EINVAL;
			goto out_free;
		}
	}
	if (!expect && rmbd_c_is_spare(dev, leg)) {
		*why = "the export of one of the device's spares; a spare is used by itself";
		ret = -EINVAL;
		goto out_free;
	}
	/* Its recovery waits for it to be in place (as at connect). */
	old = dev->legs[i];
	mutex_lock(&leg->recovery_lock);
	ret = rmbd_c_replace_start(dev, i, leg, why);
	its_own = ret && ret != -ENOMEM;
	if (!ret) {
		rmbd_c_keepalive_start(leg);
		/* No resync looks at the legs while they change. */
		set_bit(RMBD_C_DEV_NO_RESYNC, &dev->flags);
		cancel_work_sync(&dev->resync_work);
		ret = rmbd_c_leg_swap(dev, i, leg, expect, why);
		clear_bit(RMBD_C_DEV_NO_RESYNC, &dev->flags);
	}
	mutex_lock(&rmbd_c_mutex);
	dev->new_leg = NULL;
	mutex_unlock(&rmbd_c_mutex);
	if (ret) {
		/* Its error work, if any, must not reconnect it. */
		set_bit(RMBD_C_LEG_FAILED, &leg->flags);
		rmbd_c_leg_stop(leg);
		rmbd_c_recovery_unlock(leg);
		cancel_work_sync(&leg->err_work);
		cancel_delayed_work_sync(&leg->reconnect_work);
		rmbd_c_resync_start(dev);
		goto out_free;
	}
	pr_info("rmbd%d: leg %u replaced: now %llu bytes of %s on %pISpc\n",
		dev->index, i, leg->size, leg->export_name, &leg->addr);
	rmbd_c_recovery_unlock(leg);
	/* It is stopping: nothing queues them again. */
	cancel_work_sync(&old->err_work);
	cancel_delayed_work_sync(&old->reconnect_work);
	rmbd_c_notify(dev, RMBD_DEV_EVENT_REPLACED);
	rmbd_c_resync_start(dev);
	goto out_done;

out_free:
	rmbd_c_leg_free(leg);
out_done:
	memalloc_noio_restore(noio);
	mutex_lock(&rmbd_c_mutex);
	dev->replacing = false;
	mutex_unlock(&rmbd_c_mutex);
	rmbd_c_dev_put(dev);
	if (new_leg_failed)
		*new_leg_failed = ret && its_own;
	return ret;
}

int rmbd_c_dev_init(void)
{
	int ret;

	rmbd_c_seg_cache = kmem_cache_create("rmbd_segs", RMBD_C_MAX_SEGS *
					     (sizeof(struct scatterlist) +
					      sizeof(struct ib_sge)), 0, 0, NULL);
	if (!rmbd_c_seg_cache)
		return -ENOMEM;
	ret = register_blkdev(0, "rmbd");
	if (ret < 0) {
		kmem_cache_destroy(rmbd_c_seg_cache);
		return ret;
	}
	rmbd_c_major = ret;
	return 0;
}

/* Every device goes: on module exit, when no command can run. */
void rmbd_c_dev_exit(void)
{
	struct rmbd_c_dev *dev;

	for (;;) {
		mutex_lock(&rmbd_c_mutex);
		dev = list_first_entry_or_null(&rmbd_c_devs, struct rmbd_c_dev,
					       entry);
		if (dev)
			dev->connected = false;
		mutex_unlock(&rmbd_c_mutex);
		if (!dev)
			break;
		rmbd_c_dev_remove(dev);
	}
	unregister_blkdev(rmbd_c_major, "rmbd");
	ida_destroy(&rmbd_c_ida);
	kmem_cache_destroy(rmbd_c_seg_cache);
}

/**
 * rmbd_c_spare_kick() - look for a leg a spare should replace
 * @dev: the device
 * @delay: in jiffies (a leg down: the loss timeout)
 *
 * The earliest look wins: a look already queued for later is brought
 * forward, one queued sooner stays (and queues the next itself).
 */
void rmbd_c_spare_kick(struct rmbd_c_dev *dev, unsigned long delay)
{
	struct delayed_work *dw = &dev->spare_work;

	spin_lock(&dev->spare_lock);
	if (dev->nr_spares && !dev->spares_stopped &&
	    (!delayed_work_pending(dw) ||
	     time_before(jiffies + delay, READ_ONCE(dw->timer.expires))))
		mod_delayed_work(rmbd_c_wq, dw, delay);
	spin_unlock(&dev->spare_lock);
}

/*
 * The leg a spare should replace: one failed for good, or down for the
 * loss timeout; -1 when none is, with *@next set to when one will be
 * (0: never).  Under rmbd_c_mutex.
 */
static int rmbd_c_spare_due(struct rmbd_c_dev *dev, unsigned long *next)
{
	unsigned long since, due;
	struct rmbd_c_leg *leg;
	unsigned int i;

	*next = 0;
	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		if (test_bit(RMBD_C_LEG_FAILED, &leg->flags))
			return i;
		since = READ_ONCE(leg->down_since);
		if (test_bit(RMBD_C_LEG_UP, &leg->flags) || !since ||
		    !dev->loss_timeout)
			continue;
		due = since + dev->loss_timeout * HZ;
		if (time_after_eq(jiffies, due))
			return i;
		if (!*next || time_before(due, *next))
			*next = due;
	}
	return -1;
}

/*
 * A leg failed for good, or stayed down for the loss timeout, on a live
 * device with spares: the first spare takes its place, as with dev
 * replace (which it is).  A spare that cannot (its target, export or
 * connection failed) is given up, with the reason in the log; one kept
 * from the device's state (busy, not live, no leg to copy from yet, the
 * leg back) or short of memory is tried again.
 */
static void rmbd_c_spare_work(struct work_struct *work)
{
	struct rmbd_c_dev *dev = container_of(to_delayed_work(work),
					      struct rmbd_c_dev, spare_work);
	struct rmbd_c_leg_args la = { };
	const char *why = "", *reason;
	struct rmbd_c_leg *old;
	struct rmbd_c_spare sp;
	unsigned long next;
	bool given_up;
	int i, ret;

	mutex_lock(&rmbd_c_mutex);
	if (!dev->nr_spares || READ_ONCE(dev->state) != RMBD_C_LIVE) {
		/* Kicked again on its way back to live. */
		mutex_unlock(&rmbd_c_mutex);
		return;
	}
	i = rmbd_c_spare_due(dev, &next);
	if (i < 0) {
		mutex_unlock(&rmbd_c_mutex);
		if (next)
			rmbd_c_spare_kick(dev, max_t(long, 1,
						     (long)(next - jiffies)));
		return;
	}
	old = dev->legs[i];
	/* It stays listed until it took the place or was given up. */
	spin_lock(&dev->spare_lock);
	sp = dev->spares[0];
	spin_unlock(&dev->spare_lock);
	mutex_unlock(&rmbd_c_mutex);

	la.addr = sp.addr;
	la.port = sp.port;
	la.export_name = sp.export_name;
	reason = test_bit(RMBD_C_LEG_FAILED, &old->flags) ?
		 "failed for good" : "down for the loss timeout";
	ret = rmbd_c_dev_replace(dev->index, i, &la, old, &given_up, &why);

	/* Used or given up, it leaves the spares; else it stays first. */
	spin_lock(&dev->spare_lock);
	if (!ret || given_up) {
		dev->nr_spares--;
		memmove(&dev->spares[0], &dev->spares[1],
			dev->nr_spares * sizeof(dev->spares[0]));
	}
	spin_unlock(&dev->spare_lock);
	if (!ret) {
		pr_info("rmbd%d: leg %d %s: spare %s export %s took its place\n",
			dev->index, i, reason, sp.addr, sp.export_name);
	} else if (given_up) {
		pr_warn("rmbd%d: spare %s export %s given up: %s (%d)\n",
			dev->index, sp.addr, sp.export_name, why, ret);
	}
	/*
	 * Another leg may need one; a spare kept is tried again (not live:
	 * in case it turned live meanwhile).
	 */
	rmbd_c_spare_kick(dev, !ret || given_up ? 0 :
			  ret == -ENODATA ? 5 * HZ : HZ);
}
