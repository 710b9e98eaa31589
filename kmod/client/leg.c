// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: a leg, the session to one export of one target.  Its
 * admin queue and protocol (OPEN, AUTH, MAP, KEEPALIVE), the RDMA device
 * it found and the memory regions it registered there, and its recovery:
 * the error work, reconnects, and the teardown.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/error-injection.h>
#include <linux/slab.h>
#include <linux/log2.h>
#include <linux/netdevice.h>
#include <linux/sched/mm.h>
#include <rdma/ib_cache.h>
#include <crypto/algapi.h>
#include <crypto/hash.h>
#include "auth.h"
#include "client.h"

#define RMBD_C_ADMIN_TIMEOUT	(10 * HZ)
/* OPEN refused while another host's session is torn down: try again. */
#define RMBD_C_OPEN_TRIES	50
#define RMBD_C_OPEN_RETRY_MS	100
/* Bounds of the keepalive interval, whatever the target announces. */
#define RMBD_C_KA_MIN_MS	100
#define RMBD_C_KA_MAX_MS	60000
/* How often a reconnect that waits for its port looks again at first */
#define RMBD_C_PORT_POLL	(HZ / 10)
#define RMBD_C_PORT_POLL_FOR	(10 * HZ)
/* Largest discard or write zeroes one work request carries. */
#define RMBD_C_ZERO_MAX		(2U << 20)

/**
 * rmbd_c_leg_lost() - the leg's session is broken
 * @leg: the leg
 *
 * The leg takes no new I/O from now on.  When no other leg holds the
 * device's data, requests that fail are requeued rather than ended,
 * unless the device is dead.
 */
void rmbd_c_leg_lost(struct rmbd_c_leg *leg)
{
	struct rmbd_c_dev *dev = leg->dev;

	clear_bit(RMBD_C_LEG_UP, &leg->flags);
	/* The device's state_lock orders this with the other legs' news. */
	rmbd_c_dev_unreadable(dev);
}

/**
 * rmbd_c_schedule_fail() - the session is broken: recover or fail
 * @leg: the leg
 *
 * As rmbd_c_leg_lost(); err_work decides what happens next.
 */
void rmbd_c_schedule_fail(struct rmbd_c_leg *leg)
{
	rmbd_c_leg_lost(leg);
	queue_work(rmbd_c_wq, &leg->err_work);
}

static void rmbd_c_admin_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmbd_c_leg *leg = container_of(wc->wr_cqe, struct rmbd_c_leg,
					      send_cqe);

	leg->send_status = wc->status;
	complete(&leg->send_done);
}

static void rmbd_c_admin_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmbd_c_leg *leg = container_of(wc->wr_cqe, struct rmbd_c_leg,
					      recv_cqe);

	leg->recv_status = wc->status;
	leg->recv_len = wc->byte_len;
	complete(&leg->recv_done);
}

static bool read_mr;
module_param(read_mr, bool, 0444);
MODULE_PARM_DESC(read_mr,
		 "register RDMA READ sinks on every transport, not only on iWARP (default: no)");

/*
 * How RDMA READs land on @ibdev: in registered regions (iWARP, or the
 * read_mr parameter), else at the PD's local DMA lkey.  Returns the pages
 * one region takes, 0 for none, or a negative errno with @why.
 */
static int rmbd_c_read_sink(struct ib_device *ibdev, bool iwarp,
			    const char **why)
{
	struct ib_device_attr *attrs = &ibdev->attrs;

	if (!iwarp && !read_mr)
		return 0;
	if (!(attrs->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    !(attrs->page_size_cap & PAGE_SIZE) ||
	    attrs->max_fast_reg_page_list_len < 2) {
		*why = "the RDMA device cannot register the sinks of RDMA READs (iWARP needs them)";
		return -EOPNOTSUPP;
	}
	/* A full request, when its first page is a partial one */
	return min_t(u32, attrs->max_fast_reg_page_list_len,
		     RMBD_C_MAX_IO_BYTES / PAGE_SIZE + 1);
}

static int rmbd_c_first_device(struct rmbd_c_leg *leg,
			       struct ib_device *ibdev, u32 port,
			       const char **why)
{
	struct ib_device_attr *attrs = &ibdev->attrs;
	unsigned int depth = leg->dev->queue_depth;
	bool iwarp = rdma_protocol_iwarp(ibdev, port);
	unsigned int wr, rd, req_wrs, seg, cap, budget;
	int mr_pages, room;

	mr_pages = rmbd_c_read_sink(ibdev, iwarp, why);
	if (mr_pages < 0)
		return mr_pages;
	/*
	 * A request's segments, as the RDMA device's DMA maps them (and
	 * bounces them: swiotlb maps no more than 256 KiB at once).
	 */
	seg = min_t(unsigned int, ib_dma_max_seg_size(ibdev),
		    RMBD_C_MAX_IO_BYTES);
	if (!ib_uses_virt_dma(ibdev))
		seg = min_t(size_t, seg, dma_max_mapping_size(ibdev->dma_device));
	if (seg < PAGE_SIZE) {
		*why = "the RDMA device's DMA segments are smaller than a page";
		return -EOPNOTSUPP;
	}
	/* SGEs per work request, per direction: a READ has its own limit. */
	wr = min_t(u32, attrs->max_send_sge, RMBD_C_MAX_SEGS);
	rd = mr_pages ? 1 : min_t(u32, attrs->max_sge_rd, wr);
	if (wr < 1 || rd < 1) {
		*why = "the RDMA device supports no SGE";
		return -EINVAL;
	}
	/* The disk's limits and request layout were sized at first connect. */
	if (leg->wr_sges) {
		if (wr < leg->wr_sges || rd < leg->rd_sges) {
			*why = "the RDMA device now supports fewer SGEs than the device was created with";
			return -EXDEV;
		}
		if (seg < leg->max_seg_size) {
			*why = "the RDMA device now maps smaller DMA segments than the device was created with";
			return -EXDEV;
		}
		if ((mr_pages > 0) != leg->read_mr || mr_pages < leg->mr_pages ||
		    iwarp != leg->signal_each) {
			*why = "the RDMA device is of another transport than the device was created with";
			return -EXDEV;
		}
	} else {
		leg->signal_each = iwarp;
		leg->max_seg_size = seg;
		leg->wr_sges = wr;
		leg->rd_sges = rd;
		leg->read_mr = mr_pages > 0;
		leg->read_inv = rdma_cap_read_inv(ibdev, port);
		leg->mr_pages = mr_pages;
		/*
		 * Work requests a request may take: as many as the queue
		 * depth leaves room for in the send queue and CQ (those of
		 * a NIC are large; a small one gets smaller requests, not a
		 * failed connect), RMBD_C_MAX_REQ_WRS at most, and on iWARP
		 * one of them a write's flush (rmbd_c_init_flush()).  This
		 * is as if every request took them all: the send queue,
		 * sized by rmbd_c_wr_budget(), is smaller.
		 */
		room = min(attrs->max_qp_wr - 1, attrs->max_cqe - 2);
		cap = room > 0 ? min_t(unsigned int, RMBD_C_MAX_REQ_WRS,
				       room / depth) : 0;
		if (iwarp && cap)
			cap--;
		/*
		 * At least two: a discard across a slab boundary; three for
		 * a registered READ (REG_MR, READ, LOCAL_INV).
		 */
		req_wrs = mr_pages ? 3 : 2;
		if (cap < req_wrs) {
			*why = "queue depth exceeds what the RDMA device supports";
			return -EINVAL;
		}
		leg->max_segs = min(RMBD_C_MAX_SEGS, cap * wr);
		if (!mr_pages)
			leg->max_segs = min(leg->max_segs, cap * rd);
		req_wrs = max(req_wrs, DIV_ROUND_UP(leg->max_segs,
						    mr_pages ? wr : rd));
		leg->req_wrs = req_wrs + (iwarp ? 1 : 0);
	}
	/* An I/O queue's send queue and CQ (rmbd_c_create_qp()) */
	budget = rmbd_c_wr_budget(leg, depth);
	if (budget + 1 > attrs->max_qp_wr || budget + 2 > attrs->max_cqe) {
		*why = "queue depth exceeds what the RDMA device supports";
		return -EINVAL;
	}

	leg->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(leg->pd)) {
		int ret = PTR_ERR(leg->pd);

		leg->pd = NULL;
		*why = "cannot allocate a protection domain";
		return ret;
	}
	leg->ibdev = ibdev;
	leg->ibport = port;
	leg->soft_post = ibdev->ops.driver_id == RDMA_DRIVER_RXE ||
			 ibdev->ops.driver_id == RDMA_DRIVER_SIW;
	return 0;
}

static noinline int rmbd_c_admin_alloc(struct rmbd_c_leg *leg)
{
	leg->send_buf = kzalloc(RMBD_MSG_SIZE, GFP_KERNEL);
	leg->recv_buf = kzalloc(RMBD_MSG_SIZE, GFP_KERNEL);
	if (!leg->send_buf || !leg->recv_buf)
		goto out_free;
	leg->send_dma = ib_dma_map_single(leg->ibdev, leg->send_buf,
					  RMBD_MSG_SIZE, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(leg->ibdev, leg->send_dma))
		goto out_free;
	leg->recv_dma = ib_dma_map_single(leg->ibdev, leg->recv_buf,
					  RMBD_MSG_SIZE, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(leg->ibdev, leg->recv_dma)) {
		ib_dma_unmap_single(leg->ibdev, leg->send_dma, RMBD_MSG_SIZE,
				    DMA_TO_DEVICE);
		goto out_free;
	}
	leg->send_cqe.done = rmbd_c_admin_send_done;
	leg->recv_cqe.done = rmbd_c_admin_recv_done;
	return 0;

out_free:
	kfree(leg->send_buf);
	kfree(leg->recv_buf);
	leg->send_buf = NULL;
	leg->recv_buf = NULL;
	return -ENOMEM;
}
ALLOW_ERROR_INJECTION(rmbd_c_admin_alloc, ERRNO);

static void rmbd_c_admin_free(struct rmbd_c_leg *leg)
{
	if (!leg->send_buf)
		return;
	ib_dma_unmap_single(leg->ibdev, leg->send_dma, RMBD_MSG_SIZE,
			    DMA_TO_DEVICE);
	ib_dma_unmap_single(leg->ibdev, leg->recv_dma, RMBD_MSG_SIZE,
			    DMA_FROM_DEVICE);
	kfree(leg->send_buf);
	kfree(leg->recv_buf);
	leg->send_buf = NULL;
	leg->recv_buf = NULL;
}

/* Give a failure @msg as its reason unless a more precise one was set. */
static void rmbd_c_why(const char **why, const char *msg)
{
	if (!*why || !**why)
		*why = msg;
}


/*
 * Why an attempt to set the session up must end now: its deadline passed,
 * rmbd_c_leg_abort() or a fatal signal (dev connect's process) ended it.
 * 0 outside such an attempt, or while it may go on.
 */
static int rmbd_c_leg_cut(struct rmbd_c_leg *leg, const char **why)
{
	unsigned long deadline = READ_ONCE(leg->deadline);

	if (!deadline)
		return 0;
	/* Sticky: an abort may come before the attempt took its snapshot. */
	if (atomic_read(&leg->abort_gen) != leg->start_gen ||
	    test_bit(RMBD_C_DEV_DEAD, &leg->dev->flags) ||
	    READ_ONCE(leg->stopping)) {
		*why = "aborted: the device or its RDMA device is going away";
		return -ECANCELED;
	}
	if (fatal_signal_pending(current)) {
		*why = "interrupted";
		return -EINTR;
	}
	if (time_after_eq(jiffies, deadline)) {
		*why = "the target took longer than connect_timeout to set the session up";
		return -ETIMEDOUT;
	}
	return 0;
}

/*
 * Wait for @done of an admin exchange: RMBD_C_ADMIN_TIMEOUT at most, and
 * within an attempt to set the session up no later than its deadline,
 * killable, and no longer than until rmbd_c_leg_abort().
 */
static int rmbd_c_admin_wait(struct rmbd_c_leg *leg, struct completion *done,
			     const char **why)
{
	unsigned long deadline = READ_ONCE(leg->deadline);
	long left = RMBD_C_ADMIN_TIMEOUT, ret;

	if (deadline)
		left = clamp_t(long, (long)(deadline - jiffies), 0, left);
	ret = left ? wait_for_completion_killable_timeout(done, left) : 0;
	if (ret > 0 && !rmbd_c_leg_cut(leg, why))
		return 0;
	ret = rmbd_c_leg_cut(leg, why);
	if (ret)
		return ret;
	*why = "target did not answer";
	return -ETIMEDOUT;
}

/* Sleep @ms within an attempt to set the session up, as it allows. */
static int rmbd_c_leg_pause(struct rmbd_c_leg *leg, unsigned int ms,
			    const char **why)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (time_before(jiffies, end)) {
		if (rmbd_c_leg_cut(leg, why))
			break;
		schedule_timeout_killable(min_t(long, end - jiffies, HZ / 10));
	}
	return rmbd_c_leg_cut(leg, why);
}

/*
 * Send the request in send_buf and wait for its reply in recv_buf.  The
 * admin queue carries one request at a time.  A keepalive that cannot be
 * sent parks the I/O: it is posted like I/O (rmbd_c_post_begin()).
 */
static int rmbd_c_admin_xfer(struct rmbd_c_leg *leg, u16 opcode, size_t len,
			     const char **why)
{
	struct rmbd_msg_hdr *hdr = leg->send_buf;
	struct ib_qp *qp = leg->queues[0].cm_id->qp;
	struct ib_sge ssge = {
		.addr = leg->send_dma, .length = len,
		.lkey = leg->pd->local_dma_lkey,
	};
	struct ib_sge rsge = {
		.addr = leg->recv_dma, .length = RMBD_MSG_SIZE,
		.lkey = leg->pd->local_dma_lkey,
	};
	struct ib_send_wr swr = {
		.wr_cqe = &leg->send_cqe, .sg_list = &ssge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};
	struct ib_recv_wr rwr = {
		.wr_cqe = &leg->recv_cqe, .sg_list = &rsge, .num_sge = 1,
	};
	int ret;

	hdr->opcode = cpu_to_le16(opcode);
	hdr->status = 0;
	hdr->tag = cpu_to_le32(++leg->tag);
	reinit_completion(&leg->send_done);
	reinit_completion(&leg->recv_done);
	ib_dma_sync_single_for_device(leg->ibdev, leg->recv_dma, RMBD_MSG_SIZE,
				      DMA_FROM_DEVICE);
	ib_dma_sync_single_for_device(leg->ibdev, leg->send_dma, RMBD_MSG_SIZE,
				      DMA_TO_DEVICE);
	ret = ib_post_recv(qp, &rwr, NULL);
	if (ret) {
		*why = "cannot post a receive on the admin queue";
		return ret;
	}
	rmbd_c_post_begin(leg);
	ret = ib_post_send(qp, &swr, NULL);
	rmbd_c_post_end(leg);
	if (ret) {
		*why = "cannot post a request on the admin queue";
		return ret;
	}
	ret = rmbd_c_admin_wait(leg, &leg->send_done, why);
	if (!ret)
		ret = rmbd_c_admin_wait(leg, &leg->recv_done, why);
	if (ret)
		return ret;
	if (leg->send_status != IB_WC_SUCCESS ||
	    leg->recv_status != IB_WC_SUCCESS) {
		*why = "admin queue failed";
		return -EIO;
	}
	ib_dma_sync_single_for_cpu(leg->ibdev, leg->recv_dma, RMBD_MSG_SIZE,
				   DMA_FROM_DEVICE);
	ret = rmbd_check_reply(leg->recv_buf, leg->recv_len, opcode, leg->tag);
	if (ret == -EPROTO)
		*why = "target sent a malformed reply";
	return ret;
}

/* The holder a refusal of @len bytes names, if it is well formed. */
static void rmbd_c_note_holder(struct rmbd_c_leg *leg, const char *holder,
			       size_t len)
{
	if (leg->recv_len >= len && memchr(holder, 0, RMBD_HOST_LEN) &&
	    rmbd_valid_host(holder))
		strscpy(leg->holder, holder, sizeof(leg->holder));
}

/*
 * After an OPEN reply that asked for it: answer the target's challenge
 * @nt, and check its answer to ours, @nc, in constant time.  The target
 * ends the session on a wrong answer; a target that cannot answer ours
 * does not have the secret.
 */
static int rmbd_c_auth(struct rmbd_c_leg *leg, const u8 *nt, const u8 *nc,
		       const char **why)
{
	struct rmbd_auth_msg *req = leg->send_buf;
	struct rmbd_auth_msg *rsp = leg->recv_buf;
	u8 want[RMBD_RESPONSE_LEN];
	int ret;

	memset(req, 0, RMBD_MSG_SIZE);
	ret = rmbd_auth_answer(leg->auth_tfm, false, leg->session_id, nt, nc,
			       leg->dev->host, leg->export_name, req->response);
	if (ret) {
		*why = "cannot compute HMAC-SHA-256 (crypto API)";
		return -EIO;
	}
	ret = rmbd_c_admin_xfer(leg, RMBD_OP_AUTH, sizeof(*req), why);
	if (ret == -EACCES) {
		*why = "the target refused this host's secret";
		return ret;
	}
	if (ret == -EBUSY) {
		rmbd_c_note_holder(leg, rsp->holder, sizeof(*rsp));
		*why = "export in use by another host";
		return ret;
	}
	if (ret == -EAGAIN) {
		*why = "the export's last holder is still leaving: try again";
		return ret;
	}
	if (ret) {
		/* Not the target's refusal: never "no such export". */
		if (!*why || !**why)
			*why = "authentication failed on the target";
		return ret == -ENOENT ? -EIO : ret;
	}
	ret = rmbd_auth_answer(leg->auth_tfm, true, leg->session_id, nc, nt,
			       leg->dev->host, leg->export_name, want);
	if (!ret && crypto_memneq(want, rsp->response, sizeof(want))) {
		*why = "the target could not prove it has this host's secret";
		ret = -EACCES;
	} else if (ret) {
		*why = "cannot compute HMAC-SHA-256 (crypto API)";
		ret = -EIO;
	}
	memzero_explicit(want, sizeof(want));
	return ret;
}

/*
 * A refusal that ends what the device had on the target: the export is
 * gone or another one, or no longer this host's to use.  It is final
 * (@leg->refused: the device fails at once) unless the device
 * authenticates and the target has not proved it has the secret yet
 * (@doubt): an impostor could send it.  Then it is one failed attempt.
 */
static int rmbd_c_final(struct rmbd_c_leg *leg, int ret, bool doubt)
{
	if (doubt)
		return -ECONNREFUSED;
	leg->refused = true;
	return ret;
}

static int rmbd_c_open(struct rmbd_c_leg *leg, const char **why)
{
	struct rmbd_open_req *req = leg->send_buf;
	struct rmbd_open_rsp *rsp = leg->recv_buf;
	u8 nc[RMBD_CHALLENGE_LEN], nt[RMBD_CHALLENGE_LEN];
	u64 export_id, size, slab_size;
	/*
	 * A device that authenticates takes no refusal from a target that
	 * has not proved itself for the end of its data when it reconnects:
	 * an impostor could send one.  It tries again until the loss timeout.
	 */
	bool doubt = leg->slabs && leg->auth_tfm;
	u32 timeout_ms, flags, nr_slabs;
	int ret, tries;

	memset(req, 0, RMBD_MSG_SIZE);
	strscpy(req->name, leg->export_name, sizeof(req->name));
	strscpy(req->host, leg->dev->host, sizeof(req->host));
	req->flags = cpu_to_le32((leg->shared ? RMBD_OPEN_SHARED : 0) |
				 (leg->read_only ? RMBD_OPEN_RDONLY : 0));
	get_random_bytes(nc, sizeof(nc));
	memcpy(req->challenge, nc, sizeof(req->challenge));
	leg->holder[0] = '\0';
	/* Another host's session on its way out: it goes within a second. */
	for (tries = 0; ; tries++) {
		ret = rmbd_c_admin_xfer(leg, RMBD_OP_OPEN, sizeof(*req), why);
		if (ret != -EAGAIN || tries == RMBD_C_OPEN_TRIES)
			break;
		ret = rmbd_c_leg_pause(leg, RMBD_C_OPEN_RETRY_MS, why);
		if (ret)
			return ret;
	}
	if (ret == -EAGAIN)
		*why = "the export's last holder is still leaving: try again";
	if (ret == -ENOENT)
		*why = "target has no export with this name";
	if (ret == -EACCES)
		*why = "the target does not allow this host to use the export";
	if (ret == -EBUSY) {
		rmbd_c_note_holder(leg, rsp->holder, sizeof(*rsp));
		*why = "export in use by another host";
	}
	if (ret == -EPERM)
		*why = "the export is not shared: connect without shared";
	if (ret == -EUSERS)
		*why = "the export has as many sessions as it takes";
	if (ret == -EOPNOTSUPP)
		*why = "the target's RDMA device cannot register this export's slabs (a smaller slab size may do)";
	/*
	 * A device without identity that reconnects may find its own old
	 * session holding the export (the target cannot tell it is ours):
	 * that one goes at its timeout.
	 */
	if (ret == -EBUSY && leg->slabs && !leg->dev->host[0])
		return -ECONNREFUSED;
	if (ret == -ENOENT || ret == -EACCES || ret == -EBUSY || ret == -EPERM)
		return rmbd_c_final(leg, ret, doubt);
	if (ret)
		return ret;
	/* The AUTH exchange reuses the receive buffer. */
	export_id = le64_to_cpu(rsp->export_id);
	size = le64_to_cpu(rsp->size);
	slab_size = le64_to_cpu(rsp->slab_size);
	nr_slabs = le32_to_cpu(rsp->nr_slabs);
	timeout_ms = le32_to_cpu(rsp->session_timeout_ms);
	flags = le32_to_cpu(rsp->flags);
	memcpy(nt, rsp->challenge, sizeof(nt));
	memcpy(leg->join_key, rsp->join_key, sizeof(leg->join_key));

	if (!(flags & RMBD_OPEN_AUTH) && leg->auth_tfm) {
		*why = "the target asks for no secret, so it cannot prove it has it";
		return rmbd_c_final(leg, -EACCES, doubt);
	}
	if ((flags & RMBD_OPEN_AUTH) && !leg->auth_tfm) {
		*why = "the target wants this host's secret: connect with one";
		return rmbd_c_final(leg, -EACCES, false);
	}
	if (flags & RMBD_OPEN_AUTH) {
		ret = rmbd_c_auth(leg, nt, nc, why);
		if (ret == -EACCES || ret == -EBUSY)
			return rmbd_c_final(leg, ret, doubt);
		if (ret)
			return ret;
	}

	leg->map_range = flags & RMBD_OPEN_MAP_RANGE;
	if (leg->slabs) {
		/* Reconnecting: the export must be the one we had. */
		if (!leg->read_only && (flags & RMBD_OPEN_RDONLY)) {
			*why = "the target made the session read-only";
			return rmbd_c_final(leg, -ESTALE, false);
		}
		if (export_id != leg->export_id) {
			*why = "the export was created again on the target: the data it held is gone";
			return rmbd_c_final(leg, -ESTALE, false);
		}
		if (size != leg->size || slab_size != leg->slab_size ||
		    nr_slabs != leg->nr_slabs) {
			*why = "the export changed its size or slab size";
			return rmbd_c_final(leg, -ESTALE, false);
		}
	} else {
		leg->export_id = export_id;
		leg->blank = flags & RMBD_OPEN_BLANK;
		leg->read_only = leg->read_only || (flags & RMBD_OPEN_RDONLY);
		/* A leg replaced on a writable disk must take writes. */
		if (leg->dev->disk && leg->read_only && !leg->dev->read_only) {
			*why = "the export is read-only, and the device is not";
			return rmbd_c_final(leg, -EROFS, false);
		}
		/* As asked, or read-only as an export of it is */
		leg->dev->read_only = leg->dev->read_only || leg->read_only;
		leg->size = size;
		leg->slab_size = slab_size;
		leg->nr_slabs = nr_slabs;
	}
	if (rmbd_check_geometry(leg->size, leg->slab_size, leg->nr_slabs)) {
		*why = "target announced an invalid export geometry";
		return -EPROTO;
	}
	leg->slab_shift = ilog2(leg->slab_size);
	/*
	 * Three keepalives per timeout: one lost message is not the end.
	 * Whatever the target announced, no more than ten a second, and at
	 * least one a minute.
	 */
	leg->ka_interval = timeout_ms ?
		clamp(msecs_to_jiffies(timeout_ms / 3),
		      msecs_to_jiffies(RMBD_C_KA_MIN_MS),
		      msecs_to_jiffies(RMBD_C_KA_MAX_MS)) : 0;
	if (!leg->slabs)
		leg->slabs = kvcalloc(leg->nr_slabs, sizeof(*leg->slabs),
				      GFP_KERNEL | __GFP_NOWARN);
	if (!leg->slabs) {
		*why = "cannot allocate the table of the export's slabs";
		return -ENOMEM;
	}
	return 0;
}

/*
 * For a target without RMBD_OPEN_MAP_RANGE only: not one for error
 * injection, since the target here never leads to it (29-lying-target's
 * --no-range peer does).
 */
static int rmbd_c_map(struct rmbd_c_leg *leg, u32 idx, const char **why)
{
	struct rmbd_map_req *req = leg->send_buf;
	struct rmbd_map_rsp *rsp = leg->recv_buf;
	struct rmbd_c_slab *slab = &leg->slabs[idx];
	u64 addr, len;
	int ret;

	memset(req, 0, RMBD_MSG_SIZE);
	req->slab = cpu_to_le32(idx);
	ret = rmbd_c_admin_xfer(leg, RMBD_OP_MAP, sizeof(*req), why);
	if (ret) {
		rmbd_c_why(why, "target could not map a slab");
		return ret;
	}
	addr = le64_to_cpu(rsp->addr);
	len = le64_to_cpu(rsp->len);
	if (le32_to_cpu(rsp->slab) != idx ||
	    len != rmbd_slab_len(leg->size, leg->slab_size, idx) ||
	    addr + len < addr) {
		*why = "target sent an invalid slab mapping";
		return -EPROTO;
	}
	slab->addr = addr;
	slab->len = len;
	slab->rkey = le32_to_cpu(rsp->rkey);
	return 0;
}

/*
 * Map the slabs from @first on, as many as one RMBD_OP_MAP_RANGE gets
 * (*@done of them: at least one), and check what the target says of them
 * as rmbd_c_map() does.
 */
static noinline int rmbd_c_map_range(struct rmbd_c_leg *leg, u32 first,
				     u32 *done, const char **why)
{
	struct rmbd_map_range_req *req = leg->send_buf;
	struct rmbd_map_range_rsp *rsp = leg->recv_buf;
	u32 count = min_t(u32, leg->nr_slabs - first, RMBD_MAP_RANGE_MAX);
	u64 addr, len, end;
	u32 i, n;
	int ret;

	memset(req, 0, RMBD_MSG_SIZE);
	req->first = cpu_to_le32(first);
	req->count = cpu_to_le32(count);
	ret = rmbd_c_admin_xfer(leg, RMBD_OP_MAP_RANGE, sizeof(*req), why);
	if (ret) {
		rmbd_c_why(why, "target could not map a slab");
		return ret;
	}
	addr = le64_to_cpu(rsp->addr);
	n = le32_to_cpu(rsp->count);
	if (le32_to_cpu(rsp->first) != first || !n || n > count ||
	    check_add_overflow(addr, (u64)(n - 1) * leg->slab_size, &end) ||
	    check_add_overflow(end, rmbd_slab_len(leg->size, leg->slab_size,
						  first + n - 1), &end)) {
		*why = "target sent an invalid slab mapping";
		return -EPROTO;
	}
	for (i = 0; i < n; i++) {
		len = rmbd_slab_len(leg->size, leg->slab_size, first + i);
		leg->slabs[first + i].addr = addr + (u64)i * leg->slab_size;
		leg->slabs[first + i].len = len;
		leg->slabs[first + i].rkey = le32_to_cpu(rsp->rkeys[i]);
	}
	*done = n;
	return 0;
}
ALLOW_ERROR_INJECTION(rmbd_c_map_range, ERRNO);

/*
 * Fast-register @mr with @access on the admin queue and wait for it.
 * -ETIMEDOUT (or the attempt ended meanwhile): the drain at session stop
 * completes the work request, so the caller keeps @mr for the session's
 * teardown to deregister.
 */
static int rmbd_c_reg_mr(struct rmbd_c_leg *leg, struct ib_mr *mr, int access)
{
	struct ib_reg_wr wr = { };
	const char *why;
	int ret;

	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_cqe = &leg->send_cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	wr.access = access;
	reinit_completion(&leg->send_done);
	ret = ib_post_send(leg->queues[0].cm_id->qp, &wr.wr, NULL);
	if (ret)
		return ret;
	/* Not waited out (aborted, too): the work request is still posted. */
	if (rmbd_c_admin_wait(leg, &leg->send_done, &why))
		return -ETIMEDOUT;
	return leg->send_status == IB_WC_SUCCESS ? 0 : -EIO;
}

/*
 * Register @zero_mr: a local-only MR whose every page is the zero page, the
 * source of the RDMA WRITEs that carry out discard and write zeroes.  One
 * work request zeroes up to zero_len bytes and the target CPU does nothing.
 * Posted on the admin queue; without fast registration there is no discard.
 */
static noinline int rmbd_c_zero_mr_setup(struct rmbd_c_leg *leg, const char **why)
{
	struct ib_device_attr *attrs = &leg->ibdev->attrs;
	struct scatterlist *sgl, *sg;
	unsigned int pages, usable, i;
	struct ib_mr *mr;
	int n, ret;

	pages = min_t(u64, leg->slab_size, RMBD_C_ZERO_MAX) >> PAGE_SHIFT;
	pages = min(pages, attrs->max_fast_reg_page_list_len);
	if (!(attrs->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) ||
	    !(attrs->page_size_cap & PAGE_SIZE))
		pages = 0;
	/*
	 * The last page is registered but no transfer reaches it: soft-RoCE
	 * (rxe of 6.1) reads past its page list when a transfer ends exactly
	 * at the end of an MR of 256 * n pages.
	 */
	usable = pages > 1 ? pages - 1 : pages;
	/* Reconnecting: the disk already advertises a discard limit. */
	if (leg->dev->disk && (usable << PAGE_SHIFT) < leg->dev->zero_limit) {
		*why = "the RDMA device now registers less memory than the device was created with";
		return -EXDEV;
	}
	if (!pages)
		return 0;

	leg->zero_dma = ib_dma_map_page(leg->ibdev, ZERO_PAGE(0), 0, PAGE_SIZE,
					DMA_TO_DEVICE);
	if (ib_dma_mapping_error(leg->ibdev, leg->zero_dma)) {
		*why = "cannot map the zero page for discards";
		return -ENOMEM;
	}
	mr = ib_alloc_mr(leg->pd, IB_MR_TYPE_MEM_REG, pages);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto out_unmap;
	}
	sgl = kmalloc_array(pages, sizeof(*sgl), GFP_KERNEL);
	if (!sgl) {
		ret = -ENOMEM;
		goto out_dereg;
	}
	sg_init_table(sgl, pages);
	for_each_sg(sgl, sg, pages, i) {
		sg_set_page(sg, ZERO_PAGE(0), PAGE_SIZE, 0);
		sg_dma_address(sg) = leg->zero_dma;
		sg_dma_len(sg) = PAGE_SIZE;
	}
	n = ib_map_mr_sg(mr, sgl, pages, NULL, PAGE_SIZE);
	kfree(sgl);
	if (n != pages) {
		ret = n < 0 ? n : -EINVAL;
		goto out_dereg;
	}

	/* No access rights: only this PD's own work requests read it. */
	ret = rmbd_c_reg_mr(leg, mr, 0);
	if (ret == -ETIMEDOUT) {
		/* The drain at session stop completes it; keep the MR. */
		leg->zero_mr = mr;
		*why = "registering the zero region timed out";
		return ret;
	}
	if (ret)
		goto out_dereg;
	leg->zero_mr = mr;
	leg->zero_len = usable << PAGE_SHIFT;
	return 0;

out_dereg:
	ib_dereg_mr(mr);
out_unmap:
	ib_dma_unmap_page(leg->ibdev, leg->zero_dma, PAGE_SIZE, DMA_TO_DEVICE);
	*why = "cannot register the zero region for discards";
	return ret;
}
ALLOW_ERROR_INJECTION(rmbd_c_zero_mr_setup, ERRNO);

static void rmbd_c_zero_mr_free(struct rmbd_c_leg *leg)
{
	if (!leg->zero_mr)
		return;
	ib_dereg_mr(leg->zero_mr);
	ib_dma_unmap_page(leg->ibdev, leg->zero_dma, PAGE_SIZE, DMA_TO_DEVICE);
	leg->zero_mr = NULL;
	leg->zero_len = 0;
}

static void rmbd_c_flush_mr_free(struct rmbd_c_leg *leg)
{
	if (leg->flush_mr) {
		ib_dereg_mr(leg->flush_mr);
		leg->flush_mr = NULL;
	}
	if (leg->flush_dma) {
		ib_dma_unmap_page(leg->ibdev, leg->flush_dma, PAGE_SIZE,
				  DMA_FROM_DEVICE);
		leg->flush_dma = 0;
	}
}

/*
 * iWARP: register @flush_mr, the sink of the one-byte RDMA READ that ends
 * every write (rmbd_c_init_flush()): a page of the device's own that
 * nothing reads.  Not a zero-length READ, which iWARP allows: siw answers
 * one that follows a READ response on the same queue pair with that
 * response's length, and the requester then drops the connection.  As
 * every READ sink on iWARP, it is registered with REMOTE_WRITE; a target
 * that writes there at will changes nothing but that page.
 */
static noinline int rmbd_c_flush_mr_setup(struct rmbd_c_leg *leg,
					  const char **why)
{
	struct scatterlist sg;
	struct ib_mr *mr;
	u64 dma;
	int n, ret;

	if (!leg->signal_each)
		return 0;
	/* Once per leg, freed with the device: a reconnect allocates none. */
	if (!leg->flush_page)
		leg->flush_page = alloc_page(GFP_KERNEL);
	if (!leg->flush_page)
		return -ENOMEM;
	dma = ib_dma_map_page(leg->ibdev, leg->flush_page, 0, PAGE_SIZE,
			      DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(leg->ibdev, dma))
		return -ENOMEM;
	leg->flush_dma = dma;
	mr = ib_alloc_mr(leg->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto out_free;
	}
	sg_init_table(&sg, 1);
	sg_set_page(&sg, leg->flush_page, PAGE_SIZE, 0);
	sg_dma_address(&sg) = leg->flush_dma;
	sg_dma_len(&sg) = PAGE_SIZE;
	n = ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE);
	if (n != 1) {
		ib_dereg_mr(mr);
		ret = n < 0 ? n : -EINVAL;
		goto out_free;
	}
	/* Kept on a timeout too: the session's teardown deregisters it. */
	leg->flush_mr = mr;
	ret = rmbd_c_reg_mr(leg, mr, IB_ACCESS_LOCAL_WRITE |
			   IB_ACCESS_REMOTE_WRITE);
	if (ret == -ETIMEDOUT) {
		*why = "registering the sink of the READ that ends a write timed out";
		return ret;
	}
	if (ret)
		goto out_free;
	leg->flush_sge.addr = mr->iova;
	leg->flush_sge.length = 1;
	leg->flush_sge.lkey = mr->lkey;
	return 0;

out_free:
	rmbd_c_flush_mr_free(leg);
	return ret;
}
ALLOW_ERROR_INJECTION(rmbd_c_flush_mr_setup, ERRNO);

/*
 * The queues outlive sessions: blk-mq's hardware contexts point at them
 * and poll them, so a reconnect reuses them.
 */
static int rmbd_c_queues_alloc(struct rmbd_c_leg *leg)
{
	struct rmbd_c_dev *dev = leg->dev;
	struct rmbd_c_queue *queues;
	unsigned int i;

	/* One per blk-mq hardware queue of the device, and the admin queue */
	leg->nr_queues = 1 + dev->nr_io_queues + dev->nr_poll_queues;
	queues = kcalloc(leg->nr_queues, sizeof(*queues), GFP_KERNEL);
	if (!queues)
		return -ENOMEM;
	for (i = 0; i < leg->nr_queues; i++) {
		struct rmbd_c_queue *q = &queues[i];

		q->leg = leg;
		q->idx = i;
		q->poll = i > dev->nr_io_queues;
		q->depth = i ? dev->queue_depth : RMBD_C_ADMIN_DEPTH;
		init_completion(&q->cm_done);
		spin_lock_init(&q->lock);
		spin_lock_init(&q->poll_lock);
		INIT_LIST_HEAD(&q->batch);
		INIT_LIST_HEAD(&q->posted);
		INIT_WORK(&q->post_work, rmbd_c_post_work);
		INIT_LIST_HEAD(&q->read_mrs);
	}
	/* Set up before rmbd_c_leg_abort() may see them */
	smp_store_release(&leg->queues, queues);
	return 0;
}

/*
 * Connect queue @idx of @leg: the first queue finds the leg's RDMA device,
 * the others must reach the target over it.  Before the disk exists the
 * first I/O queue may get a smaller depth than asked (the RDMA device's
 * send queues hold no more); the device and the other queues then take
 * that depth.
 */
static int rmbd_c_leg_queue_connect(struct rmbd_c_leg *leg, unsigned int idx,
				    const char **why)
{
	struct rmbd_c_queue *q = &leg->queues[idx];
	struct rmbd_c_dev *dev = leg->dev;
	bool shrink = idx == 1 && !dev->disk;
	unsigned int i;
	int ret;

	ret = rmbd_c_queue_resolve(q, why);
	if (ret)
		return ret;
	if (!leg->ibdev) {
		ret = rmbd_c_first_device(leg, q->cm_id->device,
					  q->cm_id->port_num, why);
		if (ret)
			return ret;
	} else if (leg->ibdev != q->cm_id->device) {
		*why = "queues resolved to different RDMA devices";
		return -EXDEV;
	}
	ret = rmbd_c_queue_establish(q, shrink ? RMBD_C_MIN_DEPTH : q->depth,
				     why);
	if (ret < 0)
		return ret;
	if (shrink && ret != dev->queue_depth) {
		pr_info("rmbd%d: queue depth %d, not %u: the RDMA device's send queues hold no more\n",
			dev->index, ret, dev->queue_depth);
		dev->queue_depth = ret;
		for (i = 2; i < leg->nr_queues; i++)
			leg->queues[i].depth = ret;
	}
	return 0;
}

/* rmbd_c_leg_start(), within its deadline */
static int __rmbd_c_leg_start(struct rmbd_c_leg *leg, const char **why)
{
	unsigned int i;
	u32 n;
	int ret;

	leg->refused = false;
	if (!leg->queues) {
		ret = rmbd_c_queues_alloc(leg);
		if (ret) {
			*why = "cannot allocate the device's queues";
			return ret;
		}
	}
	ret = rmbd_c_leg_queue_connect(leg, 0, why);
	if (ret)
		return ret;
	ret = rmbd_c_admin_alloc(leg);
	if (ret) {
		*why = "cannot allocate the admin queue's buffers";
		return ret;
	}
	ret = rmbd_c_open(leg, why);
	if (ret) {
		rmbd_c_why(why, "cannot open the export on the target");
		return ret;
	}
	for (i = 0; i < leg->nr_slabs; i += n) {
		n = 1;
		if (leg->map_range)
			ret = rmbd_c_map_range(leg, i, &n, why);
		else
			ret = rmbd_c_map(leg, i, why);
		if (ret) {
			rmbd_c_why(why, "cannot map a slab of the export");
			return ret;
		}
	}
	ret = rmbd_c_zero_mr_setup(leg, why);
	if (ret) {
		rmbd_c_why(why, "cannot register the zero region for discards");
		return ret;
	}
	ret = rmbd_c_flush_mr_setup(leg, why);
	if (ret) {
		rmbd_c_why(why, "cannot register the sink of the READ that ends a write");
		return ret;
	}
	for (i = 1; i < leg->nr_queues; i++) {
		ret = rmbd_c_leg_queue_connect(leg, i, why);
		if (ret)
			return ret;
	}
	WRITE_ONCE(leg->up_since, jiffies);
	set_bit(RMBD_C_LEG_UP, &leg->flags);
	return 0;
}

/* How long one attempt to set a leg's session up may take */
static unsigned int connect_timeout = 60;
module_param(connect_timeout, uint, 0644);
MODULE_PARM_DESC(connect_timeout,
		 "seconds one attempt to set up a leg's session (connect, open, authenticate, map the export) may take; default 60");

/**
 * rmbd_c_leg_start() - connect every queue and map the export
 * @leg: leg with address and export name set, of a device with its
 *	queue counts set
 * @why: a message for the administrator on failure
 *
 * Within connect_timeout seconds, killable, and until rmbd_c_leg_abort().
 * On failure the caller runs rmbd_c_leg_stop().
 */
int rmbd_c_leg_start(struct rmbd_c_leg *leg, const char **why)
{
	const char *cut_why;
	int ret, cut;

	leg->start_gen = atomic_read(&leg->abort_gen);
	WRITE_ONCE(leg->deadline,
		   (jiffies + max(READ_ONCE(connect_timeout), 1U) * HZ) ?: 1);
	ret = __rmbd_c_leg_start(leg, why);
	/*
	 * Ended for a reason of its own: say that one, not the last wait's;
	 * an attempt that succeeded after an abort fails all the same.
	 */
	cut = rmbd_c_leg_cut(leg, &cut_why);
	if (cut && (ret || cut == -ECANCELED)) {
		*why = cut_why;
		ret = cut;
	}
	WRITE_ONCE(leg->deadline, 0);
	return ret;
}

/**
 * rmbd_c_leg_abort() - end the leg's attempt to set its session up, now
 * @leg: the leg
 *
 * For what cannot wait for it: a disconnect, the RDMA device's removal,
 * the module's unload.  The attempt fails with -ECANCELED at its next
 * wait, which this ends.  Under rmbd_c_mutex (a stopped leg's queues are
 * freed once it is marked stopping under it), without recovery_lock,
 * which the attempt holds.
 */
void rmbd_c_leg_abort(struct rmbd_c_leg *leg)
{
	/* Pairs with the release in rmbd_c_queues_alloc(). */
	struct rmbd_c_queue *queues = smp_load_acquire(&leg->queues);
	unsigned int i;

	lockdep_assert_held(&rmbd_c_mutex);
	if (leg->stopping)
		return;
	atomic_inc(&leg->abort_gen);
	/* Pairs with the waits' reads of the generation after they wake. */
	smp_mb__after_atomic();
	/* Not a keepalive's exchange, which would take it for its answer */
	if (!READ_ONCE(leg->deadline))
		return;
	/* A connection manager's wait after this one ends at once too. */
	WRITE_ONCE(leg->deadline, jiffies ?: 1);
	complete(&leg->send_done);
	complete(&leg->recv_done);
	for (i = 0; queues && i < leg->nr_queues; i++)
		rmbd_c_queue_abort(&queues[i]);
}

/* Keep the target's session alive; a failed keepalive fails the device. */
void rmbd_c_keepalive_work(struct work_struct *work)
{
	struct rmbd_c_leg *leg = container_of(to_delayed_work(work),
					      struct rmbd_c_leg, ka_work);
	unsigned int noio = memalloc_noio_save();
	const char *why = "";
	int ret;

	ret = rmbd_c_admin_xfer(leg, RMBD_OP_KEEPALIVE,
				sizeof(struct rmbd_msg_hdr), &why);
	memalloc_noio_restore(noio);
	if (ret) {
		if (!READ_ONCE(leg->stopping))
			pr_warn("rmbd%d: keepalive failed (%d) %s\n",
				leg->dev->index, ret, why);
		rmbd_c_schedule_fail(leg);
		return;
	}
	queue_delayed_work(rmbd_c_wq, &leg->ka_work, leg->ka_interval);
}

void rmbd_c_keepalive_start(struct rmbd_c_leg *leg)
{
	if (leg->ka_interval)
		queue_delayed_work(rmbd_c_wq, &leg->ka_work, leg->ka_interval);
}

/**
 * rmbd_c_queues_fail() - stop I/O on every queue
 * @leg: the leg
 *
 * Moves every QP to the error state: posted requests flush and complete
 * with an error, and new ones are refused.  Safe to call more than once.
 */
void rmbd_c_queues_fail(struct rmbd_c_leg *leg)
{
	unsigned int i;

	clear_bit(RMBD_C_LEG_UP, &leg->flags);
	if (!leg->queues)
		return;
	for (i = 0; i < leg->nr_queues; i++) {
		struct rmbd_c_queue *q = &leg->queues[i];

		if (test_and_clear_bit(RMBD_C_Q_LIVE, &q->flags))
			rdma_disconnect(q->cm_id);
	}
}

/**
 * rmbd_c_leg_halt() - stop a broken session without talking to the peer
 * @leg: the leg
 *
 * Moves every queue pair to the error state, which flushes what is posted
 * (the requests come back through ->complete), and stops the keepalive.
 * Unlike rdma_disconnect() it sends no CM message: while the port is down
 * soft-RoCE turns a send into an error of the sending queue pair, and an
 * error of the CM's own QP1 would stop every later connect.  The teardown,
 * which disconnects, waits until the port is up.
 */
void rmbd_c_leg_halt(struct rmbd_c_leg *leg)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned int i;

	clear_bit(RMBD_C_LEG_UP, &leg->flags);
	if (!leg->queues)
		return;
	for (i = 0; i < leg->nr_queues; i++) {
		struct rmbd_c_queue *q = &leg->queues[i];

		clear_bit(RMBD_C_Q_LIVE, &q->flags);
		if (test_bit(RMBD_C_Q_ALLOCATED, &q->flags))
			ib_modify_qp(q->cm_id->qp, &attr, IB_QP_STATE);
	}
	cancel_delayed_work_sync(&leg->ka_work);
}

/* Whether the port under the session's admin queue is up. */
bool rmbd_c_leg_port_active(struct rmbd_c_leg *leg)
{
	struct rdma_cm_id *cm_id = leg->queues ? leg->queues[0].cm_id : NULL;
	struct rdma_dev_addr *dev_addr;
	struct net_device *ndev;
	enum ib_port_state state;
	bool up = true;

	if (!cm_id || !cm_id->device)
		return true;
	/*
	 * A port over a netdev (RoCE, iWARP) goes down only once the netdev
	 * did, and its cached state a moment later still: a session lost
	 * because its netdev went down may come here before either says so.
	 */
	dev_addr = &cm_id->route.addr.dev_addr;
	if (dev_addr->bound_dev_if && dev_addr->net) {
		rcu_read_lock();
		ndev = dev_get_by_index_rcu(dev_addr->net,
					    dev_addr->bound_dev_if);
		if (ndev)
			up = netif_running(ndev) && netif_carrier_ok(ndev);
		rcu_read_unlock();
		if (!up)
			return false;
	}
	if (ib_get_cached_port_state(cm_id->device, cm_id->port_num, &state))
		return true;
	return state == IB_PORT_ACTIVE;
}

/**
 * rmbd_c_leg_flush() - complete what a stopped session still holds
 * @leg: the leg, with its recovery_lock held
 *
 * Drains the I/O queues that are no longer live, without a word to the
 * peer, so that the requests no work completion covered complete.  Before
 * the disk of a device that gave up goes away: that waits for them.
 */
void rmbd_c_leg_flush(struct rmbd_c_leg *leg)
{
	unsigned int i;

	if (!leg->queues)
		return;
	for (i = 1; i < leg->nr_queues; i++) {
		struct rmbd_c_queue *q = &leg->queues[i];

		if (test_bit(RMBD_C_Q_ALLOCATED, &q->flags) &&
		    !test_bit(RMBD_C_Q_LIVE, &q->flags))
			rmbd_c_queue_drain(q);
	}
}

/**
 * rmbd_c_leg_teardown() - release everything a session holds
 * @leg: the leg
 *
 * Idempotent.  Every posted work request, and every request posted, has
 * completed when it returns; the queues and the slab table stay for a
 * reconnect.
 */
void rmbd_c_leg_teardown(struct rmbd_c_leg *leg)
{
	unsigned int i;

	if (!leg->queues)
		return;
	rmbd_c_queues_fail(leg);
	/* Its admin exchange ends now that the queue pairs are in error. */
	cancel_delayed_work_sync(&leg->ka_work);
	for (i = 0; i < leg->nr_queues; i++) {
		if (test_bit(RMBD_C_Q_ALLOCATED, &leg->queues[i].flags))
			rmbd_c_queue_drain(&leg->queues[i]);
	}
	for (i = 0; i < leg->nr_queues; i++)
		rmbd_c_queue_destroy_qp(&leg->queues[i]);
	rmbd_c_flush_mr_free(leg);
	rmbd_c_zero_mr_free(leg);
	rmbd_c_admin_free(leg);
	if (leg->pd) {
		ib_dealloc_pd(leg->pd);
		leg->pd = NULL;
	}
	/* Last: while an id exists, its RDMA device cannot go away. */
	for (i = 0; i < leg->nr_queues; i++) {
		if (leg->queues[i].cm_id) {
			rdma_destroy_id(leg->queues[i].cm_id);
			leg->queues[i].cm_id = NULL;
		}
	}
	leg->ibdev = NULL;
}

/**
 * rmbd_c_leg_stop() - tear the session down and free the queues
 * @leg: the leg
 *
 * Idempotent.
 */
void rmbd_c_leg_stop(struct rmbd_c_leg *leg)
{
	/* Set once, under rmbd_c_mutex: a replace may have set it. */
	if (!leg->stopping) {
		mutex_lock(&rmbd_c_mutex);
		leg->stopping = true;
		mutex_unlock(&rmbd_c_mutex);
	}
	rmbd_c_leg_teardown(leg);
	kfree(leg->queues);
	leg->queues = NULL;
	kvfree(leg->slabs);
	leg->slabs = NULL;
}

/*
 * Tear the session down with no ->queue_rq() running: it reads the PD,
 * the zero MR and the QPs.  Quiescing nests, so this is safe whether or
 * not the recovery holds the queue quiesced, and whether or not the loss
 * timeout lets it go meanwhile.
 */
void rmbd_c_leg_teardown_quiesced(struct rmbd_c_leg *leg)
{
	struct gendisk *disk = leg->dev->disk;
	struct request_queue *q = disk ? disk->queue : NULL;

	if (q)
		blk_mq_quiesce_queue(q);
	rmbd_c_leg_teardown(leg);
	if (q)
		blk_mq_unquiesce_queue(q);
}

/*
 * Drop recovery_lock, and run err_work again if it found the lock taken
 * meanwhile (see rmbd_c_err_work()).  Not once the session is stopped
 * (under this lock, for good): nothing is left to recover, and the
 * device may be going away, having cancelled err_work for the last time.
 */
void rmbd_c_recovery_unlock(struct rmbd_c_leg *leg)
{
	bool stopped = leg->stopping;

	mutex_unlock(&leg->recovery_lock);
	/* Pairs with the barrier in rmbd_c_err_work(). */
	smp_mb();
	if (!stopped && test_bit(RMBD_C_LEG_ERR_PENDING, &leg->flags))
		queue_work(rmbd_c_wq, &leg->err_work);
}

/*
 * A fault point of the tests (fail_function makes it return nonzero): the
 * recovery of a lost leg decides RMBD_C_RECOVER_LATE_MS late, as when a
 * reconnect or a disconnect holds recovery_lock and the error work waits.
 * That widens the window between a request or a port event that finds
 * the device's data gone and the recovery's word, in which another leg
 * may come back.
 */
#define RMBD_C_RECOVER_LATE_MS	10000
static noinline int rmbd_c_recover_late(struct rmbd_c_leg *leg)
{
	int late = 0;

	/* Not a constant the compiler could fold into the caller */
	asm volatile("" : "+r" (late));
	return late;
}
ALLOW_ERROR_INJECTION(rmbd_c_recover_late, ERRNO);

/*
 * The session broke.  When another leg holds the device's data, the device
 * goes on without this one, which reconnects; else a live device with a
 * loss timeout parks its I/O and its legs reconnect; otherwise the device
 * fails.  Called with recovery_lock held.
 */
void rmbd_c_recover(struct rmbd_c_leg *leg)
{
	struct rmbd_c_dev *dev = leg->dev;
	bool reconnect = false;
	unsigned long delay;

	lockdep_assert_held(&leg->recovery_lock);
	if (rmbd_c_recover_late(leg))
		msleep(RMBD_C_RECOVER_LATE_MS);
	clear_bit(RMBD_C_LEG_UP, &leg->flags);
	/* Each lost leg of a device that may still use it reconnects. */
	if (rmbd_c_dev_leg_down(dev, leg) &&
	    !test_bit(RMBD_C_LEG_FAILED, &leg->flags))
		reconnect = !test_and_set_bit(RMBD_C_LEG_RECOVERING,
					      &leg->flags);

	/*
	 * Flush what is posted.  The queues stay, without a word to the
	 * target, until the device is disconnected (rmbd_c_leg_stop(), under
	 * recovery_lock as well) or reconnects.
	 */
	if (!leg->stopping)
		rmbd_c_leg_halt(leg);
	/* Its RDMA device is going away: let go of it now, port or not. */
	if (test_and_clear_bit(RMBD_C_LEG_IBDEV_GONE, &leg->flags) &&
	    !leg->stopping)
		rmbd_c_leg_teardown_quiesced(leg);

	/*
	 * What is in flight comes back through ->complete: on another leg,
	 * or to wait on the requeue list, as new requests do (rmbd_c_park()).
	 */
	if (reconnect) {
		/*
		 * Soon after a session that lasted (a link that came back,
		 * a target that restarted; not at once: a port that goes
		 * down says so a moment after its queue pairs fail); after
		 * one that broke sooner, at the delay, as between tries: a
		 * target that breaks every session does not get them back
		 * to back.
		 */
		delay = dev->reconnect_delay * HZ;
		if (time_after(jiffies, READ_ONCE(leg->up_since) + delay))
			delay = RMBD_C_PORT_POLL;
		queue_delayed_work(rmbd_c_wq, &leg->reconnect_work, delay);
	} else if (test_bit(RMBD_C_DEV_DEAD, &dev->flags)) {
		/*
		 * A post that failed halfway leaves requests whose work
		 * requests went out unsignaled: nothing completes them but
		 * a drain's sweep.  Else they wait for the disconnect, and
		 * their timeouts only bring us back here.
		 */
		if (!leg->stopping)
			rmbd_c_leg_flush(leg);
		rmbd_c_release_requests(dev);
	}
}

void rmbd_c_err_work(struct work_struct *work)
{
	struct rmbd_c_leg *leg = container_of(work, struct rmbd_c_leg,
					      err_work);
	unsigned int noio;

	/*
	 * A reconnect attempt (or a disconnect) may hold recovery_lock for
	 * long, e.g. while the connection manager waits for memory to send
	 * its messages: rather than wait, leave a note that its holder acts
	 * on when it drops the lock.  Seeing the device live then, this
	 * recovers from the error; otherwise the holder dealt with it.
	 */
	set_bit(RMBD_C_LEG_ERR_PENDING, &leg->flags);
	/* Pairs with the barrier in rmbd_c_recovery_unlock(). */
	smp_mb__after_atomic();
	if (!mutex_trylock(&leg->recovery_lock))
		return;
	clear_bit(RMBD_C_LEG_ERR_PENDING, &leg->flags);
	/* Requests (swap-out among them) wait for this: no I/O to reclaim. */
	noio = memalloc_noio_save();
	rmbd_c_recover(leg);
	memalloc_noio_restore(noio);
	rmbd_c_recovery_unlock(leg);
}

/*
 * The leg's session is back.  Returns whether the device came back with
 * it (its data was on no other leg that is up); false also when the
 * device gave up meanwhile, with *@gone set.
 */
static bool rmbd_c_leg_back(struct rmbd_c_leg *leg, bool *gone)
{
	struct rmbd_c_dev *dev = leg->dev;
	bool live;

	mutex_lock(&rmbd_c_mutex);
	live = rmbd_c_dev_leg_up(dev, leg, gone);
	if (!*gone) {
		leg->nr_reconnects++;
		leg->down_since = 0;
		clear_bit(RMBD_C_LEG_RECOVERING, &leg->flags);
	}
	mutex_unlock(&rmbd_c_mutex);
	return live;
}

/*
 * The leg's target refused it for good: the leg fails, and so does the
 * device when no leg that may come back holds its data.
 */
static void rmbd_c_leg_refused(struct rmbd_c_leg *leg, int ret,
			       const char *why)
{
	struct rmbd_c_dev *dev = leg->dev;

	if (ret == -EBUSY && leg->holder[0])
		pr_err("rmbd%d: leg %u: export in use by host %s\n",
		       dev->index, leg->index, leg->holder);
	else
		pr_err("rmbd%d: leg %u: %s\n", dev->index, leg->index, why);
	mutex_lock(&rmbd_c_mutex);
	set_bit(RMBD_C_LEG_FAILED, &leg->flags);
	clear_bit(RMBD_C_LEG_RECOVERING, &leg->flags);
	mutex_unlock(&rmbd_c_mutex);
	rmbd_c_dev_leg_refused(dev, leg);
}

void rmbd_c_reconnect_work(struct work_struct *work)
{
	struct rmbd_c_leg *leg = container_of(to_delayed_work(work),
					      struct rmbd_c_leg,
					      reconnect_work);
	struct rmbd_c_dev *dev = leg->dev;
	unsigned int noio = memalloc_noio_save();
	const char *why = "";
	bool live = false, gone = true;
	int ret;

	mutex_lock(&leg->recovery_lock);
	/* The device gave up, or the leg was replaced. */
	if (test_bit(RMBD_C_DEV_DEAD, &dev->flags) || leg->stopping)
		goto out;
	/* The old session says goodbye first, once its port is back. */
	if (leg->ibdev && !rmbd_c_leg_port_active(leg)) {
		/* Once a loss: a mirror's leg may wait for days. */
		if (!test_and_set_bit(RMBD_C_LEG_PORT_WAIT, &leg->flags)) {
			pr_info("rmbd%d: waiting for port %u of %s to come back\n",
				dev->index, leg->queues[0].cm_id->port_num,
				dev_name(&leg->ibdev->dev));
			leg->port_wait_since = jiffies;
		}
		/*
		 * A link that flapped is back soon: look often for a while,
		 * then at the reconnect delay.
		 */
		queue_delayed_work(rmbd_c_wq, &leg->reconnect_work,
				   time_before(jiffies, leg->port_wait_since +
					       RMBD_C_PORT_POLL_FOR) ?
				   RMBD_C_PORT_POLL : dev->reconnect_delay * HZ);
		goto out;
	}
	clear_bit(RMBD_C_LEG_PORT_WAIT, &leg->flags);
	rmbd_c_leg_teardown_quiesced(leg);
	rmbd_c_notify(dev, RMBD_DEV_EVENT_RECONNECTING);
	ret = rmbd_c_leg_start(leg, &why);
	if (!ret)
		live = rmbd_c_leg_back(leg, &gone);
	if (ret && leg->refused) {
		/*
		 * The export is another one, or gone, or no longer ours
		 * (rmbd_c_final()): its data is lost to us, and waiting for
		 * the loss timeout cannot help.
		 */
		rmbd_c_leg_teardown_quiesced(leg);
		rmbd_c_leg_refused(leg, ret, why);
		goto out;
	}
	if (ret || gone) {
		rmbd_c_leg_teardown_quiesced(leg);
		if (!test_bit(RMBD_C_DEV_DEAD, &dev->flags)) {
			pr_info_ratelimited("rmbd%d: reconnect failed (%d) %s; next try in %u s\n",
					    dev->index, ret, why,
					    dev->reconnect_delay);
			queue_delayed_work(rmbd_c_wq, &leg->reconnect_work,
					   dev->reconnect_delay * HZ);
		}
		goto out;
	}
	rmbd_c_keepalive_start(leg);
	/* What a leg missed is copied to it, once one in sync is up. */
	rmbd_c_resync_start(dev);
	if (!live) {
		pr_info("rmbd%d: leg %u back on %pISpc%s\n", dev->index,
			leg->index, &leg->addr,
			test_bit(RMBD_C_LEG_IN_SYNC, &leg->flags) ? "" :
			"; it missed writes, and takes none but new ones");
		rmbd_c_notify(dev, RMBD_DEV_EVENT_LEG_BACK);
		goto out;
	}
	/* The device released its parked requests, and stopped the timer. */
	pr_info("rmbd%d: reconnected to %pISpc after %u ms\n", dev->index,
		&leg->addr, jiffies_to_msecs(jiffies - dev->loss_start));
	rmbd_c_notify(dev, RMBD_DEV_EVENT_LIVE);
out:
	rmbd_c_recovery_unlock(leg);
	memalloc_noio_restore(noio);
}
