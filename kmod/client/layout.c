// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: the layout, how a device's data lies on its legs.  A
 * mirror: every leg holds the whole device; a pool: each extent is on R
 * of the N legs.  Which legs a request goes to, what becomes of it when
 * some of them fail it, the legs' dirty maps of what they missed, and the
 * resync that brings them up to date.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/bitmap.h>
#include <linux/gcd.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include "client.h"

/*
 * Placement, RAID-10's near layout: copy k (of R = dev->copies) of
 * extent e is on leg (e * R + k) mod N, in that leg's extent slot
 * (e * R + k) / N.  So the copies of an extent are on consecutive legs
 * from rmbd_c_first_copy().  A mirror is the case R == N: every extent
 * on every leg, in its own place.
 */
static unsigned int rmbd_c_first_copy(struct rmbd_c_dev *dev, u64 pos)
{
	u32 rem;

	if (dev->copies == dev->nr_legs)
		return 0;
	div_u64_rem((pos >> dev->extent_shift) * dev->copies, dev->nr_legs,
		    &rem);
	return rem;
}

static struct rmbd_c_leg *rmbd_c_copy_leg(struct rmbd_c_dev *dev,
					  unsigned int first, unsigned int k)
{
	return dev->legs[(first + k) % dev->nr_legs];
}

/* Where copy @k of the device's byte @pos lies on its leg */
static u64 rmbd_c_copy_pos(struct rmbd_c_dev *dev, u64 pos, unsigned int k)
{
	u64 e = pos >> dev->extent_shift;

	if (dev->copies == dev->nr_legs)
		return pos;
	return div_u64(e * dev->copies + k, dev->nr_legs) <<
	       dev->extent_shift | (pos & ((1ULL << dev->extent_shift) - 1));
}

/**
 * rmbd_c_layout_size() - how large the device is, and what each leg holds
 * @dev: the device, its legs, layout and copies known
 * @leg_size: bytes of its smallest export
 * @extent: bytes of an extent, a power of two
 *
 * Sets @dev->extent_shift and @dev->leg_bytes, and returns the device's
 * size: a mirror's is the smallest export's; a pool's, the whole extents
 * that N such exports hold R times.
 */
u64 rmbd_c_layout_size(struct rmbd_c_dev *dev, u64 leg_size, u64 extent)
{
	u64 slots, extents;

	dev->extent_shift = ilog2(extent);
	if (dev->copies == dev->nr_legs) {
		dev->leg_bytes = leg_size;
		return leg_size;
	}
	slots = leg_size >> dev->extent_shift;
	extents = div_u64(slots * dev->nr_legs, dev->copies);
	dev->leg_bytes = DIV_ROUND_UP_ULL(extents * dev->copies,
					  dev->nr_legs) << dev->extent_shift;
	return extents << dev->extent_shift;
}

/*
 * Whether every extent has a copy on one of the legs in @good (a mask of
 * leg indexes).  The extents' first copies are on the multiples of
 * gcd(R, N), in turn from extent 0 on (a mirror's only on leg 0, with
 * all of its legs); a device of fewer extents has only theirs.
 */
static bool rmbd_c_covered(struct rmbd_c_dev *dev, unsigned long good)
{
	unsigned int n = dev->nr_legs, r = dev->copies, e, s, k, period;

	period = n / gcd(r, n);
	/* A mirror's one extent may be larger than the device. */
	if (dev->size)
		period = min_t(u64, period,
			       DIV_ROUND_UP_ULL(dev->size,
						1ULL << dev->extent_shift));
	for (e = 0; e < period; e++) {
		s = e * r % n;
		for (k = 0; k < r; k++)
			if (good & BIT((s + k) % n))
				break;
		if (k == r)
			return false;
	}
	return true;
}

/* The legs with every flag of @all and none of @none, as a mask */
static unsigned long rmbd_c_legs_with(struct rmbd_c_dev *dev,
				      unsigned long all, unsigned long none)
{
	unsigned long mask = 0, f;
	unsigned int i;

	for (i = 0; i < dev->nr_legs; i++) {
		f = READ_ONCE(dev->legs[i]->flags);
		if ((f & all) == all && !(f & none))
			mask |= BIT(i);
	}
	return mask;
}

/*
 * Whether a write that misses the legs of @missed (its extent's legs that
 * are down, or that failed it) leaves every extent with a leg in sync,
 * which then holds every completed write: else the write must wait.  A
 * mirror's write so needs a leg in sync that took it; a pool's may not
 * make the last leg in sync of another extent stale.  Under
 * dev->sync_lock.
 */
static bool rmbd_c_write_synced(struct rmbd_c_dev *dev, unsigned long missed)
{
	lockdep_assert_held(&dev->sync_lock);
	return rmbd_c_covered(dev, rmbd_c_legs_with(dev,
			BIT(RMBD_C_LEG_IN_SYNC), 0) & ~missed);
}

/**
 * rmbd_c_dev_readable() - whether every extent has a copy up that holds
 * every write
 * @dev: the device
 *
 * Else requests wait for one (or fail, without a loss timeout).
 */
bool rmbd_c_dev_readable(struct rmbd_c_dev *dev)
{
	return rmbd_c_covered(dev, rmbd_c_legs_with(dev,
			BIT(RMBD_C_LEG_UP) | BIT(RMBD_C_LEG_IN_SYNC), 0));
}

/**
 * rmbd_c_dev_readable_without() - whether every extent has a copy up that
 * holds every write, on a leg other than @i and not failed
 * @dev: the device
 * @i: the leg to do without (a replace's)
 */
bool rmbd_c_dev_readable_without(struct rmbd_c_dev *dev, unsigned int i)
{
	return rmbd_c_covered(dev, rmbd_c_legs_with(dev,
			BIT(RMBD_C_LEG_UP) | BIT(RMBD_C_LEG_IN_SYNC),
			BIT(RMBD_C_LEG_FAILED)) & ~BIT(i));
}

/**
 * rmbd_c_dev_recoverable() - whether every extent has a copy that holds
 * every write on a leg not failed for good
 * @dev: the device
 */
bool rmbd_c_dev_recoverable(struct rmbd_c_dev *dev)
{
	return rmbd_c_covered(dev, rmbd_c_legs_with(dev,
			BIT(RMBD_C_LEG_IN_SYNC), BIT(RMBD_C_LEG_FAILED)));
}

/**
 * rmbd_c_leg_mark_held() - mark in @leg's dirty map all that it holds
 * @leg: a new leg, in a device's place
 *
 * A mirror's leg holds the whole device; a pool's, the regions of its
 * extents.
 */
void rmbd_c_leg_mark_held(struct rmbd_c_leg *leg)
{
	struct rmbd_c_dev *dev = leg->dev;
	u64 e, extents = dev->size >> dev->extent_shift, first, last;
	unsigned int n = dev->nr_legs;

	if (dev->copies == n) {
		bitmap_fill(leg->dirty, dev->nr_regions);
		return;
	}
	bitmap_zero(leg->dirty, dev->nr_regions);
	for (e = 0; e < extents; e++) {
		if ((leg->index + n - rmbd_c_first_copy(dev, e <<
							dev->extent_shift)) %
		    n >= dev->copies)
			continue;
		first = (e << dev->extent_shift) >> dev->region_shift;
		last = (((e + 1) << dev->extent_shift) - 1) >> dev->region_shift;
		bitmap_set(leg->dirty, first, min_t(u64, last,
						    dev->nr_regions - 1) -
			   first + 1);
	}
}

/**
 * rmbd_c_leg_missed() - a write completes without @leg
 * @leg: a leg of a device with several
 * @pos: the write's first byte
 * @len: its bytes
 *
 * Marks the range in the leg's dirty map; the leg holds no longer every
 * write, and takes no reads until it is brought up to date.  Called with
 * dev->sync_lock held.
 */
void rmbd_c_leg_missed(struct rmbd_c_leg *leg, u64 pos, u64 len)
{
	struct rmbd_c_dev *dev = leg->dev;
	unsigned long r, last;

	lockdep_assert_held(&dev->sync_lock);
	clear_bit(RMBD_C_LEG_IN_SYNC, &leg->flags);
	if (!leg->dirty || !len)
		return;
	last = min_t(u64, (pos + len - 1) >> dev->region_shift,
		     dev->nr_regions - 1);
	for (r = pos >> dev->region_shift; r <= last; r++)
		set_bit(r, leg->dirty);
}

/*
 * Bytes a read goes to one leg in, before the next: reads of a mirror
 * spread over its legs by where they are.
 */
#define RMBD_C_READ_STRIPE_SHIFT	16

/*
 * The leg a read of @rq goes to, and where on it (*@leg_pos): one that
 * holds a copy, is up and holds every write, and that it did not fail on
 * yet (when it failed on every such leg, any of them again;
 * RMBD_C_MAX_FAULTS bounds that).  NULL when there is none.
 */
struct rmbd_c_leg *rmbd_c_read_leg(struct rmbd_c_dev *dev,
				   struct rmbd_c_req *req,
				   struct request *rq, u64 *leg_pos)
{
	u64 pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	unsigned int i, k, r = dev->copies, first, start, tried_k = 0;
	struct rmbd_c_leg *leg, *tried = NULL;

	if (dev->nr_legs == 1) {
		*leg_pos = pos;
		return dev->legs[0];
	}
	first = rmbd_c_first_copy(dev, pos);
	start = (pos >> RMBD_C_READ_STRIPE_SHIFT) % r;
	for (i = 0; i < r; i++) {
		k = (start + i) % r;
		leg = rmbd_c_copy_leg(dev, first, k);
		if (!test_bit(RMBD_C_LEG_UP, &leg->flags) ||
		    !test_bit(RMBD_C_LEG_IN_SYNC, &leg->flags))
			continue;
		if (!(req->tried & BIT(leg->index))) {
			*leg_pos = rmbd_c_copy_pos(dev, pos, k);
			return leg;
		}
		if (!tried) {
			tried = leg;
			tried_k = k;
		}
	}
	req->tried = 0;
	if (tried)
		*leg_pos = rmbd_c_copy_pos(dev, pos, tried_k);
	return tried;
}

/* Give back what rmbd_c_io_prep() took for the first @n parts of @req. */
void rmbd_c_unprep(struct rmbd_c_req *req, unsigned int n)
{
	while (n--)
		rmbd_c_io_unprep(req->io[n]);
}

/*
 * The parts of a write (or discard, or write zeroes) of @rq: one for every
 * leg that holds a copy of it and is up.  A leg that is not misses the
 * write, which must then reach a leg that holds every write (or wait for
 * one).  Sets *@nr to the number of parts, 0 when the write must wait.
 */
blk_status_t rmbd_c_write_parts(struct rmbd_c_dev *dev,
				struct blk_mq_hw_ctx *hctx, struct rmbd_c_req *req,
				struct request *rq, u64 pos, unsigned int *nr)
{
	unsigned int k, n = 0, first = rmbd_c_first_copy(dev, pos);
	unsigned long missed = 0;
	bool synced;
	struct rmbd_c_queue *q;
	struct rmbd_c_leg *leg;
	blk_status_t status;
	unsigned long flags;
	u64 lpos;

	for (k = 0; k < dev->copies; k++) {
		leg = rmbd_c_copy_leg(dev, first, k);
		q = rmbd_c_leg_queue(leg, hctx);
		if (dev->nr_legs > 1 &&
		    (!test_bit(RMBD_C_LEG_UP, &leg->flags) ||
		     !test_bit(RMBD_C_Q_LIVE, &q->flags))) {
			/* Its queue failed: down now, not at its recovery */
			if (test_bit(RMBD_C_LEG_UP, &leg->flags))
				rmbd_c_leg_lost(leg);
			missed |= BIT(leg->index);
			continue;
		}
		lpos = rmbd_c_copy_pos(dev, pos, k);
		status = rmbd_c_io_prep(q, req->io[n], rq,
					lpos >> leg->slab_shift,
					lpos & (leg->slab_size - 1));
		/* Its queue failed meanwhile: the leg is going down. */
		if (unlikely(status == BLK_STS_IOERR && dev->nr_legs > 1 &&
			     !test_bit(RMBD_C_Q_LIVE, &q->flags))) {
			rmbd_c_leg_lost(leg);
			missed |= BIT(leg->index);
			continue;
		}
		if (unlikely(status)) {
			rmbd_c_unprep(req, n);
			return status;
		}
		n++;
	}
	*nr = n;
	if (likely(!missed))
		return BLK_STS_OK;
	spin_lock_irqsave(&dev->sync_lock, flags);
	synced = n && rmbd_c_write_synced(dev, missed);
	for (k = 0; synced && k < dev->copies; k++) {
		leg = rmbd_c_copy_leg(dev, first, k);
		if (missed & BIT(leg->index))
			rmbd_c_leg_missed(leg, pos, blk_rq_bytes(rq));
	}
	spin_unlock_irqrestore(&dev->sync_lock, flags);
	if (!synced) {
		rmbd_c_unprep(req, n);
		*nr = 0;
	}
	return BLK_STS_OK;
}

/**
 * rmbd_c_read_parts() - the part of a read: on one leg that holds every
 * write, up, and not tried yet
 * @dev: the device
 * @hctx: its hardware queue
 * @req: the read's PDU
 * @rq: the read
 * @nr: set to the number of parts: 1, or 0 when the read must wait for a
 *	leg with its data
 *
 * A leg whose queue failed meanwhile is marked lost and another one
 * taken, if the device has another.
 */
blk_status_t rmbd_c_read_parts(struct rmbd_c_dev *dev,
			       struct blk_mq_hw_ctx *hctx, struct rmbd_c_req *req,
			       struct request *rq, unsigned int *nr)
{
	struct rmbd_c_queue *q;
	struct rmbd_c_leg *leg;
	blk_status_t status;
	u64 pos;

	*nr = 0;
	for (;;) {
		leg = rmbd_c_read_leg(dev, req, rq, &pos);
		if (unlikely(!leg))
			return BLK_STS_OK;
		q = rmbd_c_leg_queue(leg, hctx);
		status = rmbd_c_io_prep(q, req->io[0], rq,
					pos >> leg->slab_shift,
					pos & (leg->slab_size - 1));
		if (likely(!status))
			break;
		/* Its queue failed meanwhile: another leg, if any */
		if (status != BLK_STS_IOERR || dev->nr_legs == 1 ||
		    test_bit(RMBD_C_Q_LIVE, &q->flags))
			return status;
		rmbd_c_leg_lost(leg);
	}
	*nr = 1;
	return BLK_STS_OK;
}

static unsigned int resync_rate;
module_param(resync_rate, uint, 0644);
MODULE_PARM_DESC(resync_rate,
		 "MiB/s a resync copies at most, per device (0: no limit)");

/*
 * The legs' dirty maps, once their first sessions are set up: a bit for
 * each region of the device (1 MiB, larger for a device of more than
 * 1 TiB); and the resync's buffer.  A device of one leg needs neither.
 * -ENOSPC for a pool whose exports hold no extent.
 */
int rmbd_c_dirty_alloc(struct rmbd_c_dev *dev)
{
	u64 size = U64_MAX, slab = U64_MAX;
	unsigned int i;

	if (dev->nr_legs == 1)
		return 0;
	for (i = 0; i < dev->nr_legs; i++) {
		size = min(size, dev->legs[i]->size);
		slab = min(slab, dev->legs[i]->slab_size);
	}
	/* The device's size, as the disk will have it */
	size = rmbd_c_layout_size(dev, size, slab);
	if (!size)
		return -ENOSPC;
	dev->region_shift = RMBD_C_REGION_SHIFT;
	while (DIV_ROUND_UP_ULL(size, 1ULL << dev->region_shift) >
	       (1UL << RMBD_C_MAX_REGIONS_SHIFT))
		dev->region_shift++;
	dev->nr_regions = DIV_ROUND_UP_ULL(size, 1ULL << dev->region_shift);
	/* As rmbd_c_disk_add() sets it: rmbd_c_initial_sync() needs it. */
	dev->size = size;
	for (i = 0; i < dev->nr_legs; i++) {
		dev->legs[i]->dirty = bitmap_zalloc(dev->nr_regions,
						    GFP_KERNEL);
		if (!dev->legs[i]->dirty)
			return -ENOMEM;
	}
	dev->resync_pages = kcalloc(RMBD_C_RESYNC_PAGES,
				    sizeof(*dev->resync_pages), GFP_KERNEL);
	if (!dev->resync_pages)
		return -ENOMEM;
	for (i = 0; i < RMBD_C_RESYNC_PAGES; i++) {
		dev->resync_pages[i] = alloc_page(GFP_KERNEL);
		if (!dev->resync_pages[i])
			return -ENOMEM;
	}
	return 0;
}

/* Free what rmbd_c_dirty_alloc() allocated, or some of it. */
void rmbd_c_dirty_free(struct rmbd_c_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_legs; i++) {
		bitmap_free(dev->legs[i]->dirty);
		dev->legs[i]->dirty = NULL;
	}
	if (!dev->resync_pages)
		return;
	for (i = 0; i < RMBD_C_RESYNC_PAGES; i++)
		if (dev->resync_pages[i])
			__free_page(dev->resync_pages[i]);
	kfree(dev->resync_pages);
	dev->resync_pages = NULL;
}

/**
 * rmbd_c_initial_sync() - mark the legs a new device must copy to
 * @dev: a device of several legs, its legs started and their dirty maps
 *	allocated, its disk not added yet
 *
 * A blank export (RMBD_OPEN_BLANK: never mapped for writing) holds the
 * zeroes it was created with; any other may hold data.  Blank legs beside
 * legs that are not are stale, with all they hold in their dirty maps,
 * and take no reads until the resync, started once the device is live,
 * has copied the others' data to them; when the others hold every
 * extent.  Legs that are not blank are never copied to: which of them
 * holds the data cannot be told (a connect that failed after its first
 * legs mapped leaves them not blank, with nothing of the device on them),
 * so they are taken to hold the same.  Nor is anything copied on a
 * read-only device, which writes nothing, or a shared one, whose other
 * hosts' writes the resync could not hold off.
 */
void rmbd_c_initial_sync(struct rmbd_c_dev *dev)
{
	unsigned long blank = 0, all = BIT(dev->nr_legs) - 1, flags;
	unsigned int i;
	bool covered;

	if (dev->nr_legs == 1 || dev->read_only || dev->shared)
		return;
	for (i = 0; i < dev->nr_legs; i++)
		if (dev->legs[i]->blank)
			blank |= BIT(i);
	if (!blank || blank == all)
		return;
	spin_lock_irqsave(&dev->sync_lock, flags);
	covered = rmbd_c_write_synced(dev, blank);
	for (i = 0; covered && i < dev->nr_legs; i++) {
		if (!(blank & BIT(i)))
			continue;
		clear_bit(RMBD_C_LEG_IN_SYNC, &dev->legs[i]->flags);
		rmbd_c_leg_mark_held(dev->legs[i]);
	}
	spin_unlock_irqrestore(&dev->sync_lock, flags);
	if (!covered) {
		pr_warn("rmbd%d: some extents are on blank legs only: no initial sync, blank legs %*pbl taken as they are\n",
			dev->index, dev->nr_legs, &blank);
		return;
	}
	pr_info("rmbd%d: initial sync: stale until copied to: leg(s) %*pbl\n",
		dev->index, dev->nr_legs, &blank);
}

static unsigned int rmbd_c_bucket(unsigned long region)
{
	return region % RMBD_C_BARRIER_BUCKETS;
}

/**
 * rmbd_c_write_enter() - count a write of a device with several legs
 * @dev: the device
 * @rq: the write (or discard, or write zeroes), not started
 *
 * Counts it in flight in the buckets of its regions, unless the resync
 * holds one of them: then it is started and waits on the requeue list
 * until the resync lets the bucket go, and true is returned.  A counted
 * write leaves with rmbd_c_write_exit() (its ->complete, or a refusal).
 */
bool rmbd_c_write_enter(struct rmbd_c_dev *dev, struct request *rq)
{
	struct rmbd_c_req *req = blk_mq_rq_to_pdu(rq);
	u64 pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	unsigned long r, first, last;
	int held;

	req->wr_regions = 0;
	/* The resync's own write (never split): it holds the barrier. */
	if (blk_rq_is_passthrough(rq))
		return false;
	first = pos >> dev->region_shift;
	last = (pos + max(blk_rq_bytes(rq), 1U) - 1) >> dev->region_shift;
	last = min(last, first + RMBD_C_BARRIER_BUCKETS - 1);
	for (r = first; r <= last; r++)
		atomic_inc(&dev->wr_inflight[rmbd_c_bucket(r)]);
	req->wr_region = first;
	req->wr_regions = last - first + 1;
	/* Pairs with the barrier in rmbd_c_resync_region(). */
	smp_mb__after_atomic();
	held = READ_ONCE(dev->resync_bucket);
	if (likely(held < 0))
		return false;
	for (r = first; r <= last; r++)
		if (rmbd_c_bucket(r) == held)
			break;
	if (r > last)
		return false;
	rmbd_c_write_exit(dev, req);
	blk_mq_start_request(rq);
	rmbd_c_count_requeue(rq);
	blk_mq_requeue_request(rq, false);
	/* As rmbd_c_park(): kick it if the bucket went meanwhile. */
	smp_mb();
	if (READ_ONCE(dev->resync_bucket) != held)
		blk_mq_kick_requeue_list(rq->q);
	return true;
}

/* A counted write is no longer in flight: wake the resync it held up. */
void rmbd_c_write_exit(struct rmbd_c_dev *dev, struct rmbd_c_req *req)
{
	unsigned long r;

	for (r = req->wr_region; r < req->wr_region + req->wr_regions; r++)
		if (atomic_dec_and_test(&dev->wr_inflight[rmbd_c_bucket(r)]) &&
		    READ_ONCE(dev->resync_bucket) == rmbd_c_bucket(r))
			wake_up(&dev->resync_wait);
	req->wr_regions = 0;
}

/*
 * Bytes the resync reads and writes at once: what one request takes
 * in one request (its own are driver-private, which the block layer does
 * not split), at most a region and the buffer.
 */
static unsigned int rmbd_c_resync_chunk(struct rmbd_c_dev *dev)
{
	struct request_queue *q = dev->disk->queue;
	u64 len = 1ULL << dev->region_shift;

	len = min_t(u64, len, (u64)RMBD_C_RESYNC_PAGES << PAGE_SHIFT);
	len = min_t(u64, len, (u64)queue_max_sectors(q) << SECTOR_SHIFT);
	len = min_t(u64, len, (u64)queue_max_segments(q) << PAGE_SHIFT);
	if (q->limits.chunk_sectors)
		len = min_t(u64, len,
			    (u64)q->limits.chunk_sectors << SECTOR_SHIFT);
	return rounddown_pow_of_two(len);
}

/*
 * Read or write @len bytes at @pos through the disk, with the buffer: a
 * driver-private request (rmbd_c_rq_op()) on the tag set's reserved tag,
 * so that the writes it holds off, each keeping its tag on the requeue
 * list, cannot leave it none.
 */
static int rmbd_c_resync_io(struct rmbd_c_dev *dev, enum req_op op, u64 pos,
			    unsigned int len)
{
	unsigned int i, n = DIV_ROUND_UP(len, PAGE_SIZE);
	enum req_op drv = op_is_write(op) ? REQ_OP_DRV_OUT : REQ_OP_DRV_IN;
	struct request *rq;
	blk_status_t st;
	struct bio *bio;
	int ret;

	rq = blk_mq_alloc_request(dev->disk->queue, drv | REQ_SYNC,
				  BLK_MQ_REQ_RESERVED);
	if (IS_ERR(rq))
		return PTR_ERR(rq);
	/* Quiet: rmbd_c_resync_leg() tells of its failure, once. */
	rq->rq_flags |= RQF_QUIET;
	rq->__sector = pos >> SECTOR_SHIFT;
	bio = bio_alloc(dev->disk->part0, n, drv | REQ_SYNC, GFP_NOIO);
	for (i = 0; i < n; i++)
		__bio_add_page(bio, dev->resync_pages[i],
			       min_t(unsigned int, PAGE_SIZE,
				     len - i * PAGE_SIZE), 0);
	ret = blk_rq_append_bio(rq, bio);
	if (!ret) {
		st = blk_execute_rq(rq, false);
		ret = blk_status_to_errno(st);
	}
	blk_mq_free_request(rq);
	bio_put(bio);
	return ret;
}

/*
 * Copy region @r to @leg: with the writes of its bucket held off and
 * those in flight ended, read it (from a leg in sync) and write it (to
 * every leg that is up).  Its dirty bit goes first: a write that fails on
 * @leg from then on sets it again.
 */
static int rmbd_c_resync_region(struct rmbd_c_dev *dev,
				struct rmbd_c_leg *leg, unsigned long r,
				unsigned int chunk)
{
	unsigned int b = rmbd_c_bucket(r);
	u64 pos = (u64)r << dev->region_shift;
	u64 end = min_t(u64, pos + (1ULL << dev->region_shift), dev->size);
	unsigned int len;
	int ret = 0;

	WRITE_ONCE(dev->resync_bucket, b);
	/* Pairs with the barrier in rmbd_c_write_enter(). */
	smp_mb();
	wait_event(dev->resync_wait, !atomic_read(&dev->wr_inflight[b]));
	clear_bit(r, leg->dirty);
	for (; pos < end && !ret; pos += len) {
		len = min_t(u64, chunk, end - pos);
		ret = rmbd_c_resync_io(dev, REQ_OP_READ, pos, len);
		if (!ret)
			ret = rmbd_c_resync_io(dev, REQ_OP_WRITE, pos, len);
	}
	if (ret)
		set_bit(r, leg->dirty);
	WRITE_ONCE(dev->resync_bucket, -1);
	/* Pairs with the barrier in rmbd_c_write_enter(). */
	smp_mb();
	blk_mq_kick_requeue_list(dev->disk->queue);
	return ret;
}

/*
 * Whether the resync of @leg must stop: it or the device is going, or a
 * replace holds the resync off.
 */
static bool rmbd_c_resync_stop(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg)
{
	return test_bit(RMBD_C_DEV_DEAD, &dev->flags) ||
	       test_bit(RMBD_C_DEV_NO_RESYNC, &dev->flags) ||
	       !test_bit(RMBD_C_LEG_UP, &leg->flags) ||
	       READ_ONCE(leg->stopping);
}

/*
 * Bring @leg, up but stale, up to date: copy each region its dirty map
 * has, throttled to resync_rate, until none is left; then it is in sync.
 */
static void rmbd_c_resync_leg(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg)
{
	unsigned int chunk = rmbd_c_resync_chunk(dev);
	unsigned long r, start = jiffies, t0, told = jiffies;
	u64 copied = 0, region = 1ULL << dev->region_shift;
	unsigned long flags;
	unsigned int rate;
	bool done;
	int ret;

	pr_info("rmbd%d: leg %u: resync of %lu MiB starts\n", dev->index,
		leg->index, (unsigned long)(((u64)bitmap_weight(leg->dirty,
			     dev->nr_regions) << dev->region_shift) >> 20));
	rmbd_c_notify(dev, RMBD_DEV_EVENT_RESYNC);
	do {
		for_each_set_bit(r, leg->dirty, dev->nr_regions) {
			if (rmbd_c_resync_stop(dev, leg))
				return;
			t0 = jiffies;
			ret = rmbd_c_resync_region(dev, leg, r, chunk);
			if (ret) {
				pr_warn("rmbd%d: leg %u: resync stopped (%d)\n",
					dev->index, leg->index, ret);
				return;
			}
			copied += region;
			/* How far it is: the legs' dirty bytes in the event */
			if (time_after(jiffies, told + RMBD_C_RESYNC_EVENT_SECS * HZ)) {
				told = jiffies;
				rmbd_c_notify_progress(dev,
						       RMBD_DEV_EVENT_RESYNC);
			}
			rate = READ_ONCE(resync_rate);
			if (rate)
				schedule_timeout_uninterruptible(max_t(long, 0,
					(long)(div_u64(region * HZ,
						       (u64)rate << 20)) -
					(long)(jiffies - t0)));
		}
		spin_lock_irqsave(&dev->sync_lock, flags);
		done = bitmap_empty(leg->dirty, dev->nr_regions) &&
		       test_bit(RMBD_C_LEG_UP, &leg->flags);
		if (done)
			set_bit(RMBD_C_LEG_IN_SYNC, &leg->flags);
		spin_unlock_irqrestore(&dev->sync_lock, flags);
	} while (!done && !rmbd_c_resync_stop(dev, leg));
	if (!done)
		return;
	/* A device that waited for its data may have it again. */
	rmbd_c_dev_revive(dev);
	pr_info("rmbd%d: leg %u in sync again: %llu MiB copied in %u ms\n",
		dev->index, leg->index, copied >> 20,
		jiffies_to_msecs(jiffies - start));
	rmbd_c_notify(dev, RMBD_DEV_EVENT_HEALTHY);
}

/* Start the resync if a leg that is up misses writes. */
void rmbd_c_resync_start(struct rmbd_c_dev *dev)
{
	struct rmbd_c_leg *leg;
	unsigned int i;

	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		if (test_bit(RMBD_C_LEG_UP, &leg->flags) &&
		    !test_bit(RMBD_C_LEG_IN_SYNC, &leg->flags)) {
			queue_work(rmbd_c_wq, &dev->resync_work);
			return;
		}
	}
}

/**
 * rmbd_c_resync_work() - bring the stale legs of a device up to date
 * @work: the device's resync_work
 *
 * Queued when a leg that missed writes is back.  Its requests wait for a
 * session like any (swap-out among those it holds off): no I/O to reclaim.
 */
void rmbd_c_resync_work(struct work_struct *work)
{
	struct rmbd_c_dev *dev = container_of(work, struct rmbd_c_dev,
					      resync_work);
	unsigned int noio = memalloc_noio_save();
	struct rmbd_c_leg *leg;
	unsigned int i;

	/* Its legs are being changed. */
	if (test_bit(RMBD_C_DEV_NO_RESYNC, &dev->flags))
		goto out;
	for (i = 0; i < dev->nr_legs; i++) {
		leg = dev->legs[i];
		if (!rmbd_c_resync_stop(dev, leg) &&
		    !test_bit(RMBD_C_LEG_IN_SYNC, &leg->flags) &&
		    rmbd_c_dev_readable(dev))
			rmbd_c_resync_leg(dev, leg);
	}
out:
	memalloc_noio_restore(noio);
}

/**
 * rmbd_c_legs_decide() - what becomes of a request of a device with
 * several legs that failed on some of them
 * @dev: the device
 * @rq: the request, its parts completed
 *
 * A write that a leg holding every write took succeeded, and the legs it
 * failed on miss it (their dirty maps say where); a read goes to a leg it
 * has not tried.  Else the device decides as for a device of one leg.
 */
enum rmbd_c_verdict rmbd_c_legs_decide(struct rmbd_c_dev *dev,
				       struct request *rq)
{
	struct rmbd_c_req *req = blk_mq_rq_to_pdu(rq);
	bool synced, took = false;
	unsigned long flags, missed = 0;
	unsigned int i, first;
	struct rmbd_c_leg *leg;
	struct rmbd_c_io *io;

	if (!op_is_write(req_op(rq))) {
		req->tried |= BIT(req->io[0]->queue->leg->index);
		first = rmbd_c_first_copy(dev, (u64)blk_rq_pos(rq) <<
					  SECTOR_SHIFT);
		for (i = 0; i < dev->copies; i++) {
			leg = rmbd_c_copy_leg(dev, first, i);
			if (req->tried & BIT(leg->index) ||
			    !test_bit(RMBD_C_LEG_UP, &leg->flags) ||
			    !test_bit(RMBD_C_LEG_IN_SYNC, &leg->flags))
				continue;
			return RMBD_C_RETRY;
		}
		return RMBD_C_UNDECIDED;
	}
	spin_lock_irqsave(&dev->sync_lock, flags);
	for (i = 0; i < req->nr_io; i++) {
		io = req->io[i];
		if (io->status)
			missed |= BIT(io->queue->leg->index);
		else
			took = true;
	}
	synced = took && rmbd_c_write_synced(dev, missed);
	for (i = 0; synced && i < req->nr_io; i++) {
		io = req->io[i];
		if (io->status)
			rmbd_c_leg_missed(io->queue->leg,
					  (u64)blk_rq_pos(rq) << SECTOR_SHIFT,
					  blk_rq_bytes(rq));
	}
	spin_unlock_irqrestore(&dev->sync_lock, flags);
	return synced ? RMBD_C_SUCCEEDED : RMBD_C_UNDECIDED;
}
