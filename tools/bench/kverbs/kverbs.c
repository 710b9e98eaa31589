// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd_kverbs: the raw RDMA ceiling of the benchmark (tools/bench), with
 * kernel verbs.  A passive side (rdma_cm listener on the target address)
 * registers a buffer with remote read and write access (a fast
 * registration of its own, per connection) and sends its address and
 * rkey; an active side (its source address on the client's device) keeps
 * DEPTH RDMA READs or WRITEs of SIZE bytes outstanding for MS
 * milliseconds, reposting from the completion handler, and counts what
 * completed in that time.  With wr=BYTES, an operation is a chain of
 * work requests of that many bytes each, only the last one signaled: the
 * way rmbd posts a large request, so that the ceiling of a 1 MiB
 * operation is not only what one 1 MiB work request does.
 *
 * Driven through debugfs:
 *
 *   echo "op=read size=4096 depth=16 ms=3000 src=10.201.0.1 dst=10.201.0.2" \
 *        > /sys/kernel/debug/rmbd_kverbs/run
 *   cat /sys/kernel/debug/rmbd_kverbs/run
 *
 * Optional: port=N (default 20886), poll=softirq|workqueue (the active
 * side's CQ; softirq as rmbd's I/O queues), wr=BYTES (default SIZE; at
 * most 64 work requests an operation), wait=1 (depth 1 only: the writing
 * process posts each operation itself and sleeps until it completes, as
 * a program that waits for each I/O does, instead of the completion
 * handler reposting; it runs where the writer runs, which the benchmark
 * leaves to the scheduler, as fio).  The write returns when the
 * measurement is over (or fails: a negative errno, and the reason in the
 * result).  The result is one line of key=value pairs: ops, ns (the
 * measured time), bytes, lat_ns_sum (submission to completion, summed
 * over the counted operations), and the devices and limits used.
 */

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/inet.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/ktime.h>
#include <linux/completion.h>
#include <linux/scatterlist.h>
#include <linux/mutex.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define KV_TIMEOUT_MS	10000
#define KV_MAX_DEPTH	1024
#define KV_MAX_MS	60000
#define KV_MIN_CHUNK	SZ_64K
#define KV_MAX_CHUNK	SZ_4M
#define KV_MAX_WRS	64

/* What the passive side sends once its buffer is registered. */
struct kv_info {
	__le64	addr;
	__le32	rkey;
	__le32	len;
};

/*
 * DEPTH slots of SIZE bytes in chunks of physically contiguous pages, a
 * slot never across two chunks: one SGE per operation.
 */
struct kv_buf {
	struct page	**chunks;
	u64		*dma;
	struct scatterlist *sgl;
	unsigned int	nchunks;
	unsigned int	order;
	u32		chunk_bytes;
	u32		per_chunk;
};

struct kv_slot {
	struct ib_cqe	cqe;
	unsigned int	idx;
	u64		posted;
	struct ib_rdma_wr *wr;		/* nr_wrs of them, chained */
	struct ib_sge	*sge;
};

struct kv_side {
	struct rdma_cm_id *id;
	struct ib_pd	*pd;
	struct ib_cq	*cq;
	struct ib_mr	*mr;
	struct kv_buf	buf;
	bool		qp;
	bool		connected;
	struct completion est;
	int		cm_err;
};

struct kv_run {
	/* the request */
	enum ib_wr_opcode op;
	u32		size;
	u32		wr_bytes;	/* of one work request */
	u32		nr_wrs;		/* work requests an operation */
	u32		depth;
	u32		ms;
	u16		port;
	bool		wait;
	enum ib_poll_context poll;
	struct sockaddr_storage src, dst;

	struct rdma_cm_id *listen;
	struct kv_side	a;		/* active: the client's device */
	struct kv_side	p;		/* passive: the target's device */
	struct completion req;
	u8		req_rd_atom;
	u8		rd_atom;
	u32		lkey;

	/* the passive side's setup: its REG_MR and SEND */
	struct ib_cqe	reg_cqe, send_cqe, recv_cqe, drain_cqe;
	struct completion sent, got_info;
	int		setup_status;
	struct kv_info	*info;		/* kmalloc'ed, DMA-mapped */
	u64		info_dma;
	struct kv_info	*rinfo;
	u64		rinfo_dma;
	u64		raddr;
	u32		rkey;

	/*
	 * the measurement, updated by the active CQ's handler only; with
	 * wait=1, ops and lat_sum by the waiting writer
	 */
	struct kv_slot	*slots;
	struct ib_rdma_wr *wrs;
	struct ib_sge	*sges;
	u64		t_end;
	u64		ops;
	u64		lat_sum;
	int		wc_err;
	atomic_t	inflight;
	struct completion drained;
	struct completion one;		/* wait=1: the operation completed */
};

static DEFINE_MUTEX(kv_lock);
static char kv_result[512];
static struct dentry *kv_dir;

static __printf(1, 2) void kv_set_result(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kv_result, sizeof(kv_result), fmt, ap);
	va_end(ap);
}

/* ---- buffers ---- */

static u64 kv_slot_off(struct kv_buf *b, struct kv_run *r, unsigned int i)
{
	return (u64)(i / b->per_chunk) * b->chunk_bytes +
	       (u64)(i % b->per_chunk) * r->size;
}

static void kv_buf_free(struct ib_device *dev, struct kv_buf *b)
{
	unsigned int i;

	for (i = 0; i < b->nchunks; i++) {
		if (!b->chunks || !b->chunks[i])
			continue;
		if (b->dma && b->dma[i])
			ib_dma_unmap_page(dev, b->dma[i], b->chunk_bytes,
					  DMA_BIDIRECTIONAL);
		__free_pages(b->chunks[i], b->order);
	}
	kfree(b->sgl);
	kfree(b->dma);
	kfree(b->chunks);
	memset(b, 0, sizeof(*b));
}

static int kv_buf_alloc(struct ib_device *dev, struct kv_buf *b,
			struct kv_run *r)
{
	unsigned int i;
	u64 dma;

	b->chunk_bytes = roundup_pow_of_two(max_t(u32, r->size, KV_MIN_CHUNK));
	b->order = get_order(b->chunk_bytes);
	b->per_chunk = b->chunk_bytes / r->size;
	b->nchunks = DIV_ROUND_UP(r->depth, b->per_chunk);
	b->chunks = kcalloc(b->nchunks, sizeof(*b->chunks), GFP_KERNEL);
	b->dma = kcalloc(b->nchunks, sizeof(*b->dma), GFP_KERNEL);
	b->sgl = kcalloc(b->nchunks, sizeof(*b->sgl), GFP_KERNEL);
	if (!b->chunks || !b->dma || !b->sgl)
		return -ENOMEM;
	sg_init_table(b->sgl, b->nchunks);
	for (i = 0; i < b->nchunks; i++) {
		b->chunks[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO |
					   __GFP_NOWARN, b->order);
		if (!b->chunks[i])
			return -ENOMEM;
		dma = ib_dma_map_page(dev, b->chunks[i], 0, b->chunk_bytes,
				      DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(dev, dma))
			return -ENOMEM;
		b->dma[i] = dma;
		sg_set_page(&b->sgl[i], b->chunks[i], b->chunk_bytes, 0);
		sg_dma_address(&b->sgl[i]) = dma;
		sg_dma_len(&b->sgl[i]) = b->chunk_bytes;
	}
	return 0;
}

/*
 * A fast-registration MR over the whole of @s's buffer, in pages of a
 * chunk when the device takes that page size, else of PAGE_SIZE.
 */
static int kv_mr_alloc(struct kv_side *s, const char **why)
{
	struct ib_device *dev = s->id->device;
	struct kv_buf *b = &s->buf;
	u32 page = b->chunk_bytes;
	u32 pages;
	int n;

	if (!(dev->attrs.page_size_cap & page))
		page = PAGE_SIZE;
	pages = b->nchunks * (b->chunk_bytes / page);
	if (pages > dev->attrs.max_fast_reg_page_list_len) {
		*why = "the buffer needs more pages than a fast registration takes";
		return -E2BIG;
	}
	s->mr = ib_alloc_mr(s->pd, IB_MR_TYPE_MEM_REG, pages);
	if (IS_ERR(s->mr)) {
		n = PTR_ERR(s->mr);
		s->mr = NULL;
		*why = "ib_alloc_mr failed";
		return n;
	}
	n = ib_map_mr_sg(s->mr, b->sgl, b->nchunks, NULL, page);
	if (n != b->nchunks) {
		*why = "ib_map_mr_sg did not map the whole buffer";
		return n < 0 ? n : -EINVAL;
	}
	return 0;
}

/* ---- the connection manager ---- */

static int kv_cm_event(struct rdma_cm_id *id, struct rdma_cm_event *ev,
		       struct kv_run *r, struct kv_side *s)
{
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, KV_TIMEOUT_MS);
		if (ret) {
			s->cm_err = ret;
			complete(&s->est);
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		complete(&s->est);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		s->connected = true;
		complete(&s->est);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		s->cm_err = ev->status ? ev->status : -ECONNREFUSED;
		if (s->cm_err > 0)
			s->cm_err = -ECONNREFUSED;
		complete(&s->est);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		s->connected = false;
		break;
	default:
		break;
	}
	return 0;
}

static int kv_active_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kv_run *r = id->context;

	return kv_cm_event(id, ev, r, &r->a);
}

/* The listener's and the accepted connection's events. */
static int kv_passive_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kv_run *r = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (r->p.id)
			return -ECONNREFUSED;	/* one connection a run */
		r->p.id = id;
		/* The READs the peer has outstanding, seen from here. */
		r->req_rd_atom = ev->param.conn.responder_resources;
		complete(&r->req);
		return 0;
	}
	if (id == r->listen)
		return 0;
	return kv_cm_event(id, ev, r, &r->p);
}

static int kv_wait(struct completion *c, struct kv_side *s)
{
	if (!wait_for_completion_timeout(c, msecs_to_jiffies(KV_TIMEOUT_MS)))
		return -ETIMEDOUT;
	return s ? s->cm_err : 0;
}

/* ---- completions ---- */

static void kv_setup_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_run *r = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS && !r->setup_status)
		r->setup_status = -EIO;
	if (wc->wr_cqe == &r->send_cqe)
		complete(&r->sent);
	else if (wc->wr_cqe == &r->recv_cqe)
		complete(&r->got_info);
}

static void kv_drain_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

/* Slot @sl's chain of work requests, built once: its buffers do not move. */
static void kv_slot_init(struct kv_run *r, struct kv_slot *sl)
{
	u64 laddr = r->a.buf.dma[sl->idx / r->a.buf.per_chunk] +
		    (sl->idx % r->a.buf.per_chunk) * r->size;
	u64 raddr = r->raddr + kv_slot_off(&r->p.buf, r, sl->idx);
	struct ib_rdma_wr *wr = sl->wr;
	struct ib_sge *sge = sl->sge;
	u32 off, len;
	unsigned int i;

	for (i = 0, off = 0; i < r->nr_wrs; i++, off += len) {
		len = min(r->wr_bytes, r->size - off);
		sge[i].addr = laddr + off;
		sge[i].length = len;
		sge[i].lkey = r->lkey;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.opcode = r->op;
		wr[i].remote_addr = raddr + off;
		wr[i].rkey = r->rkey;
		if (i + 1 < r->nr_wrs)
			wr[i].wr.next = &wr[i + 1].wr;
	}
	/* The last one, completing after the others, covers them. */
	wr[i - 1].wr.wr_cqe = &sl->cqe;
	wr[i - 1].wr.send_flags = IB_SEND_SIGNALED;
}

static int kv_post(struct kv_run *r, struct kv_slot *sl)
{
	sl->posted = ktime_get_ns();
	return ib_post_send(r->a.id->qp, &sl->wr[0].wr, NULL);
}

/*
 * An operation completed: count it when it completed within the measured
 * time, and post the next one in its slot until that time is over.  With
 * wait=1, only wake the writer, which counts and posts.
 */
static void kv_op_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_slot *sl = container_of(wc->wr_cqe, struct kv_slot, cqe);
	struct kv_run *r = cq->cq_context;
	u64 now;

	if (r->wait) {
		if (wc->status != IB_WC_SUCCESS)
			r->wc_err = wc->status;
		complete(&r->one);
		return;
	}
	now = ktime_get_ns();
	if (wc->status != IB_WC_SUCCESS) {
		if (!r->wc_err)
			r->wc_err = wc->status;
	} else if (now < READ_ONCE(r->t_end)) {
		r->ops++;
		r->lat_sum += now - sl->posted;
		if (!r->wc_err && !kv_post(r, sl))
			return;
	}
	if (atomic_dec_and_test(&r->inflight))
		complete(&r->drained);
}

/* ---- setup and teardown ---- */

static int kv_side_init(struct kv_run *r, struct kv_side *s,
			enum ib_poll_context poll, u32 cqe, u32 send_wr,
			const char **why)
{
	struct ib_device *dev = s->id->device;
	struct ib_qp_init_attr qa = {};
	int ret;

	if (dev->attrs.max_qp_wr < send_wr || dev->attrs.max_cqe < cqe) {
		*why = "the device's queues are too small for the depth";
		return -EINVAL;
	}
	s->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(s->pd)) {
		ret = PTR_ERR(s->pd);
		s->pd = NULL;
		*why = "ib_alloc_pd failed";
		return ret;
	}
	s->cq = ib_alloc_cq(dev, r, cqe, 0, poll);
	if (IS_ERR(s->cq)) {
		ret = PTR_ERR(s->cq);
		s->cq = NULL;
		*why = "ib_alloc_cq failed";
		return ret;
	}
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.cap.max_send_wr = send_wr;
	qa.cap.max_recv_wr = 2;		/* the info message, the drain */
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	ret = rdma_create_qp(s->id, s->pd, &qa);
	if (ret) {
		*why = "rdma_create_qp failed";
		return ret;
	}
	s->qp = true;
	ret = kv_buf_alloc(dev, &s->buf, r);
	if (ret)
		*why = "allocating the buffer failed";
	return ret;
}

static void kv_side_destroy(struct kv_side *s)
{
	struct ib_device *dev = s->id ? s->id->device : NULL;

	if (s->connected)
		rdma_disconnect(s->id);
	if (s->qp) {
		ib_drain_qp(s->id->qp);
		rdma_destroy_qp(s->id);
	}
	if (s->mr)
		ib_dereg_mr(s->mr);
	if (s->cq)
		ib_free_cq(s->cq);
	if (dev)
		kv_buf_free(dev, &s->buf);
	if (s->pd)
		ib_dealloc_pd(s->pd);
	if (s->id)
		rdma_destroy_id(s->id);
}

static void kv_teardown(struct kv_run *r)
{
	struct ib_device *adev = r->a.id ? r->a.id->device : NULL;
	struct ib_device *pdev = r->p.id ? r->p.id->device : NULL;

	/* No new connection requests from here on. */
	if (r->listen)
		rdma_destroy_id(r->listen);
	if (adev && r->rinfo_dma)
		ib_dma_unmap_single(adev, r->rinfo_dma, sizeof(*r->rinfo),
				    DMA_FROM_DEVICE);
	if (pdev && r->info_dma)
		ib_dma_unmap_single(pdev, r->info_dma, sizeof(*r->info),
				    DMA_TO_DEVICE);
	kv_side_destroy(&r->a);
	kv_side_destroy(&r->p);
	kfree(r->info);
	kfree(r->rinfo);
	kfree(r->slots);
	kfree(r->wrs);
	kfree(r->sges);
}

/* The passive side: its QP and buffer, then accept. */
static int kv_passive_accept(struct kv_run *r, const char **why)
{
	struct kv_side *p = &r->p;
	struct ib_device *dev = p->id->device;
	struct rdma_conn_param cp = {};
	int ret;

	ret = kv_side_init(r, p, IB_POLL_WORKQUEUE, 8, 4, why);
	if (ret)
		return ret;
	ret = kv_mr_alloc(p, why);
	if (ret)
		return ret;
	r->info = kzalloc(sizeof(*r->info), GFP_KERNEL);
	if (!r->info)
		return -ENOMEM;
	r->info->addr = cpu_to_le64(p->mr->iova);
	r->info->rkey = cpu_to_le32(p->mr->rkey);
	r->info->len = cpu_to_le32(p->mr->length);
	r->info_dma = ib_dma_map_single(dev, r->info, sizeof(*r->info),
					DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, r->info_dma)) {
		r->info_dma = 0;
		return -ENOMEM;
	}
	/* The responder resources the device has for the READs. */
	cp.responder_resources = min_t(u32, r->req_rd_atom,
				       dev->attrs.max_qp_rd_atom);
	cp.initiator_depth = 0;
	cp.flow_control = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	r->rd_atom = min_t(u32, r->rd_atom, max_t(u32, cp.responder_resources, 1));
	rdma_lock_handler(p->id);
	ret = rdma_accept(p->id, &cp);
	rdma_unlock_handler(p->id);
	if (ret)
		*why = "rdma_accept failed";
	return ret;
}

/* Once connected: register the buffer, then tell the active side where. */
static int kv_passive_register(struct kv_run *r, const char **why)
{
	struct kv_side *p = &r->p;
	struct ib_sge sge = {
		.addr = r->info_dma,
		.length = sizeof(*r->info),
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.wr_cqe = &r->send_cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_reg_wr reg = {
		.wr.next = &send,
		.wr.wr_cqe = &r->reg_cqe,
		.wr.opcode = IB_WR_REG_MR,
		.mr = p->mr,
		.key = p->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE,
	};
	int ret;

	ret = ib_post_send(p->id->qp, &reg.wr, NULL);
	if (ret) {
		*why = "posting the registration failed";
		return ret;
	}
	if (!wait_for_completion_timeout(&r->sent,
					 msecs_to_jiffies(KV_TIMEOUT_MS))) {
		*why = "the registration and info message did not complete";
		return -ETIMEDOUT;
	}
	if (r->setup_status)
		*why = "the registration or info message failed";
	return r->setup_status;
}

/* The active side's QP, buffer and receive of the info message. */
static int kv_active_init(struct kv_run *r, const char **why)
{
	struct kv_side *a = &r->a;
	struct ib_device *dev = a->id->device;
	struct ib_sge sge;
	struct ib_recv_wr rwr = {
		.wr_cqe = &r->recv_cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	int ret;

	ret = kv_side_init(r, a, r->poll, r->depth + 4,
			   r->depth * r->nr_wrs + 2, why);
	if (ret)
		return ret;
	/* iWARP: the sink of an RDMA READ is an MR with remote write access. */
	r->lkey = a->pd->local_dma_lkey;
	if (rdma_protocol_iwarp(dev, a->id->port_num)) {
		ret = kv_mr_alloc(a, why);
		if (ret)
			return ret;
		r->lkey = a->mr->lkey;
	}
	r->rinfo = kzalloc(sizeof(*r->rinfo), GFP_KERNEL);
	if (!r->rinfo)
		return -ENOMEM;
	r->rinfo_dma = ib_dma_map_single(dev, r->rinfo, sizeof(*r->rinfo),
					 DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(dev, r->rinfo_dma)) {
		r->rinfo_dma = 0;
		return -ENOMEM;
	}
	sge.addr = r->rinfo_dma;
	sge.length = sizeof(*r->rinfo);
	sge.lkey = a->pd->local_dma_lkey;
	ret = ib_post_recv(a->id->qp, &rwr, NULL);
	if (ret)
		*why = "posting the receive failed";
	return ret;
}

/* Register the active side's MR (iWARP only) before the READs land. */
static int kv_active_register(struct kv_run *r, const char **why)
{
	struct kv_side *a = &r->a;
	struct ib_reg_wr reg = {
		.wr.wr_cqe = &r->drain_cqe,
		.wr.opcode = IB_WR_REG_MR,
		.mr = a->mr,
		.key = a->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	int ret;

	/* Unsignalled: ordered before the operations that follow it. */
	ret = ib_post_send(a->id->qp, &reg.wr, NULL);
	if (ret)
		*why = "posting the local registration failed";
	return ret;
}

static int kv_connect(struct kv_run *r, const char **why)
{
	struct rdma_conn_param cp = {};
	struct ib_device *dev;
	int ret;

	r->listen = rdma_create_id(&init_net, kv_passive_handler, r,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(r->listen)) {
		ret = PTR_ERR(r->listen);
		r->listen = NULL;
		*why = "rdma_create_id (passive) failed";
		return ret;
	}
	ret = rdma_bind_addr(r->listen, (struct sockaddr *)&r->dst);
	if (ret) {
		*why = "rdma_bind_addr on the target address failed";
		return ret;
	}
	ret = rdma_listen(r->listen, 1);
	if (ret) {
		*why = "rdma_listen failed";
		return ret;
	}

	r->a.id = rdma_create_id(&init_net, kv_active_handler, r,
				 RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(r->a.id)) {
		ret = PTR_ERR(r->a.id);
		r->a.id = NULL;
		*why = "rdma_create_id (active) failed";
		return ret;
	}
	ret = rdma_resolve_addr(r->a.id, (struct sockaddr *)&r->src,
				(struct sockaddr *)&r->dst, KV_TIMEOUT_MS);
	if (!ret)
		ret = kv_wait(&r->a.est, &r->a);
	if (ret) {
		*why = "resolving the target address and route failed";
		return ret;
	}
	reinit_completion(&r->a.est);
	ret = kv_active_init(r, why);
	if (ret)
		return ret;

	dev = r->a.id->device;
	r->rd_atom = min_t(u32, r->depth * r->nr_wrs,
			  dev->attrs.max_qp_init_rd_atom);
	cp.initiator_depth = r->rd_atom;
	cp.responder_resources = 0;
	cp.flow_control = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	ret = rdma_connect(r->a.id, &cp);
	if (ret) {
		*why = "rdma_connect failed";
		return ret;
	}
	ret = kv_wait(&r->req, NULL);
	if (ret) {
		*why = "no connect request reached the listener";
		return ret;
	}
	ret = kv_passive_accept(r, why);
	if (ret)
		return ret;
	ret = kv_wait(&r->p.est, &r->p);
	if (!ret)
		ret = kv_wait(&r->a.est, &r->a);
	if (ret) {
		*why = "the connection was not established";
		return ret;
	}
	ret = kv_passive_register(r, why);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&r->got_info,
					 msecs_to_jiffies(KV_TIMEOUT_MS))) {
		*why = "the info message did not arrive";
		return -ETIMEDOUT;
	}
	if (r->setup_status) {
		*why = "receiving the info message failed";
		return r->setup_status;
	}
	ib_dma_sync_single_for_cpu(dev, r->rinfo_dma, sizeof(*r->rinfo),
				   DMA_FROM_DEVICE);
	r->raddr = le64_to_cpu(r->rinfo->addr);
	r->rkey = le32_to_cpu(r->rinfo->rkey);
	if (le32_to_cpu(r->rinfo->len) <
	    kv_slot_off(&r->p.buf, r, r->depth - 1) + r->size) {
		*why = "the remote buffer is too small";
		return -EINVAL;
	}
	if (r->a.mr)
		return kv_active_register(r, why);
	return 0;
}

/*
 * wait=1: this process posts one operation at a time and sleeps until it
 * completes; the latency runs to its waking up.  The operation in flight
 * when waiting fails is left to the teardown, which destroys the queue
 * pair before the slots go.
 */
static int kv_measure_wait(struct kv_run *r, const char **why)
{
	struct kv_slot *sl = &r->slots[0];
	u64 now;
	int ret;

	do {
		reinit_completion(&r->one);
		ret = kv_post(r, sl);
		if (ret) {
			*why = "posting an operation failed";
			return ret;
		}
		if (!wait_for_completion_timeout(&r->one,
						 msecs_to_jiffies(KV_TIMEOUT_MS))) {
			*why = "an operation did not complete";
			return -ETIMEDOUT;
		}
		if (r->wc_err) {
			*why = ib_wc_status_msg(r->wc_err);
			return -EIO;
		}
		now = ktime_get_ns();
		if (now < r->t_end) {
			r->ops++;
			r->lat_sum += now - sl->posted;
		}
	} while (now < r->t_end);
	return 0;
}

static int kv_measure(struct kv_run *r, const char **why)
{
	unsigned int i;
	int ret;

	r->slots = kcalloc(r->depth, sizeof(*r->slots), GFP_KERNEL);
	r->wrs = kcalloc(r->depth * r->nr_wrs, sizeof(*r->wrs), GFP_KERNEL);
	r->sges = kcalloc(r->depth * r->nr_wrs, sizeof(*r->sges), GFP_KERNEL);
	if (!r->slots || !r->wrs || !r->sges)
		return -ENOMEM;
	for (i = 0; i < r->depth; i++) {
		r->slots[i].idx = i;
		r->slots[i].cqe.done = kv_op_done;
		r->slots[i].wr = &r->wrs[i * r->nr_wrs];
		r->slots[i].sge = &r->sges[i * r->nr_wrs];
		kv_slot_init(r, &r->slots[i]);
	}
	r->t_end = ktime_get_ns() + (u64)r->ms * NSEC_PER_MSEC;
	if (r->wait)
		return kv_measure_wait(r, why);
	atomic_set(&r->inflight, r->depth);
	for (i = 0; i < r->depth; i++) {
		ret = kv_post(r, &r->slots[i]);
		if (ret) {
			*why = "posting an operation failed";
			/* Stop the others; those never posted are not in flight. */
			WRITE_ONCE(r->t_end, 0);
			if (atomic_sub_and_test(r->depth - i, &r->inflight))
				complete(&r->drained);
			wait_for_completion_timeout(&r->drained,
						    msecs_to_jiffies(KV_TIMEOUT_MS));
			return ret;
		}
	}
	if (!wait_for_completion_timeout(&r->drained,
					 msecs_to_jiffies(r->ms + KV_TIMEOUT_MS))) {
		*why = "the operations did not complete";
		return -ETIMEDOUT;
	}
	if (r->wc_err) {
		*why = ib_wc_status_msg(r->wc_err);
		return -EIO;
	}
	return 0;
}

/* ---- the debugfs file ---- */

static int kv_parse(struct kv_run *r, char *cmd, const char **why)
{
	char *src = NULL, *dst = NULL, *tok, *val;
	unsigned int port = 20886;
	char pstr[8];
	int ret;

	r->op = IB_WR_RDMA_READ;
	r->size = 4096;
	r->depth = 1;
	r->ms = 3000;
	r->poll = IB_POLL_SOFTIRQ;
	while ((tok = strsep(&cmd, " \t\n")) != NULL) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val)
			goto bad;
		*val++ = '\0';
		if (!strcmp(tok, "op") && !strcmp(val, "read")) {
			r->op = IB_WR_RDMA_READ;
		} else if (!strcmp(tok, "op") && !strcmp(val, "write")) {
			r->op = IB_WR_RDMA_WRITE;
		} else if (!strcmp(tok, "size")) {
			if (kstrtou32(val, 0, &r->size))
				goto bad;
		} else if (!strcmp(tok, "wr")) {
			if (kstrtou32(val, 0, &r->wr_bytes))
				goto bad;
		} else if (!strcmp(tok, "depth")) {
			if (kstrtou32(val, 0, &r->depth))
				goto bad;
		} else if (!strcmp(tok, "ms")) {
			if (kstrtou32(val, 0, &r->ms))
				goto bad;
		} else if (!strcmp(tok, "port")) {
			if (kstrtouint(val, 0, &port) || !port || port > 65535)
				goto bad;
		} else if (!strcmp(tok, "wait")) {
			if (kstrtobool(val, &r->wait))
				goto bad;
		} else if (!strcmp(tok, "poll") && !strcmp(val, "softirq")) {
			r->poll = IB_POLL_SOFTIRQ;
		} else if (!strcmp(tok, "poll") && !strcmp(val, "workqueue")) {
			r->poll = IB_POLL_WORKQUEUE;
		} else if (!strcmp(tok, "src")) {
			src = val;
		} else if (!strcmp(tok, "dst")) {
			dst = val;
		} else {
			goto bad;
		}
	}
	if (!src || !dst) {
		*why = "src= and dst= are needed";
		return -EINVAL;
	}
	if (!r->size || r->size > KV_MAX_CHUNK || !r->depth ||
	    r->depth > KV_MAX_DEPTH || r->ms < 100 || r->ms > KV_MAX_MS) {
		*why = "size 1..4M, depth 1..1024, ms 100..60000";
		return -EINVAL;
	}
	if (r->wait && r->depth != 1) {
		*why = "wait=1 needs depth=1";
		return -EINVAL;
	}
	if (!r->wr_bytes || r->wr_bytes > r->size)
		r->wr_bytes = r->size;
	r->nr_wrs = DIV_ROUND_UP(r->size, r->wr_bytes);
	if (r->nr_wrs > KV_MAX_WRS) {
		*why = "wr: at most 64 work requests an operation";
		return -EINVAL;
	}
	r->port = port;
	snprintf(pstr, sizeof(pstr), "%u", port);
	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, dst, pstr, &r->dst);
	if (ret) {
		*why = "dst is not an address";
		return -EINVAL;
	}
	ret = inet_pton_with_scope(&init_net, AF_UNSPEC, src, NULL, &r->src);
	if (ret) {
		*why = "src is not an address";
		return -EINVAL;
	}
	return 0;
bad:
	*why = "unknown setting";
	return -EINVAL;
}

static ssize_t kv_run_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	const char *why = "";
	struct kv_run *r;
	char *cmd;
	u64 ns;
	int ret;

	if (len > 256)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, len);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		kfree(cmd);
		return -ENOMEM;
	}
	init_completion(&r->req);
	init_completion(&r->a.est);
	init_completion(&r->p.est);
	init_completion(&r->sent);
	init_completion(&r->got_info);
	init_completion(&r->drained);
	init_completion(&r->one);
	r->reg_cqe.done = kv_setup_done;
	r->send_cqe.done = kv_setup_done;
	r->recv_cqe.done = kv_setup_done;
	r->drain_cqe.done = kv_drain_done;

	mutex_lock(&kv_lock);
	ret = kv_parse(r, cmd, &why);
	if (!ret)
		ret = kv_connect(r, &why);
	if (!ret)
		ret = kv_measure(r, &why);
	ns = (u64)r->ms * NSEC_PER_MSEC;
	if (ret)
		kv_set_result("error=%d why=\"%s\"\n", ret, why);
	else
		kv_set_result("op=%s size=%u wr=%u depth=%u ms=%u ops=%llu ns=%llu bytes=%llu lat_ns_sum=%llu rd_atom=%u poll=%s wait=%d client_dev=%s target_dev=%s\n",
			      r->op == IB_WR_RDMA_READ ? "read" : "write",
			      r->size, r->wr_bytes, r->depth, r->ms, r->ops, ns,
			      r->ops * r->size, r->lat_sum, r->rd_atom,
			      r->poll == IB_POLL_SOFTIRQ ? "softirq" : "workqueue",
			      r->wait, dev_name(&r->a.id->device->dev),
			      dev_name(&r->p.id->device->dev));
	kv_teardown(r);
	mutex_unlock(&kv_lock);
	kfree(r);
	kfree(cmd);
	return ret ? ret : len;
}

static ssize_t kv_run_read(struct file *file, char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&kv_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, kv_result,
				      strlen(kv_result));
	mutex_unlock(&kv_lock);
	return ret;
}

static const struct file_operations kv_run_fops = {
	.owner = THIS_MODULE,
	.write = kv_run_write,
	.read = kv_run_read,
	.llseek = default_llseek,
};

static int __init kv_init(void)
{
	kv_dir = debugfs_create_dir("rmbd_kverbs", NULL);
	if (IS_ERR(kv_dir))
		return PTR_ERR(kv_dir);
	debugfs_create_file("run", 0600, kv_dir, NULL, &kv_run_fops);
	return 0;
}

static void __exit kv_exit(void)
{
	debugfs_remove_recursive(kv_dir);
}

module_init(kv_init);
module_exit(kv_exit);

MODULE_DESCRIPTION("rmbd benchmark: raw RDMA READ/WRITE ceiling with kernel verbs");
MODULE_LICENSE("GPL");
