// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd target: client sessions, their queues and the admin protocol.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <rdma/ib_cm.h>
#include <crypto/algapi.h>
#include "auth.h"
#include "target.h"

#define RMBD_T_WR_TIMEOUT	(10 * HZ)

static void rmbd_t_qp_event(struct ib_event *ev, void *ctx)
{
	struct rmbd_t_queue *q = ctx;

	pr_debug("QP event %s (%d)\n", ib_event_msg(ev->event), ev->event);
	/*
	 * A message arrived before the CM's RTU (lost, or overtaken on a
	 * real fabric): the connection is up, tell the CM, which would else
	 * time the connection out and end the session.
	 */
	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(q->cm_id, IB_EVENT_COMM_EST);
}

static void rmbd_t_queue_release(struct rmbd_t_session *sess)
{
	/* Only the first caller queues the work: it never runs twice. */
	if (!test_and_set_bit(RMBD_T_SESS_RELEASE_QUEUED, &sess->flags))
		queue_work(rmbd_t_wq, &sess->release_work);
}

/*
 * Release @sess from rmbd_t_wq.  Until its admin queue is accepted the
 * session belongs to rmbd_t_session_create(), which frees it itself if
 * the accept fails: a release asked for before (receives flushed by a
 * queue pair in error) is only noted, and queued once it is accepted.
 */
void rmbd_t_session_schedule_release(struct rmbd_t_session *sess)
{
	/* Fully ordered: pairs with the barrier after ACCEPTED is set. */
	if (test_and_set_bit(RMBD_T_SESS_RELEASING, &sess->flags))
		return;
	if (test_bit(RMBD_T_SESS_ACCEPTED, &sess->flags))
		rmbd_t_queue_release(sess);
}

static void rmbd_t_wr_error(struct rmbd_t_session *sess, struct ib_wc *wc,
			    const char *op)
{
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		pr_info("session %llx: %s failed: %s (%d)\n", sess->id, op,
			ib_wc_status_msg(wc->status), wc->status);
	rmbd_t_session_schedule_release(sess);
}

static void rmbd_t_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmbd_t_session *sess =
		container_of(wc->wr_cqe, struct rmbd_t_session, send_cqe);

	sess->wr_status = wc->status;
	if (unlikely(wc->status != IB_WC_SUCCESS))
		rmbd_t_wr_error(sess, wc, "SEND");
	complete(&sess->send_done);
}

static void rmbd_t_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmbd_t_session *sess =
		container_of(wc->wr_cqe, struct rmbd_t_session, reg_cqe);

	sess->wr_status = wc->status;
	if (unlikely(wc->status != IB_WC_SUCCESS))
		rmbd_t_wr_error(sess, wc, "REG_MR");
	complete(&sess->reg_done);
}

static void rmbd_t_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rmbd_t_recv *r = container_of(wc->wr_cqe, struct rmbd_t_recv,
					     cqe);
	struct rmbd_t_session *sess = r->sess;

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		rmbd_t_wr_error(sess, wc, "RECV");
		return;
	}
	r->len = wc->byte_len;
	WRITE_ONCE(sess->last_heard, jiffies);
	spin_lock_bh(&sess->recv_lock);
	list_add_tail(&r->entry, &sess->recv_pending);
	spin_unlock_bh(&sess->recv_lock);
	queue_work(rmbd_t_wq, &sess->msg_work);
}

static int rmbd_t_post_recv(struct rmbd_t_session *sess, struct rmbd_t_recv *r)
{
	struct ib_sge sge = {
		.addr	= r->dma,
		.length	= RMBD_MSG_SIZE,
		.lkey	= sess->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &r->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	ib_dma_sync_single_for_device(sess->ibdev, r->dma, RMBD_MSG_SIZE,
				      DMA_FROM_DEVICE);
	return ib_post_recv(sess->admin.cm_id->qp, &wr, NULL);
}

static int rmbd_t_wait_wr(struct rmbd_t_session *sess, struct completion *c)
{
	if (!wait_for_completion_timeout(c, RMBD_T_WR_TIMEOUT))
		return -ETIMEDOUT;
	return sess->wr_status == IB_WC_SUCCESS ? 0 : -EIO;
}

static int rmbd_t_send(struct rmbd_t_session *sess, size_t len)
{
	struct ib_sge sge = {
		.addr	= sess->send_dma,
		.length	= len,
		.lkey	= sess->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &sess->send_cqe,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int ret;

	ib_dma_sync_single_for_device(sess->ibdev, sess->send_dma,
				      RMBD_MSG_SIZE, DMA_TO_DEVICE);
	reinit_completion(&sess->send_done);
	ret = ib_post_send(sess->admin.cm_id->qp, &wr, NULL);
	if (ret)
		return ret;
	return rmbd_t_wait_wr(sess, &sess->send_done);
}

static void rmbd_t_unmap_slab(struct rmbd_t_session *sess, u32 idx)
{
	struct rmbd_t_map *map = &sess->maps[idx];

	if (map->mr) {
		/* Deregistration invalidates the rkey for good. */
		ib_dereg_mr(map->mr);
		map->mr = NULL;
		atomic_dec(&sess->export->nr_mapped);
		atomic_dec(&sess->nr_mapped);
		atomic64_sub(map->len, &sess->mapped_bytes);
	}
	if (map->nents) {
		ib_dma_unmap_sg(sess->ibdev, map->sgt.sgl, map->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
		map->nents = 0;
	}
	if (map->sgt.sgl)
		sg_free_table(&map->sgt);
}

/*
 * The page size of a slab's region on @ibdev: a chunk's 2 MiB when the
 * RDMA device registers pages that large (page_size_cap), else the CPU's,
 * 0 when neither.  siw registers pages of any size but announces only
 * PAGE_SIZE.
 */
static u32 rmbd_t_mr_page_size(struct ib_device *ibdev)
{
	u64 cap = ibdev->attrs.page_size_cap;

	if ((cap & RMBD_CHUNK_SIZE) ||
	    ibdev->ops.driver_id == RDMA_DRIVER_SIW)
		return RMBD_CHUNK_SIZE;
	return cap & PAGE_SIZE ? PAGE_SIZE : 0;
}

/* The entries of a slab's page list on @ibdev; 0 when it has no page size. */
static u64 rmbd_t_mr_pages(struct ib_device *ibdev,
			   const struct rmbd_export *exp)
{
	u32 page = rmbd_t_mr_page_size(ibdev);

	return page ? DIV_ROUND_UP_ULL(exp->slab_size, page) : 0;
}

static noinline int rmbd_t_map_slab(struct rmbd_t_session *sess, u32 idx)
{
	struct rmbd_slab *slab = &sess->export->slabs[idx];
	struct rmbd_t_map *map = &sess->maps[idx];
	struct scatterlist *sg;
	struct ib_reg_wr wr = { };
	struct ib_mr *mr;
	u32 page = rmbd_t_mr_page_size(sess->ibdev);
	u64 pages = rmbd_t_mr_pages(sess->ibdev, sess->export);
	u64 left = slab->len;
	int i, n, ret;

	/* rmbd_t_can_register() said yes at OPEN. */
	if (!pages || pages > sess->ibdev->attrs.max_fast_reg_page_list_len)
		return -E2BIG;
	ret = sg_alloc_table(&map->sgt, slab->nr_chunks, GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sgtable_sg(&map->sgt, sg, i) {
		u32 len = min_t(u64, left, RMBD_CHUNK_SIZE);

		sg_set_page(sg, slab->chunks[i], len, 0);
		left -= len;
	}
	map->nents = ib_dma_map_sg(sess->ibdev, map->sgt.sgl,
				   map->sgt.orig_nents, DMA_BIDIRECTIONAL);
	if (!map->nents) {
		ret = -ENOMEM;
		goto out_unmap;
	}
	mr = ib_alloc_mr(sess->pd, IB_MR_TYPE_MEM_REG, pages);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto out_unmap;
	}
	n = ib_map_mr_sg(mr, map->sgt.sgl, map->nents, NULL, page);
	if (n != map->nents) {
		ret = n < 0 ? n : -EINVAL;
		goto out_dereg;
	}
	/*
	 * The region's address as the peer sees it: not the DMA address the
	 * mapping gave it (on soft RDMA devices a kernel virtual address),
	 * but the session's random base and the slab's place in the export.
	 * The offset into the first MR page stays what the mapping set.
	 */
	mr->iova = sess->iova_base + (u64)idx * sess->export->slab_size +
		   (mr->iova & (page - 1));
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));

	wr.wr.opcode = IB_WR_REG_MR;
	wr.wr.wr_cqe = &sess->reg_cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.mr = mr;
	wr.key = mr->rkey;
	/* Read-only: the RDMA device refuses the peer's writes. */
	wr.access = sess->read_only ? IB_ACCESS_REMOTE_READ :
		    IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		    IB_ACCESS_REMOTE_WRITE;
	reinit_completion(&sess->reg_done);
	ret = ib_post_send(sess->admin.cm_id->qp, &wr.wr, NULL);
	if (ret)
		goto out_dereg;
	/*
	 * From here the MR belongs to the map: if the registration does not
	 * complete, the session's release deregisters it after the drain.
	 */
	map->mr = mr;
	map->len = slab->len;
	atomic_inc(&sess->export->nr_mapped);
	atomic_inc(&sess->nr_mapped);
	atomic64_add(map->len, &sess->mapped_bytes);
	ret = rmbd_t_wait_wr(sess, &sess->reg_done);
	if (ret)
		rmbd_t_session_schedule_release(sess);
	return ret;

out_dereg:
	ib_dereg_mr(mr);
out_unmap:
	rmbd_t_unmap_slab(sess, idx);
	return ret;
}
ALLOW_ERROR_INJECTION(rmbd_t_map_slab, ERRNO);

/*
 * May @sess come up on @exp (rmbd_t_mutex held)?  Not when the export is
 * not shared and a session of another host holds it (-EBUSY, that host's
 * identity in @holder, RMBD_HOST_LEN bytes, if not NULL), or held it and
 * is still being torn down (-EAGAIN: its queue pairs and regions may still
 * be live); not past RMBD_MAX_EXPORT_SESSIONS sessions that are up
 * (-EUSERS).  A session without identity is another host to every session.
 */
static int rmbd_t_may_hold(struct rmbd_t_session *sess,
			   struct rmbd_export *exp, char *holder)
{
	struct rmbd_t_session *s;
	unsigned int up = 0;
	int ret = 0;

	list_for_each_entry(s, &exp->sessions, export_entry) {
		if (s == sess || !s->up)
			continue;
		up++;
		if (exp->shared ||
		    (sess->host[0] && !strcmp(s->host, sess->host)))
			continue;
		if (!test_bit(RMBD_T_SESS_RELEASING, &s->flags)) {
			if (holder)
				strscpy_pad(holder, s->host, RMBD_HOST_LEN);
			return -EBUSY;
		}
		ret = -EAGAIN;
	}
	if (!ret && up >= RMBD_MAX_EXPORT_SESSIONS)
		ret = -EUSERS;
	return ret;
}

/*
 * @sess comes up on its export, which no other host holds (rmbd_t_mutex
 * held).  On an export that is not shared, the host's other sessions are
 * stale: it came back after a crash or a link loss (its client refuses a
 * second device on an export that is not shared).  They are released now
 * rather than at their timeout.
 */
static void rmbd_t_take_over(struct rmbd_t_session *sess)
{
	struct rmbd_export *exp = sess->export;
	struct rmbd_t_session *s;

	if (!exp->shared)
		list_for_each_entry(s, &exp->sessions, export_entry) {
			if (s == sess || !s->up ||
			    test_bit(RMBD_T_SESS_RELEASING, &s->flags))
				continue;
			pr_info_ratelimited("session %llx: host '%s' takes export %s over from its session %llx\n",
					    sess->id, sess->host, exp->name,
					    s->id);
			rmbd_t_session_schedule_release(s);
		}
	WRITE_ONCE(sess->up, true);
}

/*
 * Whether @ibdev can register @exp's slabs as rmbd_t_map_slab() does:
 * one fast registration (IB_WR_REG_MR) of a slab, in pages of 2 MiB or
 * of the CPU's size.  Asked at OPEN, so that a client learns it before it
 * maps anything.
 */
static bool rmbd_t_can_register(struct ib_device *ibdev,
				const struct rmbd_export *exp)
{
	const struct ib_device_attr *a = &ibdev->attrs;
	u64 pages = rmbd_t_mr_pages(ibdev, exp);

	return (a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS) &&
	       pages && pages <= a->max_fast_reg_page_list_len;
}

static int rmbd_t_handle_open(struct rmbd_t_session *sess,
			      const struct rmbd_open_req *req)
{
	struct rmbd_open_rsp *rsp = sess->send_buf;
	u32 flags = le32_to_cpu(req->flags);
	struct rmbd_export_host *h;
	struct rmbd_export *exp;
	struct rmbd_t_map *maps = NULL;
	int ret = 0;

	if (READ_ONCE(sess->export))
		return -EALREADY;
	mutex_lock(&rmbd_t_mutex);
	/* Ended meanwhile (its host removed, its export deleted). */
	if (test_bit(RMBD_T_SESS_RELEASING, &sess->flags)) {
		ret = -ECONNRESET;
		goto out_unlock;
	}
	exp = rmbd_export_find(req->name);
	if (!exp) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (!rmbd_export_allows(exp, req->host)) {
		pr_info_ratelimited("session %llx: host '%s' may not open export %s\n",
				    sess->id, req->host, exp->name);
		ret = -EACCES;
		goto out_unlock;
	}
	if (!rmbd_t_can_register(sess->ibdev, exp)) {
		pr_info_ratelimited("session %llx: RDMA device %s cannot register the slabs of export %s (fast registration of %llu pages of %u KiB; 0: no page size it registers)\n",
				    sess->id, dev_name(&sess->ibdev->dev),
				    exp->name, rmbd_t_mr_pages(sess->ibdev, exp),
				    rmbd_t_mr_page_size(sess->ibdev) >> 10);
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	if ((flags & RMBD_OPEN_SHARED) && !exp->shared) {
		ret = -EPERM;
		goto out_unlock;
	}
	strscpy_pad(sess->host, req->host, sizeof(sess->host));
	h = req->host[0] ? rmbd_export_host_find(exp, req->host) : NULL;
	/*
	 * A host with a secret learns who holds the export once it proved
	 * it has it (AUTH); any other is told now.  The refusal names the
	 * holder; the rest of the reply stays zero.
	 */
	if (!h || !h->secret_len) {
		ret = rmbd_t_may_hold(sess, exp, rsp->holder);
		if (ret)
			goto out_unlock;
	}
	maps = kvcalloc(exp->nr_slabs, sizeof(*maps), GFP_KERNEL);
	if (!maps) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	if (h && h->secret_len) {
		sess->secret_len = h->secret_len;
		memcpy(sess->secret, h->secret, h->secret_len);
		memcpy(sess->nc, req->challenge, sizeof(sess->nc));
		get_random_bytes(sess->nt, sizeof(sess->nt));
		WRITE_ONCE(sess->auth_pending, true);
		memcpy(rsp->challenge, sess->nt, sizeof(rsp->challenge));
	}
	sess->read_only = exp->read_only || (flags & RMBD_OPEN_RDONLY);
	rsp->flags = cpu_to_le32((sess->auth_pending ? RMBD_OPEN_AUTH : 0) |
				 (sess->read_only ? RMBD_OPEN_RDONLY : 0) |
				 (READ_ONCE(exp->written) ? 0 : RMBD_OPEN_BLANK) |
				 RMBD_OPEN_MAP_RANGE);
	kref_get(&exp->ref);
	list_add_tail(&sess->export_entry, &exp->sessions);
	exp->nr_sessions++;
	sess->maps = maps;
	/*
	 * 1 GiB aligned (every slab size divides it), from 2^62 on: an
	 * export of at most 1 PiB cannot wrap, and no address is 0.
	 */
	sess->iova_base = (get_random_u64() & GENMASK_ULL(61, 30)) |
			  BIT_ULL(62);
	WRITE_ONCE(sess->export, exp);
	rsp->size = cpu_to_le64(exp->size);
	rsp->slab_size = cpu_to_le64(exp->slab_size);
	rsp->nr_slabs = cpu_to_le32(exp->nr_slabs);
	rsp->session_timeout_ms = cpu_to_le32(jiffies_to_msecs(sess->timeout));
	rsp->export_id = cpu_to_le64(exp->id);
	get_random_bytes(sess->join_key, sizeof(sess->join_key));
	memcpy(rsp->join_key, sess->join_key, sizeof(rsp->join_key));
	/* Nothing holds it against us: checked above, under the same mutex. */
	if (!sess->auth_pending)
		rmbd_t_take_over(sess);
out_unlock:
	mutex_unlock(&rmbd_t_mutex);
	return ret;
}

/* Slab @idx's region, registered for @sess if it is not yet. */
static struct ib_mr *rmbd_t_slab_mr(struct rmbd_t_session *sess, u32 idx)
{
	int ret;

	if (!sess->maps[idx].mr) {
		ret = rmbd_t_map_slab(sess, idx);
		if (ret)
			return ERR_PTR(ret);
	}
	/* It may take writes from now on: it is no longer blank. */
	if (!sess->read_only)
		WRITE_ONCE(sess->export->written, true);
	return sess->maps[idx].mr;
}

static int rmbd_t_may_map(struct rmbd_t_session *sess)
{
	if (!sess->export)
		return -EBADFD;
	if (!sess->up)
		return -EACCES;
	return 0;
}

static int rmbd_t_handle_map(struct rmbd_t_session *sess,
			     const struct rmbd_map_req *req)
{
	struct rmbd_map_rsp *rsp = sess->send_buf;
	u32 idx = le32_to_cpu(req->slab);
	struct ib_mr *mr;
	int ret;

	ret = rmbd_t_may_map(sess);
	if (ret)
		return ret;
	if (idx >= sess->export->nr_slabs)
		return -ERANGE;
	mr = rmbd_t_slab_mr(sess, idx);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	rsp->addr = cpu_to_le64(mr->iova);
	rsp->len = cpu_to_le64(mr->length);
	rsp->rkey = cpu_to_le32(mr->rkey);
	rsp->slab = cpu_to_le32(idx);
	return 0;
}

/*
 * RMBD_OP_MAP_RANGE: the slabs from @req->first on, as far as they are
 * registered and follow each other at slab_size apart, which a session's
 * regions do (rmbd_t_map_slab()); the client asks again for the rest.
 */
static int rmbd_t_handle_map_range(struct rmbd_t_session *sess,
				   const struct rmbd_map_range_req *req)
{
	struct rmbd_map_range_rsp *rsp = sess->send_buf;
	u32 first = le32_to_cpu(req->first);
	u32 count = le32_to_cpu(req->count);
	u64 addr = 0, slab_size;
	unsigned long start;
	struct ib_mr *mr;
	u32 i;
	int ret;

	ret = rmbd_t_may_map(sess);
	if (ret)
		return ret;
	if (!count || count > RMBD_MAP_RANGE_MAX)
		return -EINVAL;
	if (first >= sess->export->nr_slabs ||
	    count > sess->export->nr_slabs - first)
		return -ERANGE;
	slab_size = sess->export->slab_size;
	start = jiffies;
	for (i = 0; i < count; i++) {
		/*
		 * Within a second (a device that registers slowly): the
		 * client waits for the reply as long as for any other.
		 */
		if (i && time_after(jiffies, start + HZ))
			break;
		mr = rmbd_t_slab_mr(sess, first + i);
		if (IS_ERR(mr)) {
			if (!i)
				return PTR_ERR(mr);
			/* Not worth a reply when the session is ending */
			if (test_bit(RMBD_T_SESS_RELEASING, &sess->flags))
				return PTR_ERR(mr);
			break;
		}
		if (!i)
			addr = mr->iova;
		else if (mr->iova != addr + i * slab_size)
			break;
		rsp->rkeys[i] = cpu_to_le32(mr->rkey);
	}
	rsp->addr = cpu_to_le64(addr);
	rsp->first = cpu_to_le32(first);
	rsp->count = cpu_to_le32(i);
	return 0;
}

/*
 * RMBD_OP_AUTH: check the client's answer to our challenge, in constant
 * time, and answer the client's.  A wrong answer ends the session after
 * the reply.
 */
static int rmbd_t_handle_auth(struct rmbd_t_session *sess,
			      const struct rmbd_auth_msg *req)
{
	struct rmbd_auth_msg *rsp = sess->send_buf;
	u8 want[RMBD_RESPONSE_LEN];
	int ret;

	if (!sess->export || !sess->auth_pending || sess->auth_failed ||
	    !sess->secret_len)
		return -EINVAL;
	ret = rmbd_auth_response(sess->secret, sess->secret_len, false,
				 sess->id, sess->nt, sess->nc, sess->host,
				 sess->export->name, want);
	if (ret) {
		pr_warn_once("cannot compute HMAC-SHA-256 (%d): authentication fails\n",
			     ret);
		ret = -EIO;
		goto out;
	}
	if (crypto_memneq(want, req->response, sizeof(want))) {
		pr_info_ratelimited("session %llx: host '%s' failed to authenticate for export %s\n",
				    sess->id, sess->host, sess->export->name);
		sess->auth_failed = true;
		ret = -EACCES;
		goto out;
	}
	ret = rmbd_auth_response(sess->secret, sess->secret_len, true,
				 sess->id, sess->nc, sess->nt, sess->host,
				 sess->export->name, rsp->response);
	if (ret) {
		ret = -EIO;
		goto out;
	}
	/* Now that it proved itself: may it hold the export? */
	mutex_lock(&rmbd_t_mutex);
	if (test_bit(RMBD_T_SESS_RELEASING, &sess->flags))
		ret = -ECONNRESET;
	else
		ret = rmbd_t_may_hold(sess, sess->export, rsp->holder);
	if (!ret) {
		sess->authenticated = true;
		rmbd_t_take_over(sess);
	}
	mutex_unlock(&rmbd_t_mutex);
	if (!ret)
		WRITE_ONCE(sess->auth_pending, false);
out:
	memzero_explicit(want, sizeof(want));
	memzero_explicit(sess->secret, sizeof(sess->secret));
	sess->secret_len = 0;
	if (ret)
		sess->auth_failed = true;
	return ret;
}

/* The session holds its export now: say so in the log and as an event. */
static void rmbd_t_session_up(struct rmbd_t_session *sess, bool auth)
{
	pr_info_ratelimited("session %llx: host '%s' opened export %s%s\n",
			    sess->id, sess->host, sess->export->name,
			    auth ? ", authenticated" : "");
	rmbd_t_notify_session(sess, RMBD_SESSION_EVENT_UP);
}

/* Handle one admin request and send the reply. */
static void rmbd_t_handle_msg(struct rmbd_t_session *sess, void *buf, u32 len)
{
	struct rmbd_msg_hdr *hdr = sess->send_buf;
	size_t rsp_len = sizeof(*hdr);
	u16 opcode = 0;
	int ret;

	memset(sess->send_buf, 0, RMBD_MSG_SIZE);
	ret = rmbd_check_msg(buf, len, &opcode);
	if (ret == -EPROTO || (!ret && (opcode & RMBD_OP_REPLY))) {
		pr_info("session %llx: malformed admin message, closing\n",
			sess->id);
		rmbd_t_session_schedule_release(sess);
		return;
	}
	if (!ret) {
		switch (opcode) {
		case RMBD_OP_OPEN:
			ret = rmbd_t_handle_open(sess, buf);
			rsp_len = sizeof(struct rmbd_open_rsp);
			/* A host that must authenticate is up once it did. */
			if (!ret && sess->up)
				rmbd_t_session_up(sess, false);
			break;
		case RMBD_OP_MAP:
			ret = rmbd_t_handle_map(sess, buf);
			rsp_len = sizeof(struct rmbd_map_rsp);
			break;
		case RMBD_OP_MAP_RANGE:
			ret = rmbd_t_handle_map_range(sess, buf);
			rsp_len = sizeof(struct rmbd_map_range_rsp);
			break;
		case RMBD_OP_AUTH:
			ret = rmbd_t_handle_auth(sess, buf);
			rsp_len = sizeof(struct rmbd_auth_msg);
			if (!ret)
				rmbd_t_session_up(sess, true);
			break;
		case RMBD_OP_CLOSE:
		case RMBD_OP_KEEPALIVE:
			break;
		}
	}
	if (ret == -EBUSY &&
	    (opcode == RMBD_OP_OPEN || opcode == RMBD_OP_AUTH)) {
		/* The refusal names the holder. */
	} else if (ret) {
		memset(sess->send_buf, 0, RMBD_MSG_SIZE);
		rsp_len = sizeof(*hdr);
	}
	hdr->opcode = cpu_to_le16(opcode | RMBD_OP_REPLY);
	hdr->status = cpu_to_le16(-ret);
	hdr->tag = ((struct rmbd_msg_hdr *)buf)->tag;
	if (rmbd_t_send(sess, rsp_len) || opcode == RMBD_OP_CLOSE ||
	    sess->auth_failed)
		rmbd_t_session_schedule_release(sess);
}

static void rmbd_t_msg_work(struct work_struct *work)
{
	struct rmbd_t_session *sess =
		container_of(work, struct rmbd_t_session, msg_work);
	struct rmbd_t_recv *r;

	for (;;) {
		spin_lock_bh(&sess->recv_lock);
		r = list_first_entry_or_null(&sess->recv_pending,
					     struct rmbd_t_recv, entry);
		if (r)
			list_del(&r->entry);
		spin_unlock_bh(&sess->recv_lock);
		if (!r)
			break;
		if (test_bit(RMBD_T_SESS_RELEASING, &sess->flags))
			continue;
		ib_dma_sync_single_for_cpu(sess->ibdev, r->dma, RMBD_MSG_SIZE,
					   DMA_FROM_DEVICE);
		rmbd_t_handle_msg(sess, r->buf, r->len);
		if (!test_bit(RMBD_T_SESS_RELEASING, &sess->flags) &&
		    rmbd_t_post_recv(sess, r))
			rmbd_t_session_schedule_release(sess);
	}
}

static noinline int rmbd_t_queue_create(struct rmbd_t_session *sess,
			       struct rmbd_t_queue *q, struct rdma_cm_id *cm_id,
			       unsigned int send_wr, unsigned int recv_wr)
{
	struct ib_qp_init_attr attr = { };
	int ret;

	q->kind = RMBD_T_CTX_QUEUE;
	q->sess = sess;
	/* +1 each for drain */
	q->cq_size = send_wr + recv_wr + 2;
	q->cq = ib_alloc_cq(sess->ibdev, q, q->cq_size,
			    q->qid % sess->ibdev->num_comp_vectors,
			    IB_POLL_WORKQUEUE);
	if (IS_ERR(q->cq))
		return PTR_ERR(q->cq);

	attr.event_handler = rmbd_t_qp_event;
	attr.qp_context = q;
	attr.cap.max_send_wr = send_wr + 1;
	attr.cap.max_recv_wr = recv_wr + 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = q->cq;
	attr.recv_cq = q->cq;
	ret = rdma_create_qp(cm_id, sess->pd, &attr);
	if (ret) {
		ib_free_cq(q->cq);
		q->cq = NULL;
		return ret;
	}
	q->has_qp = true;
	q->cm_id = cm_id;
	return 0;
}
ALLOW_ERROR_INJECTION(rmbd_t_queue_create, ERRNO);

/* Undo rmbd_t_queue_create(); the cm_id is the caller's business. */
static void rmbd_t_queue_destroy(struct rmbd_t_queue *q)
{
	if (q->has_qp) {
		rdma_destroy_qp(q->cm_id);
		q->has_qp = false;
	}
	if (q->cq) {
		ib_free_cq(q->cq);
		q->cq = NULL;
	}
}

static int rmbd_t_accept(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev,
			 u64 session_id)
{
	struct ib_device_attr *attrs = &cm_id->device->attrs;
	struct rdma_conn_param param = { };
	struct rmbd_cm_rep rep = { };

	rep.magic = cpu_to_le32(RMBD_PROTO_MAGIC);
	rep.version = cpu_to_le16(RMBD_PROTO_VERSION);
	rep.session_id = cpu_to_le64(session_id);
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	param.flow_control = 1;
	param.rnr_retry_count = 7;
	/* The client reads from us: grant what it asked for, if we can. */
	param.responder_resources = min_t(u32, ev->param.conn.responder_resources,
					  attrs->max_qp_rd_atom);
	param.initiator_depth = min_t(u32, ev->param.conn.initiator_depth,
				      attrs->max_qp_init_rd_atom);
	return rdma_accept(cm_id, &param);
}

static void rmbd_t_session_free_bufs(struct rmbd_t_session *sess)
{
	int i;

	for (i = 0; i < RMBD_T_ADMIN_RECVS; i++) {
		struct rmbd_t_recv *r = &sess->recv[i];

		if (!r->buf)
			continue;
		ib_dma_unmap_single(sess->ibdev, r->dma, RMBD_MSG_SIZE,
				    DMA_FROM_DEVICE);
		kfree(r->buf);
		r->buf = NULL;
	}
	if (sess->send_buf) {
		ib_dma_unmap_single(sess->ibdev, sess->send_dma, RMBD_MSG_SIZE,
				    DMA_TO_DEVICE);
		kfree(sess->send_buf);
		sess->send_buf = NULL;
	}
}

static noinline int rmbd_t_session_alloc_bufs(struct rmbd_t_session *sess)
{
	int i;

	sess->send_buf = kzalloc(RMBD_MSG_SIZE, GFP_KERNEL);
	if (!sess->send_buf)
		return -ENOMEM;
	sess->send_dma = ib_dma_map_single(sess->ibdev, sess->send_buf,
					   RMBD_MSG_SIZE, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(sess->ibdev, sess->send_dma)) {
		kfree(sess->send_buf);
		sess->send_buf = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < RMBD_T_ADMIN_RECVS; i++) {
		struct rmbd_t_recv *r = &sess->recv[i];

		r->sess = sess;
		r->cqe.done = rmbd_t_recv_done;
		r->buf = kzalloc(RMBD_MSG_SIZE, GFP_KERNEL);
		if (!r->buf)
			goto out_free;
		r->dma = ib_dma_map_single(sess->ibdev, r->buf, RMBD_MSG_SIZE,
					   DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(sess->ibdev, r->dma)) {
			kfree(r->buf);
			r->buf = NULL;
			goto out_free;
		}
	}
	return 0;

out_free:
	rmbd_t_session_free_bufs(sess);
	return -ENOMEM;
}
ALLOW_ERROR_INJECTION(rmbd_t_session_alloc_bufs, ERRNO);

static void rmbd_t_release_work(struct work_struct *work);

/* Sessions from the first allocation to the last free: max_sessions. */
static atomic_t rmbd_t_nr_sessions = ATOMIC_INIT(0);

/* Seconds a new session has to open an export before it is released. */
#define RMBD_T_OPEN_TIMEOUT	10

/*
 * A client that vanished (crashed, lost its link for good) leaves its
 * queues connected as far as the target can tell: nothing is posted on
 * them.  Its keepalives stop, and this releases the session.
 */
static void rmbd_t_timeout_work(struct work_struct *work)
{
	struct rmbd_t_session *sess = container_of(to_delayed_work(work),
						   struct rmbd_t_session,
						   timeout_work);
	unsigned long deadline = READ_ONCE(sess->last_heard) + sess->timeout;
	unsigned long open_by = sess->created + RMBD_T_OPEN_TIMEOUT * HZ;
	/* Opened, and authenticated if it must be. */
	bool opened = READ_ONCE(sess->up);

	if (test_bit(RMBD_T_SESS_RELEASING, &sess->flags))
		return;
	if (!opened && time_after_eq(jiffies, open_by)) {
		pr_info_ratelimited("session %llx: no export opened within %u s, releasing the session\n",
				    sess->id, RMBD_T_OPEN_TIMEOUT);
		rmbd_t_session_schedule_release(sess);
		return;
	}
	if (sess->timeout && time_after_eq(jiffies, deadline)) {
		pr_info("session %llx: client silent for %u s, releasing the session\n",
			sess->id, jiffies_to_msecs(sess->timeout) / 1000);
		rmbd_t_session_schedule_release(sess);
		return;
	}
	if (opened && !sess->timeout)
		return;
	if (!sess->timeout || (!opened && time_before(open_by, deadline)))
		deadline = open_by;
	queue_delayed_work(rmbd_t_wq, &sess->timeout_work,
			   deadline - jiffies + 1);
}

/* A session the target holds from its first allocation to its free. */
static bool rmbd_t_session_count(struct rmbd_listener *l,
				 struct rdma_cm_id *cm_id)
{
	if (atomic_inc_return(&rmbd_t_nr_sessions) >
	    READ_ONCE(rmbd_t_max_sessions)) {
		atomic_dec(&rmbd_t_nr_sessions);
		pr_info_ratelimited("refused a session from %pISp: %u sessions, the max_sessions limit\n",
				    &cm_id->route.addr.dst_addr,
				    READ_ONCE(rmbd_t_max_sessions));
		return false;
	}
	if (atomic_inc_return(&l->nr_sessions) > l->max_sessions) {
		atomic_dec(&l->nr_sessions);
		atomic_dec(&rmbd_t_nr_sessions);
		pr_info_ratelimited("refused a session from %pISp: listener %pISpc holds %u sessions, its max_sessions\n",
				    &cm_id->route.addr.dst_addr, &l->addr,
				    l->max_sessions);
		return false;
	}
	kref_get(&l->ref);
	return true;
}

static void rmbd_t_session_uncount(struct rmbd_listener *l)
{
	atomic_dec(&l->nr_sessions);
	rmbd_listener_put(l);
	atomic_dec(&rmbd_t_nr_sessions);
}

/*
 * A client opens a session: its admin queue connects.  The new id's
 * context is still its listener's, which rdma_cm keeps alive until this
 * returns.
 */
static int rmbd_t_session_create(struct rdma_cm_id *cm_id,
				 struct rdma_cm_event *ev)
{
	struct rmbd_listener *l = cm_id->context;
	struct rmbd_t_session *sess;
	int i, ret;

	if (!rmbd_t_session_count(l, cm_id))
		return -RMBD_REJ_LIMIT;
	sess = kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess)
		goto out_uncount;
	sess->ioq = kcalloc(RMBD_MAX_IO_QUEUES_WIRE, sizeof(*sess->ioq),
			    GFP_KERNEL);
	if (!sess->ioq)
		goto out_free_sess;
	do {
		sess->id = get_random_u64();
	} while (!sess->id);
	sess->ibdev = cm_id->device;
	sess->listener = l;
	INIT_LIST_HEAD(&sess->entry);
	INIT_LIST_HEAD(&sess->export_entry);
	INIT_LIST_HEAD(&sess->recv_pending);
	spin_lock_init(&sess->recv_lock);
	INIT_WORK(&sess->msg_work, rmbd_t_msg_work);
	INIT_WORK(&sess->release_work, rmbd_t_release_work);
	INIT_DELAYED_WORK(&sess->timeout_work, rmbd_t_timeout_work);
	sess->timeout = READ_ONCE(rmbd_t_session_timeout) * HZ;
	sess->last_heard = jiffies;
	init_completion(&sess->send_done);
	init_completion(&sess->reg_done);
	sess->send_cqe.done = rmbd_t_send_done;
	sess->reg_cqe.done = rmbd_t_reg_done;

	sess->pd = ib_alloc_pd(sess->ibdev, 0);
	if (IS_ERR(sess->pd))
		goto out_free_ioq;
	ret = rmbd_t_session_alloc_bufs(sess);
	if (ret)
		goto out_dealloc_pd;
	sess->admin.qtype = RMBD_QUEUE_ADMIN;
	/* SEND, REG_MR */
	ret = rmbd_t_queue_create(sess, &sess->admin, cm_id, 2,
				  RMBD_T_ADMIN_RECVS);
	if (ret)
		goto out_free_bufs;
	for (i = 0; i < RMBD_T_ADMIN_RECVS; i++) {
		ret = rmbd_t_post_recv(sess, &sess->recv[i]);
		if (ret)
			goto out_destroy_queue;
	}
	cm_id->context = &sess->admin;
	/* Listed before the client can send anything that releases it. */
	mutex_lock(&rmbd_t_sess_mutex);
	list_add_tail(&sess->entry, &rmbd_t_sessions);
	mutex_unlock(&rmbd_t_sess_mutex);
	ret = rmbd_t_accept(cm_id, ev, sess->id);
	if (ret)
		goto out_unlist;
	pr_debug("session %llx: admin queue from %pISp\n", sess->id,
		 &cm_id->route.addr.dst_addr);
	/* From here on the release work owns the session. */
	set_bit(RMBD_T_SESS_ACCEPTED, &sess->flags);
	/* Pairs with test_and_set_bit() in rmbd_t_session_schedule_release(). */
	smp_mb__after_atomic();
	if (test_bit(RMBD_T_SESS_RELEASING, &sess->flags))
		rmbd_t_queue_release(sess);
	/*
	 * The client may have had the session released already: a release
	 * takes it off the list under the mutex before it cancels the
	 * timeout, so arm it only while the session is still listed.
	 */
	mutex_lock(&rmbd_t_sess_mutex);
	/* The 10 s to OPEN count from the accept. */
	sess->created = jiffies;
	if (!list_empty(&sess->entry))
		queue_delayed_work(rmbd_t_wq, &sess->timeout_work,
				   min_not_zero(sess->timeout,
						RMBD_T_OPEN_TIMEOUT * HZ));
	mutex_unlock(&rmbd_t_sess_mutex);
	return 0;

out_unlist:
	mutex_lock(&rmbd_t_sess_mutex);
	list_del_init(&sess->entry);
	mutex_unlock(&rmbd_t_sess_mutex);
out_destroy_queue:
	/*
	 * Not accepted: no release work was or will be queued, whatever
	 * the flushed receives ask for; and new messages are ignored.
	 */
	set_bit(RMBD_T_SESS_RELEASING, &sess->flags);
	ib_drain_qp(cm_id->qp);
	cancel_work_sync(&sess->msg_work);
	rmbd_t_queue_destroy(&sess->admin);
out_free_bufs:
	rmbd_t_session_free_bufs(sess);
out_dealloc_pd:
	ib_dealloc_pd(sess->pd);
out_free_ioq:
	kfree(sess->ioq);
out_free_sess:
	kfree_sensitive(sess);
out_uncount:
	rmbd_t_session_uncount(l);
	return -RMBD_REJ_NOMEM;
}

/* An I/O queue of an existing, opened session connects. */
static int rmbd_t_ioq_create(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev,
			     const struct rmbd_cm_req *req)
{
	u64 id = le64_to_cpu(req->session_id);
	u16 qid = le16_to_cpu(req->qid);
	struct rmbd_t_session *sess;
	struct rmbd_t_queue *q;
	int ret;

	mutex_lock(&rmbd_t_sess_mutex);
	list_for_each_entry(sess, &rmbd_t_sessions, entry)
		if (sess->id == id)
			goto found;
	ret = -RMBD_REJ_SESSION;
	goto out_unlock;
found:
	/* Opened, and authenticated if it must be: else no queue joins. */
	ret = -RMBD_REJ_SESSION;
	if (test_bit(RMBD_T_SESS_RELEASING, &sess->flags) ||
	    !READ_ONCE(sess->up))
		goto out_unlock;
	/* As if there were no such session: the id is no secret. */
	if (crypto_memneq(req->join_key, sess->join_key,
			  sizeof(sess->join_key))) {
		pr_info_ratelimited("session %llx: refused an I/O queue from %pISp with a wrong join key\n",
				    sess->id, &cm_id->route.addr.dst_addr);
		goto out_unlock;
	}
	ret = -RMBD_REJ_DEVICE;
	if (cm_id->device != sess->ibdev)
		goto out_unlock;
	ret = -RMBD_REJ_BUSY;
	if (sess->ioq[qid])
		goto out_unlock;
	ret = -RMBD_REJ_NOMEM;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		goto out_unlock;
	q->qtype = RMBD_QUEUE_IO;
	q->qid = qid;
	/* Only one-sided operations arrive: nothing but the drain is posted. */
	if (rmbd_t_queue_create(sess, q, cm_id, 0, 0))
		goto out_free_q;
	cm_id->context = q;
	if (rmbd_t_accept(cm_id, ev, sess->id))
		goto out_destroy_queue;
	sess->ioq[qid] = q;
	mutex_unlock(&rmbd_t_sess_mutex);
	return 0;

out_destroy_queue:
	rmbd_t_queue_destroy(q);
out_free_q:
	kfree(q);
out_unlock:
	mutex_unlock(&rmbd_t_sess_mutex);
	return ret;
}

static int rmbd_t_connect_request(struct rdma_cm_id *cm_id,
				  struct rdma_cm_event *ev)
{
	struct rmbd_cm_req req;
	struct rmbd_cm_rej rej;
	int ret;

	ret = rmbd_check_cm_req(ev->param.conn.private_data,
				ev->param.conn.private_data_len, &req);
	if (!ret) {
		if (le16_to_cpu(req.qtype) == RMBD_QUEUE_ADMIN)
			ret = rmbd_t_session_create(cm_id, ev);
		else
			ret = rmbd_t_ioq_create(cm_id, ev, &req);
	}
	if (!ret)
		return 0;
	rmbd_fill_cm_rej(&rej, -ret);
	rdma_reject(cm_id, &rej, sizeof(rej), IB_CM_REJ_CONSUMER_DEFINED);
	/* Non-zero: rdma_cm destroys this id for us. */
	return -ECONNREFUSED;
}

/**
 * rmbd_t_cm_handler() - rdma_cm events of listeners and queues
 * @cm_id: the id; its context is a listener until a connect request
 *	made it a queue
 * @ev: the event
 *
 * Never destroys an id of its own; teardown runs from rmbd_t_wq.
 */
int rmbd_t_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rmbd_t_queue *q;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rmbd_t_connect_request(cm_id, ev);
	if (rmbd_t_is_listener(cm_id))
		return rmbd_t_listener_event(cm_id, ev);
	if (rmbd_t_ctx_kind(cm_id) == RMBD_T_CTX_PARKED)
		return rmbd_t_parked_event(cm_id, ev);

	q = cm_id->context;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* It says so once: the release must not park this id. */
		if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
			q->removed = true;
		rmbd_t_session_schedule_release(q->sess);
		break;
	default:
		break;
	}
	return 0;
}

static void rmbd_t_release_work(struct work_struct *work)
{
	struct rmbd_t_session *sess =
		container_of(work, struct rmbd_t_session, release_work);
	struct rmbd_export *exp;
	bool park;
	int i;

	/* No queue joins once the session is off the list. */
	mutex_lock(&rmbd_t_sess_mutex);
	list_del_init(&sess->entry);
	mutex_unlock(&rmbd_t_sess_mutex);

	/*
	 * Its port down, the session says nothing to the client: a
	 * disconnect request sent there leaves soft-RoCE's connection
	 * manager deaf (park.c).  The drain moves the queue pairs to the
	 * error state all the same; the ids wait for the port.
	 */
	park = !rmbd_t_port_active(sess->admin.cm_id);
	for (i = 0; i < RMBD_MAX_IO_QUEUES_WIRE; i++) {
		if (!sess->ioq[i])
			continue;
		if (!park)
			rdma_disconnect(sess->ioq[i]->cm_id);
		ib_drain_qp(sess->ioq[i]->cm_id->qp);
	}
	if (!park)
		rdma_disconnect(sess->admin.cm_id);
	ib_drain_qp(sess->admin.cm_id->qp);
	cancel_work_sync(&sess->msg_work);
	cancel_delayed_work_sync(&sess->timeout_work);

	for (i = 0; i < RMBD_MAX_IO_QUEUES_WIRE; i++)
		if (sess->ioq[i])
			rmbd_t_queue_destroy(sess->ioq[i]);
	rmbd_t_queue_destroy(&sess->admin);

	exp = sess->export;
	if (exp) {
		/* Up was announced only for one that came up. */
		if (sess->up)
			rmbd_t_notify_session(sess, RMBD_SESSION_EVENT_DOWN);
		for (i = 0; i < exp->nr_slabs; i++)
			rmbd_t_unmap_slab(sess, i);
		kvfree(sess->maps);
		mutex_lock(&rmbd_t_mutex);
		list_del(&sess->export_entry);
		exp->nr_sessions--;
		mutex_unlock(&rmbd_t_mutex);
		rmbd_export_put(exp);
	}
	rmbd_t_session_free_bufs(sess);
	ib_dealloc_pd(sess->pd);

	/* Last: the ids keep the device from going away under us. */
	if (!park || !rmbd_t_park_ids(sess)) {
		for (i = 0; i < RMBD_MAX_IO_QUEUES_WIRE; i++)
			if (sess->ioq[i])
				rdma_destroy_id(sess->ioq[i]->cm_id);
		rdma_destroy_id(sess->admin.cm_id);
	}
	for (i = 0; i < RMBD_MAX_IO_QUEUES_WIRE; i++)
		kfree(sess->ioq[i]);
	pr_debug("session %llx: released\n", sess->id);
	rmbd_t_session_uncount(sess->listener);
	kfree(sess->ioq);
	kfree_sensitive(sess);
}

/* Tear every session down; used when the module goes away. */
void rmbd_t_release_all(void)
{
	struct rmbd_t_session *sess;

	mutex_lock(&rmbd_t_sess_mutex);
	list_for_each_entry(sess, &rmbd_t_sessions, entry)
		rmbd_t_session_schedule_release(sess);
	mutex_unlock(&rmbd_t_sess_mutex);
	flush_workqueue(rmbd_t_wq);
}
