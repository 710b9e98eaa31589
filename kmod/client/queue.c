// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: the queue pairs of a session: connecting them, posting
 * I/O on them and its completions.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include "client.h"

#define RMBD_C_RESOLVE_MS	5000
#define RMBD_C_CM_TIMEOUT	(15 * HZ)
/*
 * Local ACK timeout, 4.096 us * 2^16 = 268 ms: with 6 retries a dead link
 * fails posted work requests within about 2 s.  Not 7: soft-RoCE takes
 * a retry count of 7 to mean "retry forever" (as the spec has it for RNR
 * retries only), and a dead target would go unnoticed until the
 * keepalive.
 */
#define RMBD_C_ACK_TIMEOUT	16
#define RMBD_C_RETRY_COUNT	6
/*
 * Outstanding RDMA READs we ask for per queue (the RDMA device may allow
 * fewer): a 1 MiB read posts up to eight READs, and four of them in flight
 * would fill sixteen.
 */
#define RMBD_C_RD_ATOM		64

static int rmbd_c_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rmbd_c_queue *q = cm_id->context;
	const char *why = NULL;
	const void *data;
	u8 len = 0;
	u64 sid;
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		err = rmbd_check_cm_rep(ev->param.conn.private_data,
					ev->param.conn.private_data_len, &sid);
		if (err)
			why = "target answered with invalid private data";
		else if (!q->idx)
			q->leg->session_id = sid;
		else if (sid != q->leg->session_id)
			err = -EPROTO;
		if (err) {
			why = why ?: "target answered with another session id";
			break;
		}
		/* From now on a disconnect fails the device. */
		set_bit(RMBD_C_Q_LIVE, &q->flags);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		err = -EHOSTUNREACH;
		why = "cannot resolve the target address (no RDMA device can reach it?)";
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		err = -ENETUNREACH;
		why = "no route to the target";
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		err = -EHOSTUNREACH;
		why = "target unreachable";
		break;
	case RDMA_CM_EVENT_REJECTED:
		data = rdma_consumer_reject_data(cm_id, ev, &len);
		err = rmbd_cm_rej_errno(data, len, &why);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (test_bit(RMBD_C_Q_LIVE, &q->flags)) {
			/*
			 * A session that went live after rmbd_c_remove_one()
			 * looked: rdma_cm waits until its ids are destroyed.
			 */
			if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
				set_bit(RMBD_C_LEG_IBDEV_GONE, &q->leg->flags);
			q->leg->broken(q->leg);
			return 0;
		}
		err = -ECONNRESET;
		why = "connection lost while connecting";
		break;
	default:
		return 0;
	}
	q->cm_error = err;
	q->cm_why = why;
	complete(&q->cm_done);
	return 0;
}

/*
 * Wait for the connection manager's answer: RMBD_C_CM_TIMEOUT at most,
 * and no later than the leg's deadline, if it has one.
 */
static int rmbd_c_cm_wait(struct rmbd_c_queue *q, const char **why)
{
	unsigned long deadline = READ_ONCE(q->leg->deadline);
	long ret, left = RMBD_C_CM_TIMEOUT;

	if (deadline)
		left = clamp_t(long, (long)(deadline - jiffies), 0, left);
	ret = left ? wait_for_completion_interruptible_timeout(&q->cm_done,
							       left) : 0;
	if (ret == 0) {
		*why = "timed out connecting to the target";
		return -ETIMEDOUT;
	}
	if (ret < 0) {
		*why = "interrupted";
		return -EINTR;
	}
	if (q->cm_error && q->cm_why)
		*why = q->cm_why;
	return q->cm_error;
}

/**
 * rmbd_c_queue_abort() - end a wait for the connection manager now
 * @q: the queue
 *
 * Its connect, under way or next, fails with -ECANCELED.  Any context.
 */
void rmbd_c_queue_abort(struct rmbd_c_queue *q)
{
	q->cm_why = "aborted";
	q->cm_error = -ECANCELED;
	complete(&q->cm_done);
}

static void rmbd_c_qp_event(struct ib_event *ev, void *ctx)
{
	pr_debug("QP event %s (%d)\n", ib_event_msg(ev->event), ev->event);
}

static void rmbd_c_free_cq(struct rmbd_c_queue *q)
{
	if (q->cq_from_pool)
		ib_cq_pool_put(q->cq, q->cq_size);
	else
		ib_free_cq(q->cq);
	q->cq = NULL;
}

/*
 * The work requests of a READ into a registered sink (rmbd_c_setup_read_mr()):
 * REG_MR, and the READ that invalidates it, or the READ and a LOCAL_INV.
 */
static unsigned int rmbd_c_read_mr_wrs(const struct rmbd_c_leg *leg)
{
	return leg->read_inv ? 2 : 3;
}

/**
 * rmbd_c_wr_budget() - the work requests an I/O queue has room for
 * @leg: its leg, whose first device is set up
 * @depth: its requests
 *
 * A 4 KiB read or write takes one work request (an iWARP write two, a
 * registered READ two or three: rmbd_c_read_mr_wrs()), a 1 MiB one up
 * to leg->req_wrs.  Sizing the send queue for every request at its
 * largest made it, and the CQ, grow with depth x the largest request: on
 * soft-RoCE, with 32 SGEs a work request rounded up to 1 KiB, 16 MiB for
 * a queue of depth 1024.  Room for every request at its smallest and one
 * in RMBD_C_LARGE_SHARE at its largest still lets all of them be in
 * flight while each fits one work request (128 KiB of pages with
 * soft-RoCE's 32 SGEs), and a quarter of the queue at 1 MiB;
 * rmbd_c_io_prep() holds back what does not fit.
 */
unsigned int rmbd_c_wr_budget(const struct rmbd_c_leg *leg,
			      unsigned int depth)
{
	unsigned int least = leg->signal_each ? 2 : 1;

	if (leg->read_mr)
		least = max(least, rmbd_c_read_mr_wrs(leg));
	least = min(least, leg->req_wrs);
	return depth * least + DIV_ROUND_UP(depth, RMBD_C_LARGE_SHARE) *
			       (leg->req_wrs - least);
}

static noinline int rmbd_c_create_qp(struct rmbd_c_leg *leg, struct rmbd_c_queue *q)
{
	struct ib_qp_init_attr attr = { };
	unsigned int recv_wr = q->idx ? 0 : RMBD_C_ADMIN_DEPTH;
	/* +1 each for the drain */
	unsigned int send_wr;
	int ret;

	q->wr_budget = q->idx ? rmbd_c_wr_budget(leg, q->depth) : q->depth;
	send_wr = q->wr_budget + 1;

	/* A flushed work request completes, signaled or not. */
	q->cq_size = send_wr + recv_wr + 1;
	if (q->poll) {
		/*
		 * Reaped by blk-mq's ->poll: no interrupt, no pool.  Never
		 * armed, but the vector must exist (mlx5 refuses others).
		 */
		q->cq = ib_alloc_cq(leg->ibdev, q, q->cq_size,
				    (q->idx - 1) % leg->ibdev->num_comp_vectors,
				    IB_POLL_DIRECT);
	} else if (q->idx) {
		/* Spread over completion vectors by the pool. */
		q->cq = ib_cq_pool_get(leg->ibdev, q->cq_size, q->idx - 1,
				       IB_POLL_SOFTIRQ);
		q->cq_from_pool = true;
	} else {
		q->cq = ib_alloc_cq(leg->ibdev, q, q->cq_size, 0,
				    IB_POLL_SOFTIRQ);
	}
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		return ret;
	}
	attr.event_handler = rmbd_c_qp_event;
	attr.qp_context = q;
	attr.cap.max_send_wr = send_wr;
	attr.cap.max_recv_wr = recv_wr + 1;
	attr.cap.max_send_sge = q->idx ? leg->wr_sges : 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = q->cq;
	attr.recv_cq = q->cq;
	ret = rdma_create_qp(q->cm_id, leg->pd, &attr);
	if (ret)
		goto out_free_cq;
	/*
	 * A provider may round up, never down: then it is none of ours.
	 * Fewer work requests may fit a smaller depth; fewer SGEs never do.
	 */
	if (attr.cap.max_send_sge < (q->idx ? leg->wr_sges : 1)) {
		ret = -EOPNOTSUPP;
		goto out_destroy_qp;
	}
	if (attr.cap.max_send_wr < send_wr) {
		ret = -EINVAL;
		goto out_destroy_qp;
	}
	if (q->idx && leg->read_mr) {
		ret = ib_mr_pool_init(q->cm_id->qp, &q->read_mrs, q->depth,
				      IB_MR_TYPE_MEM_REG, leg->mr_pages, 0);
		if (ret)
			goto out_destroy_qp;
	}
	set_bit(RMBD_C_Q_ALLOCATED, &q->flags);
	if (q->poll)
		set_bit(RMBD_C_Q_POLLABLE, &q->flags);
	return 0;

out_destroy_qp:
	rdma_destroy_qp(q->cm_id);
out_free_cq:
	rmbd_c_free_cq(q);
	return ret;
}
ALLOW_ERROR_INJECTION(rmbd_c_create_qp, ERRNO);

/**
 * rmbd_c_queue_resolve() - find the RDMA device and port to the target
 * @q: the queue, with no CM id
 * @why: a message for the administrator on failure
 *
 * Creates the queue's CM id and resolves the leg's address and a route:
 * @q->cm_id->device and ->port_num are then the RDMA device and port.
 */
int rmbd_c_queue_resolve(struct rmbd_c_queue *q, const char **why)
{
	struct rdma_cm_id *cm_id;
	int ret;

	reinit_completion(&q->cm_done);
	q->cm_error = 0;
	q->cm_why = NULL;
	cm_id = rdma_create_id(&init_net, rmbd_c_cm_handler, q, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		*why = "cannot create an RDMA CM id";
		return PTR_ERR(cm_id);
	}
	q->cm_id = cm_id;

	ret = rdma_resolve_addr(cm_id, NULL, (struct sockaddr *)&q->leg->addr,
				RMBD_C_RESOLVE_MS);
	if (ret) {
		*why = "cannot resolve the target address";
		return ret;
	}
	ret = rmbd_c_cm_wait(q, why);
	if (ret)
		return ret;

	reinit_completion(&q->cm_done);
	ret = rdma_resolve_route(cm_id, RMBD_C_RESOLVE_MS);
	if (ret) {
		*why = "cannot resolve a route to the target";
		return ret;
	}
	return rmbd_c_cm_wait(q, why);
}

/**
 * rmbd_c_queue_establish() - create the queue pair and connect it
 * @q: the queue, resolved on its leg's RDMA device
 * @min_depth: the least depth it may fall back to; @q->depth for none
 * @why: a message for the administrator on failure
 *
 * A NIC's send queue may hold fewer of our work requests than max_qp_wr
 * promises (its WQEs take room per SGE): the depth is halved, down to
 * @min_depth, until a queue pair fits.  Returns the depth it got, or a
 * negative errno.
 */
int rmbd_c_queue_establish(struct rmbd_c_queue *q, unsigned int min_depth,
			   const char **why)
{
	struct rmbd_c_leg *leg = q->leg;
	struct rdma_cm_id *cm_id = q->cm_id;
	struct rdma_conn_param param = { };
	struct rmbd_cm_req req = { };
	unsigned int idx = q->idx;
	int ret;

	ret = rmbd_c_create_qp(leg, q);
	while ((ret == -EINVAL || ret == -ENOMEM) &&
	       q->depth / 2 >= max(min_depth, 1U)) {
		q->depth /= 2;
		ret = rmbd_c_create_qp(leg, q);
	}
	if (ret == -EOPNOTSUPP) {
		*why = "the RDMA device gave a queue pair fewer SGEs than it announced";
		return ret;
	}
	if (ret) {
		*why = idx ? "the RDMA device cannot create an I/O queue pair of this depth" :
			     "cannot create a queue pair";
		return ret;
	}

	req.magic = cpu_to_le32(RMBD_PROTO_MAGIC);
	req.version = cpu_to_le16(RMBD_PROTO_VERSION);
	req.qtype = cpu_to_le16(idx ? RMBD_QUEUE_IO : RMBD_QUEUE_ADMIN);
	req.qid = cpu_to_le16(idx ? idx - 1 : 0);
	req.queue_depth = cpu_to_le16(q->depth);
	req.session_id = cpu_to_le64(idx ? leg->session_id : 0);
	if (idx)
		memcpy(req.join_key, leg->join_key, sizeof(req.join_key));
	param.private_data = &req;
	param.private_data_len = sizeof(req);
	param.qp_num = cm_id->qp->qp_num;
	param.flow_control = 1;
	param.retry_count = RMBD_C_RETRY_COUNT;
	param.rnr_retry_count = 7;
	param.initiator_depth = min_t(u32, RMBD_C_RD_ATOM,
				      leg->ibdev->attrs.max_qp_init_rd_atom);

	ret = rdma_set_ack_timeout(cm_id, RMBD_C_ACK_TIMEOUT);
	if (ret) {
		*why = "cannot set the queue's ACK timeout";
		return ret;
	}
	reinit_completion(&q->cm_done);
	ret = rdma_connect(cm_id, &param);
	if (ret) {
		*why = "cannot send the connect request";
		return ret;
	}
	ret = rmbd_c_cm_wait(q, why);
	return ret ? ret : q->depth;
}

/*
 * blk-mq may poll at any time, even with the request queue quiesced, and
 * so may the timeout handler: once this returns neither reaps @q's CQ, and
 * the drain or the destruction that follows has it to itself.
 */
static void rmbd_c_queue_stop_polling(struct rmbd_c_queue *q)
{
	unsigned long flags;

	spin_lock_irqsave(&q->poll_lock, flags);
	clear_bit(RMBD_C_Q_POLLABLE, &q->flags);
	spin_unlock_irqrestore(&q->poll_lock, flags);
}

void rmbd_c_queue_destroy_qp(struct rmbd_c_queue *q)
{
	if (test_bit(RMBD_C_Q_ALLOCATED, &q->flags)) {
		/* Nothing can queue it now; the drain posted what it held. */
		cancel_work_sync(&q->post_work);
		rmbd_c_queue_stop_polling(q);
		clear_bit(RMBD_C_Q_ALLOCATED, &q->flags);
		/* Every request is done: each gave its region back. */
		ib_mr_pool_destroy(q->cm_id->qp, &q->read_mrs);
		rdma_destroy_qp(q->cm_id);
		rmbd_c_free_cq(q);
	}
}

/*
 * rmbd_c_post_begin() and rmbd_c_post_end() bracket every ib_post_send()
 * of the I/O path and of keepalives.
 *
 * Bottom halves off: a provider that moves the work on in a softirq
 * (soft-RoCE's tasklets) then runs it as they come back on, here, instead
 * of waking ksoftirqd, a thread that waits its turn behind the submitter
 * on this CPU.  For a NIC, which rings a doorbell, it costs nothing.
 *
 * Not with PF_MEMALLOC, as nbd sends: rxe allocates its packets in its
 * tasklets, and the softirq that runs them masks that flag; siw sends
 * from threads of its own.  Their GFP_ATOMIC allocations have the atomic
 * reserves only (vm.min_free_kbytes; design.rst).
 *
 * Only for a soft provider (@leg->soft_post): a NIC posts by ringing a
 * doorbell.
 */
void rmbd_c_post_begin(struct rmbd_c_leg *leg)
{
	if (leg->soft_post)
		local_bh_disable();
}

void rmbd_c_post_end(struct rmbd_c_leg *leg)
{
	if (leg->soft_post)
		local_bh_enable();
}

static void rmbd_c_io_done(struct rmbd_c_leg *leg, struct rmbd_c_io *io);

/*
 * After the drain: requests that no work completion covered complete now,
 * with an error.  Only a failed post leaves such a request behind (its
 * unsignaled work requests finished, or never went out, and the signaled
 * one after them did not go out); the drain ensures that none of its
 * work requests still moves data.  Each leaves the list before it
 * completes, so that a completion that comes all the same (a drain that
 * failed) finds it gone and leaves it alone.
 */
static void rmbd_c_queue_sweep(struct rmbd_c_queue *q)
{
	struct rmbd_c_io *r;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	while (!list_empty(&q->posted)) {
		r = list_first_entry(&q->posted, struct rmbd_c_io, entry);
		list_del_init(&r->entry);
		spin_unlock_irqrestore(&q->lock, flags);
		r->status = BLK_STS_IOERR;
		rmbd_c_io_done(q->leg, r);
		spin_lock_irqsave(&q->lock, flags);
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

/* Drain @q, whose QP is allocated, and complete what it leaves. */
void rmbd_c_queue_drain(struct rmbd_c_queue *q)
{
	/*
	 * What was handed to another CPU is posted here, as it would have
	 * been inline (into the failed queue pair, which flushes it): not
	 * waited for, as that CPU may not run its worker for long.
	 */
	cancel_work_sync(&q->post_work);
	rmbd_c_post_batch(q);
	/* On a poll queue the drain reaps the CQ itself. */
	rmbd_c_queue_stop_polling(q);
	ib_drain_qp(q->cm_id->qp);
	rmbd_c_queue_sweep(q);
}

/* Reap a poll queue's completions; returns how many there were. */
int rmbd_c_poll_cq(struct rmbd_c_queue *q)
{
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&q->poll_lock, flags);
	if (test_bit(RMBD_C_Q_POLLABLE, &q->flags))
		n = ib_process_cq_direct(q->cq, -1);
	spin_unlock_irqrestore(&q->poll_lock, flags);
	return n;
}

/* Give back what rmbd_c_io_prep() took for @io's data. */
static void rmbd_c_io_unmap(struct rmbd_c_leg *leg, struct rmbd_c_io *io)
{
	struct request *rq = blk_mq_rq_from_pdu(io->req);

	if (io->mr) {
		ib_mr_pool_put(io->queue->cm_id->qp, &io->queue->read_mrs,
			       io->mr);
		io->mr = NULL;
	}
	if (io->wrs) {
		atomic_sub(io->wrs, &io->queue->wr_used);
		io->wrs = 0;
	}
	if (io->nents) {
		ib_dma_unmap_sg(leg->ibdev, io->sgl, io->nents,
				rq_dma_dir(rq));
		io->nents = 0;
	}
	if (io->sgl != io->inline_sgl) {
		mempool_free(io->sgl, leg->dev->seg_pool);
		io->sgl = io->inline_sgl;
		io->sge = io->inline_sge;
	}
}

/* Give back what rmbd_c_io_prep() took for @io, which is not queued. */
void rmbd_c_io_unprep(struct rmbd_c_io *io)
{
	rmbd_c_io_unmap(io->queue->leg, io);
}

/* @io is done; its request with it when it was the last of its parts. */
static void rmbd_c_io_done(struct rmbd_c_leg *leg, struct rmbd_c_io *io)
{
	struct rmbd_c_req *req = io->req;
	struct request *rq = blk_mq_rq_from_pdu(req);

	rmbd_c_io_unmap(leg, io);
	/* For the timeout handler: this part's leg answered */
	WRITE_ONCE(io->done, true);
	if (unlikely(io->status))
		WRITE_ONCE(req->status, io->status);
	if (!atomic_dec_and_test(&req->pending))
		return;
	if (likely(!blk_should_fake_timeout(rq->q)))
		blk_mq_complete_request(rq);
}

/* A work request of @io failed: the device fails over, unless flushed. */
static void rmbd_c_wr_failed(struct rmbd_c_io *io, const struct ib_wc *wc)
{
	struct rmbd_c_leg *leg = io->queue->leg;
	struct rmbd_c_dev *dev = leg->dev;

	/*
	 * Flushed: the queue pair is in error.  Usually the recovery did
	 * it, or an error already reported; but siw flushes everything when
	 * the peer closes the connection, before rdma_cm says so.  Recover
	 * before @io completes, so that it waits rather than fails.
	 */
	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		if (!test_bit(RMBD_C_DEV_RECOVERING, &dev->flags) &&
		    !test_bit(RMBD_C_LEG_RECOVERING, &leg->flags) &&
		    !test_bit(RMBD_C_DEV_DEAD, &dev->flags))
			leg->broken(leg);
		return;
	}
	/* Its own failure: it may fail so on every session (dev.c). */
	rmbd_c_req_fault(io->req);
	pr_err_ratelimited("rmbd%d: RDMA %s failed: %s (%d)\n", dev->index,
			   io->wr.wr.opcode == IB_WR_RDMA_WRITE ?
			   "WRITE" : "READ",
			   ib_wc_status_msg(wc->status), wc->status);
	leg->broken(leg);
}

/*
 * A work completion for @io: it and every request posted before it on
 * the same queue are done (with leg->signal_each, it alone).  Unsignaled
 * work requests that failed still complete one by one, in order, before
 * anything posted after them.
 */
void rmbd_c_read_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmbd_c_io *io = container_of(wc->wr_cqe, struct rmbd_c_io,
					      cqe);
	struct rmbd_c_queue *q = io->queue;
	struct rmbd_c_leg *leg = q->leg;
	struct rmbd_c_io *r, *tmp;
	unsigned long flags;
	LIST_HEAD(done);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		io->status = BLK_STS_IOERR;
		rmbd_c_wr_failed(io, wc);
	}
	spin_lock_irqsave(&q->lock, flags);
	/* Swept (rmbd_c_queue_sweep()): it has completed. */
	if (unlikely(list_empty(&io->entry))) {
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	if (leg->signal_each) {
		list_del_init(&io->entry);
		spin_unlock_irqrestore(&q->lock, flags);
		rmbd_c_io_done(leg, io);
		return;
	}
	list_cut_position(&done, &q->posted, &io->entry);
	spin_unlock_irqrestore(&q->lock, flags);
	list_for_each_entry_safe(r, tmp, &done, entry)
		rmbd_c_io_done(leg, r);
}

/*
 * A work request of a request before its last one.  It is never
 * signaled: only a failure (the queue pair then flushes the rest) ends up
 * here, and the request completes, with an error, from its last one.
 */
void rmbd_c_part_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmbd_c_io *io = container_of(wc->wr_cqe, struct rmbd_c_io,
					      part_cqe);

	if (unlikely(wc->status != IB_WC_SUCCESS))
		rmbd_c_wr_failed(io, wc);
}

/* Whether @wr is one of @io's work requests. */
static bool rmbd_c_io_has_wr(const struct rmbd_c_io *io,
			      const struct ib_send_wr *wr)
{
	const struct ib_send_wr *w;

	for (w = io->head; w != &io->wr.wr; w = w->next)
		if (w == wr)
			return true;
	return w == wr;
}

/**
 * rmbd_c_post_batch() - post the work requests queued on @q
 * @q: an I/O queue
 *
 * The last one is signaled and covers the others.  Requests that could
 * not be posted complete with an error, and the queue pair is failed so
 * that those posted before them complete too.  Posts between
 * rmbd_c_post_begin() and rmbd_c_post_end(): with bottom halves off.
 */
void rmbd_c_post_batch(struct rmbd_c_queue *q)
{
	const struct ib_send_wr *bad_wr = NULL;
	struct rmbd_c_io *r, *last, *tmp;
	unsigned long flags;
	LIST_HEAD(failed);
	bool hit = false;
	int ret;

	rmbd_c_post_begin(q->leg);
	spin_lock_irqsave(&q->lock, flags);
	if (list_empty(&q->batch)) {
		spin_unlock_irqrestore(&q->lock, flags);
		goto out;
	}
	last = list_last_entry(&q->batch, struct rmbd_c_io, entry);
	last->wr.wr.send_flags |= IB_SEND_SIGNALED;
	last->wr.wr.next = NULL;
	r = list_first_entry(&q->batch, struct rmbd_c_io, entry);
	/* Posting order is completion order: post under the lock. */
	list_splice_tail_init(&q->batch, &q->posted);
	ret = ib_post_send(q->cm_id->qp, r->head, &bad_wr);
	if (unlikely(ret)) {
		/*
		 * Nothing from bad_wr on was posted: its request and those
		 * after it fail here.  Unless some of its work requests went
		 * out: it then stays, failed, like the requests before it,
		 * for the sweep after the drain (until then its pages may
		 * still be in use).
		 */
		list_for_each_entry_safe_from(r, tmp, &q->posted, entry) {
			if (!hit) {
				if (!rmbd_c_io_has_wr(r, bad_wr))
					continue;
				hit = true;
				/* Refused: it may be on every session. */
				rmbd_c_req_fault(r->req);
				if (r->head != bad_wr) {
					r->status = BLK_STS_IOERR;
					continue;
				}
			}
			list_move_tail(&r->entry, &failed);
		}
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (unlikely(ret)) {
		pr_err_ratelimited("rmbd%d: posting work requests failed (%d)\n",
				   q->leg->dev->index, ret);
		q->leg->broken(q->leg);
		list_for_each_entry_safe(r, tmp, &failed, entry) {
			r->status = BLK_STS_IOERR;
			rmbd_c_io_done(q->leg, r);
		}
	}
out:
	rmbd_c_post_end(q->leg);
}

void rmbd_c_post_work(struct work_struct *work)
{
	rmbd_c_post_batch(container_of(work, struct rmbd_c_queue, post_work));
}

/*
 * A queue that posts from another CPU goes back to posting inline after
 * this many commits in a row that found nothing else in flight, and
 * tries again after this many inline ones.
 */
#define RMBD_C_IDLE_COMMITS	4
#define RMBD_C_PROBE_COMMITS	256
/*
 * A hand-off still waiting this long for its worker (that CPU busy with
 * something it will not leave, an isolated CPU) is posted inline by the
 * next commit, which goes back to posting inline.
 */
#define RMBD_C_HANDOFF_WAIT	(HZ / 10)

/**
 * rmbd_c_queue_commit() - post the batch queued on @q, here or elsewhere
 * @q: an I/O queue
 *
 * A soft provider (soft-RoCE, siw) does the RDMA device's work on the
 * CPU: its requester, the peer's responder when it loops back, and the
 * completion all run where the work request is posted.  Posted inline,
 * a request completes before its submitter gets control back, so a
 * submitter that keeps sixteen requests in flight gets no more done than
 * one that waits for each, and the other CPUs idle.  Posted from another
 * CPU, that work runs beside the submitter's, at the cost of a wake-up.
 *
 * So such a queue posts from the next CPU while its commits find other
 * requests in flight, and inline once they stop finding any (a submitter
 * that waits for each request: there the wake-up is only a cost).  Inline,
 * a request is done before the next one comes, so the queue cannot see
 * what its submitters would keep in flight, unless they submit several
 * at once (a plug, readahead): it tries the other CPU again then, and
 * every RMBD_C_PROBE_COMMITS posts.  Poll queues always post inline;
 * a NIC posts by ringing a doorbell, at once.
 */
void rmbd_c_queue_commit(struct rmbd_c_queue *q)
{
	unsigned long flags;
	unsigned int cpu;
	bool idle;

	/*
	 * Reclaim's writes (swap-out, writeback from direct reclaim or
	 * kswapd) post inline: done before reclaim looks at their pages
	 * again, as they were before, so that a memory cgroup at its limit
	 * sees its reclaim make progress instead of going out of memory.
	 */
	if (!q->leg->soft_post || q->poll || num_online_cpus() < 2 ||
	    (current->flags & PF_MEMALLOC)) {
		rmbd_c_post_batch(q);
		return;
	}
	spin_lock_irqsave(&q->lock, flags);
	if (list_empty(&q->batch)) {
		spin_unlock_irqrestore(&q->lock, flags);
		return;
	}
	if (q->handoff && work_pending(&q->post_work) &&
	    time_after(jiffies, READ_ONCE(q->handoff_at) + RMBD_C_HANDOFF_WAIT)) {
		q->handoff = false;
		q->streak = 0;
	} else if (q->handoff) {
		idle = list_empty(&q->posted) && list_is_singular(&q->batch) &&
		       !work_pending(&q->post_work);
		q->streak = idle ? q->streak + 1 : 0;
		if (q->streak >= RMBD_C_IDLE_COMMITS) {
			q->handoff = false;
			q->streak = 0;
		}
	} else if (!list_is_singular(&q->batch) ||
		   ++q->streak >= RMBD_C_PROBE_COMMITS) {
		q->handoff = true;
		q->streak = 0;
	}
	idle = !q->handoff;
	spin_unlock_irqrestore(&q->lock, flags);
	if (idle) {
		rmbd_c_post_batch(q);
		return;
	}
	cpu = cpumask_next(raw_smp_processor_id(), cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	if (queue_work_on(cpu, rmbd_c_post_wq, &q->post_work))
		WRITE_ONCE(q->handoff_at, jiffies);
}

/**
 * rmbd_c_queue_post_stuck() - post what waits on @q for a worker that never ran
 * @q: an I/O queue
 *
 * For a request that timed out: requests handed to another CPU
 * (rmbd_c_queue_commit()) whose worker did not run are posted here, and
 * the queue posts inline from now on.  Return: whether there were any.
 */
bool rmbd_c_queue_post_stuck(struct rmbd_c_queue *q)
{
	unsigned long flags;
	bool stuck;

	spin_lock_irqsave(&q->lock, flags);
	stuck = !list_empty(&q->batch);
	if (stuck) {
		q->handoff = false;
		q->streak = 0;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (stuck)
		rmbd_c_post_batch(q);
	return stuck;
}

/*
 * DMA-map the request's pages into io->sgl: returns how many entries the
 * device sees, 0 when there is no memory or mapping for them now (the
 * caller gives back what was taken).
 */
static int rmbd_c_map_data(struct rmbd_c_leg *leg, struct request *rq,
			   struct rmbd_c_io *io)
{
	unsigned int segs = max(blk_rq_nr_phys_segments(rq), 1U);
	struct scatterlist *sg;
	int i, count;

	if (segs > RMBD_C_INLINE_SEGS) {
		sg = mempool_alloc(leg->dev->seg_pool, GFP_NOWAIT);
		if (unlikely(!sg))
			return 0;
		io->sgl = sg;
		io->sge = (struct ib_sge *)(sg + leg->dev->max_segs);
	}
	/*
	 * Only the entries this request can use (blk_rq_map_sg() fills at
	 * most that many): a 4 KiB request clears and maps one.
	 */
	sg_init_table(io->sgl, segs);
	io->nents = blk_rq_map_sg(rq->q, rq, io->sgl);
	count = ib_dma_map_sg(leg->ibdev, io->sgl, io->nents,
			      rq_dma_dir(rq));
	if (unlikely(!count)) {
		io->nents = 0;
		return 0;
	}
	for_each_sg(io->sgl, sg, count, i) {
		io->sge[i].addr = sg_dma_address(sg);
		io->sge[i].length = sg_dma_len(sg);
		io->sge[i].lkey = leg->pd->local_dma_lkey;
	}
	return count;
}

static void rmbd_c_init_wr(struct ib_rdma_wr *wr, enum ib_wr_opcode opcode,
			   struct ib_sge *sge, int nsge,
			   const struct rmbd_c_slab *slab, u64 off)
{
	wr->wr.opcode = opcode;
	wr->wr.sg_list = sge;
	wr->wr.num_sge = nsge;
	wr->wr.send_flags = 0;
	wr->wr.next = NULL;
	wr->remote_addr = slab->addr + off;
	wr->rkey = slab->rkey;
}

/*
 * On iWARP (leg->signal_each) a write's last work request, @io->wr, is a
 * one-byte RDMA READ into leg->flush_mr after its WRITEs, the last of them
 * @prev: its response comes once the target placed them.
 */
static void rmbd_c_init_flush(struct rmbd_c_leg *leg, struct rmbd_c_io *io,
			      struct ib_rdma_wr *prev,
			      const struct rmbd_c_slab *slab, u64 off)
{
	rmbd_c_init_wr(&io->wr, IB_WR_RDMA_READ, &leg->flush_sge, 1, slab,
		       off);
	prev->wr.next = &io->wr.wr;
}

/*
 * The work requests of a read or write: @count SGEs from io->sge, at
 * most leg->wr_sges per work request, to consecutive remote addresses
 * from @off in @slab.  The last one is io->wr.
 */
static void rmbd_c_setup_rw(struct rmbd_c_leg *leg, struct rmbd_c_io *io,
			    enum ib_wr_opcode opcode, int count,
			    const struct rmbd_c_slab *slab, u64 off)
{
	bool flush = opcode == IB_WR_RDMA_WRITE && leg->signal_each;
	struct ib_rdma_wr *wr, *prev = NULL;
	struct ib_sge *sge = io->sge;
	int i, n, part = 0;
	u64 start = off;

	while (count) {
		n = min_t(int, count, opcode == IB_WR_RDMA_READ ?
			  leg->rd_sges : leg->wr_sges);
		wr = n == count && !flush ? &io->wr : &io->parts[part++];
		rmbd_c_init_wr(wr, opcode, sge, n, slab, off);
		if (prev)
			prev->wr.next = &wr->wr;
		else
			io->head = &wr->wr;
		for (i = 0; i < n; i++)
			off += sge[i].length;
		sge += n;
		count -= n;
		prev = wr;
	}
	if (flush)
		rmbd_c_init_flush(leg, io, prev, slab, start);
}

/*
 * An RDMA READ into a region registered for it (leg->read_mr): REG_MR of
 * the request's pages with REMOTE_WRITE, the READ into the region, and
 * its invalidation, so that the peer can write there for this READ only.
 * On iWARP the READ invalidates it (READ with invalidate); elsewhere a
 * LOCAL_INV follows, fenced behind the READ.
 */
static blk_status_t rmbd_c_setup_read_mr(struct rmbd_c_leg *leg,
					 struct rmbd_c_io *io, int count,
					 const struct rmbd_c_slab *slab,
					 u64 off)
{
	struct ib_qp *qp = io->queue->cm_id->qp;
	struct ib_mr *mr;
	int n;

	mr = ib_mr_pool_get(qp, &io->queue->read_mrs);
	if (unlikely(!mr))
		return BLK_STS_RESOURCE;
	io->mr = mr;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	n = ib_map_mr_sg(mr, io->sgl, count, NULL, PAGE_SIZE);
	if (unlikely(n != count))
		return BLK_STS_IOERR;

	io->reg.wr.opcode = IB_WR_REG_MR;
	io->reg.wr.wr_cqe = &io->part_cqe;
	io->reg.wr.num_sge = 0;
	io->reg.wr.send_flags = 0;
	io->reg.mr = mr;
	io->reg.key = mr->rkey;
	io->reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	io->head = &io->reg.wr;

	io->sge[0].addr = mr->iova;
	io->sge[0].length = mr->length;
	io->sge[0].lkey = mr->lkey;
	if (leg->read_inv) {
		rmbd_c_init_wr(&io->wr, IB_WR_RDMA_READ_WITH_INV, io->sge,
			       1, slab, off);
		io->wr.wr.ex.invalidate_rkey = mr->lkey;
		io->reg.wr.next = &io->wr.wr;
		return BLK_STS_OK;
	}
	rmbd_c_init_wr(&io->parts[0], IB_WR_RDMA_READ, io->sge, 1, slab,
		       off);
	io->reg.wr.next = &io->parts[0].wr;
	io->parts[0].wr.next = &io->wr.wr;
	io->wr.wr.opcode = IB_WR_LOCAL_INV;
	io->wr.wr.num_sge = 0;
	io->wr.wr.send_flags = IB_SEND_FENCE;
	io->wr.wr.next = NULL;
	io->wr.wr.ex.invalidate_rkey = mr->lkey;
	return BLK_STS_OK;
}

/*
 * Discard and write zeroes: RDMA WRITEs from the zero region.  Either
 * may cross chunk_sectors (6.1 splits neither there; a mirror's only)
 * slab boundary (it is at most zero_len <= slab_size long): then a first
 * WRITE, a part, zeroes what is in the first slab.
 */
static blk_status_t rmbd_c_setup_zeroes(struct rmbd_c_leg *leg,
					struct rmbd_c_io *io, u64 idx,
					u64 off, u32 len)
{
	u64 first = min_t(u64, len, leg->slabs[idx].len - off);
	struct ib_sge *sge = io->sge;
	struct ib_rdma_wr *wr;

	if (unlikely(len > leg->zero_len))
		return BLK_STS_IOERR;
	io->nents = 0;
	if (first < len) {
		if (unlikely(idx + 1 >= leg->nr_slabs ||
			     len - first > leg->slabs[idx + 1].len))
			return BLK_STS_IOERR;
		sge->addr = leg->zero_mr->iova;
		sge->length = first;
		sge->lkey = leg->zero_mr->lkey;
		rmbd_c_init_wr(&io->parts[0], IB_WR_RDMA_WRITE, sge, 1,
			       &leg->slabs[idx], off);
		io->head = &io->parts[0].wr;
		sge++;
		idx++;
		off = 0;
		len -= first;
	}
	sge->addr = leg->zero_mr->iova;
	sge->length = len;
	sge->lkey = leg->zero_mr->lkey;
	/* The last WRITE, unless a flush follows it (rmbd_c_init_flush()) */
	wr = leg->signal_each ? &io->parts[sge - io->sge] : &io->wr;
	rmbd_c_init_wr(wr, IB_WR_RDMA_WRITE, sge, 1, &leg->slabs[idx], off);
	if (sge != io->sge)
		io->parts[0].wr.next = &wr->wr;
	else
		io->head = &wr->wr;
	if (leg->signal_each)
		rmbd_c_init_flush(leg, io, wr, &leg->slabs[idx], off);
	return BLK_STS_OK;
}

/*
 * The most work requests @rq can take on @leg (rmbd_c_io_prep() and the
 * setup functions after it): its segments in SGEs of a work request, an
 * iWARP write's flush, a registered READ's REG_MR and invalidation, a
 * zero write's second slab.
 */
static unsigned int rmbd_c_wrs_max(const struct rmbd_c_leg *leg,
				   struct request *rq)
{
	unsigned int segs = max(blk_rq_nr_phys_segments(rq), 1U), n;

	switch (rmbd_c_rq_op(rq)) {
	case REQ_OP_READ:
		n = leg->read_mr ? rmbd_c_read_mr_wrs(leg) :
				   DIV_ROUND_UP(segs, leg->rd_sges);
		break;
	case REQ_OP_WRITE:
		n = DIV_ROUND_UP(segs, leg->wr_sges) + leg->signal_each;
		break;
	default:
		n = 2 + leg->signal_each;
		break;
	}
	return min(n, leg->req_wrs);
}

/*
 * Take @n work requests for @io from its queue's budget
 * (rmbd_c_wr_budget()); false when the send queue has no room for them
 * now: the request then waits for others on the queue to complete, and
 * blk-mq restarts it.
 */
static bool rmbd_c_take_wrs(struct rmbd_c_queue *q, struct rmbd_c_io *io,
			    unsigned int n)
{
	int used = atomic_read(&q->wr_used);

	do {
		if (used + n > q->wr_budget)
			return false;
	} while (!atomic_try_cmpxchg(&q->wr_used, &used, used + n));
	io->wrs = n;
	return true;
}

/*
 * Give back what @io took and its work requests do not use; false when
 * they are more than it took (rmbd_c_wrs_max() is wrong): then the send
 * queue could overflow.
 */
static bool rmbd_c_trim_wrs(struct rmbd_c_queue *q, struct rmbd_c_io *io)
{
	const struct ib_send_wr *wr;
	unsigned int n = 1;

	for (wr = io->head; wr != &io->wr.wr; wr = wr->next)
		n++;
	if (WARN_ON_ONCE(n > io->wrs))
		return false;
	atomic_sub(io->wrs - n, &q->wr_used);
	io->wrs = n;
	return true;
}

static blk_status_t __rmbd_c_io_prep(struct rmbd_c_queue *q,
				     struct rmbd_c_io *io, struct request *rq,
				     u64 idx, u64 off);

/**
 * rmbd_c_io_prep() - the work requests of a block request on a queue
 * @q: the leg's queue it goes to
 * @io: a part of @rq's
 * @rq: a read, write, discard or write zeroes; not started
 * @idx: the leg's slab it starts in
 * @off: where in that slab
 *
 * It first takes the most work requests @rq may need from @q's budget
 * (BLK_STS_RESOURCE when the send queue has no room for them now) and
 * keeps those it needs.  On success io->head is the first work request
 * and io->wr the last: rmbd_c_io_queue() posts them once @rq is started.
 */
blk_status_t rmbd_c_io_prep(struct rmbd_c_queue *q, struct rmbd_c_io *io,
			    struct request *rq, u64 idx, u64 off)
{
	blk_status_t status;

	if (unlikely(!test_bit(RMBD_C_Q_LIVE, &q->flags)))
		return BLK_STS_IOERR;
	io->queue = q;
	/* First, so that a request that must wait costs nothing more */
	if (unlikely(!rmbd_c_take_wrs(q, io, rmbd_c_wrs_max(q->leg, rq))))
		return BLK_STS_RESOURCE;
	status = __rmbd_c_io_prep(q, io, rq, idx, off);
	if (likely(!status) && unlikely(!rmbd_c_trim_wrs(q, io)))
		status = BLK_STS_IOERR;
	if (unlikely(status))
		rmbd_c_io_unmap(q->leg, io);
	return status;
}

static blk_status_t __rmbd_c_io_prep(struct rmbd_c_queue *q,
				     struct rmbd_c_io *io, struct request *rq,
				     u64 idx, u64 off)
{
	struct rmbd_c_leg *leg = q->leg;
	u32 len = blk_rq_bytes(rq);
	enum ib_wr_opcode opcode;
	int count;

	if (unlikely(idx >= leg->nr_slabs || off >= leg->slabs[idx].len))
		return BLK_STS_IOERR;
	switch (rmbd_c_rq_op(rq)) {
	case REQ_OP_READ:
		opcode = IB_WR_RDMA_READ;
		break;
	case REQ_OP_WRITE:
		opcode = IB_WR_RDMA_WRITE;
		break;
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		return rmbd_c_setup_zeroes(leg, io, idx, off, len);
	default:
		return BLK_STS_NOTSUPP;
	}
	/* chunk_sectors keeps reads and writes inside one slab. */
	if (unlikely(off + len > leg->slabs[idx].len))
		return BLK_STS_IOERR;
	count = rmbd_c_map_data(leg, rq, io);
	if (unlikely(!count))
		return BLK_STS_RESOURCE;
	if (opcode == IB_WR_RDMA_READ && leg->read_mr)
		return rmbd_c_setup_read_mr(leg, io, count, &leg->slabs[idx],
					    off);
	rmbd_c_setup_rw(leg, io, opcode, count, &leg->slabs[idx], off);
	return BLK_STS_OK;
}

/*
 * Queue the work requests of started @io, for rmbd_c_post_batch() at the
 * end of the dispatch batch.
 */
void rmbd_c_io_queue(struct rmbd_c_queue *q, struct rmbd_c_io *io)
{
	unsigned long flags;

	io->status = BLK_STS_OK;
	io->done = false;
	if (q->leg->signal_each)
		io->wr.wr.send_flags |= IB_SEND_SIGNALED;
	spin_lock_irqsave(&q->lock, flags);
	if (!list_empty(&q->batch))
		list_last_entry(&q->batch, struct rmbd_c_io,
				entry)->wr.wr.next = io->head;
	list_add_tail(&io->entry, &q->batch);
	spin_unlock_irqrestore(&q->lock, flags);
}
