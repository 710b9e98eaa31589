// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd-liar: a userspace rmbd target that lies, for the VM tests.
 *
 * It speaks version 2 of the wire protocol (Documentation/protocol.rst) as
 * rmbd-target does, for one export of --size bytes in slabs of 2 MiB held
 * in its own memory, one after the other (slab i at mem + i * 2 MiB).  Its
 * OPEN reply has RMBD_OPEN_MAP_RANGE, and it answers RMBD_OP_MAP_RANGE as
 * well as RMBD_OP_MAP; with --no-range it does not set the flag, so that
 * its clients map slab by slab with MAP.  It tells its clients one lie,
 * chosen with --lie:
 *
 *   short-slab:N   slab N's memory region covers only its first half, but
 *                  MAP or MAP_RANGE says the whole slab: the client's every
 *                  READ or WRITE into the second half fails with a remote
 *                  access error, on every session.
 *   map-len        MAP says each slab is 4 KiB longer than it is
 *                  (--no-range only).
 *   map-slab       MAP answers for another slab than the one asked
 *                  (--no-range only).
 *   range-first    MAP_RANGE answers from another first slab than the one
 *                  asked.
 *   range-count    MAP_RANGE says it mapped one slab more than asked.
 *   range-zero     MAP_RANGE says it mapped no slab, with status 0.
 *   range-wrap     MAP_RANGE gives an address so high that the range's end
 *                  is past 2^64 (when it maps more than one slab, the
 *                  first still fits below).
 *   range-partial  no lie: MAP_RANGE maps fewer slabs than asked (1 to
 *                  count - 1 when more than one is asked), as a target may,
 *                  and the client must ask again from the first missing.
 *   slow:MS        no lie, but slow: MAP_RANGE maps one slab and answers
 *                  after MS milliseconds (within the client's 10 s for one
 *                  answer), so that mapping the export takes MS per slab.
 *   slow-again:MS  as slow:MS from the second session it opens on, the
 *                  first is answered at once: a device that connected
 *                  reconnects slowly.
 *   geometry       OPEN says one slab more than the size holds.
 *   none           no lie: a well-behaved target.
 *
 *   rmbd-liar --addr A [--port P] [--size BYTES] [--lie LIE] [--no-range]
 *             [--dump FILE] [--seconds N]
 *
 * With --dump, it writes the export's bytes to FILE when it ends, for the
 * test to see where the client's writes went.
 *
 * It listens until killed or --seconds passed, and says what happens on
 * stdout, one line each, flushed: "listening", "session ID opened",
 * "session ID ended", "slab N lied about" (once per session), "range
 * FIRST+COUNT: N" (each MAP_RANGE of COUNT slabs from FIRST it answered
 * with status 0, N slabs said mapped).  Exit status: 0 when it was stopped
 * or the time ran out, 1 on a setup failure or when it could not write
 * --dump (a reason on stderr), 2 on a usage error.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <linux/rmbd_proto.h>

#define TOOL_NAME "rmbd-liar"
#include "tool.h"

#define LIAR_SLAB_SIZE		(2ULL << 20)
#define LIAR_MAX_SLABS		64
#define LIAR_MAX_CONNS		64
#define LIAR_RECVS		4
#define LIAR_SENDS		4
#define LIAR_CQ_SIZE		(LIAR_RECVS + LIAR_SENDS + 1)
/* wr_id: sends 0..LIAR_SENDS-1, receives from LIAR_WR_RECV */
#define LIAR_WR_RECV		100

enum liar_lie {
	LIE_NONE,
	LIE_SHORT_SLAB,
	LIE_MAP_LEN,
	LIE_MAP_SLAB,
	LIE_GEOMETRY,
	LIE_RANGE_FIRST,
	LIE_RANGE_COUNT,
	LIE_RANGE_ZERO,
	LIE_RANGE_WRAP,
	LIE_RANGE_PARTIAL,
	LIE_SLOW,
	LIE_SLOW_AGAIN,
};

struct liar_conn {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_mr *mr;		/* the message buffers */
	uint8_t *bufs;			/* LIAR_SENDS sends, then the receives */
	unsigned int next_send;
	bool admin;
	bool qp;
	/* The admin queue's session */
	uint64_t session_id;
	bool opened;
	bool slow;		/* its MAP_RANGE replies are slow */
	bool lied;
	uint8_t join_key[RMBD_JOIN_KEY_LEN];
	struct ibv_mr *slab_mr[LIAR_MAX_SLABS];
};

static struct {
	const char *addr;
	const char *port;
	uint64_t size;
	uint32_t nr_slabs;
	enum liar_lie lie;
	uint32_t lie_slab;
	unsigned int slow_ms;
	unsigned int sessions;	/* opened so far */
	bool no_range;
	const char *dump;
	unsigned int seconds;

	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct ibv_context *verbs;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	uint8_t *mem;
	uint64_t export_id;
	struct liar_conn *conns[LIAR_MAX_CONNS];
} liar = { .port = "7470", .size = 8ULL << 20 };

static volatile sig_atomic_t liar_stop;



static uint8_t *send_buf(struct liar_conn *c, unsigned int i)
{
	return c->bufs + i * RMBD_MSG_SIZE;
}

static uint8_t *recv_buf(struct liar_conn *c, unsigned int i)
{
	return c->bufs + (LIAR_SENDS + i) * RMBD_MSG_SIZE;
}

static uint64_t slab_len(uint32_t i)
{
	uint64_t off = (uint64_t)i * LIAR_SLAB_SIZE;

	return liar.size - off < LIAR_SLAB_SIZE ? liar.size - off :
						  LIAR_SLAB_SIZE;
}

static int post_recv(struct liar_conn *c, unsigned int i)
{
	struct ibv_sge sge = {
		.addr	= (uintptr_t)recv_buf(c, i),
		.length	= RMBD_MSG_SIZE,
		.lkey	= c->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = LIAR_WR_RECV + i, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(c->id->qp, &wr, &bad);
}

static void conn_free(struct liar_conn *c)
{
	unsigned int i;

	if (c->admin && c->opened)
		say("session %" PRIx64 " ended", c->session_id);
	for (i = 0; i < LIAR_MAX_SLABS; i++)
		if (c->slab_mr[i])
			ibv_dereg_mr(c->slab_mr[i]);
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	rdma_destroy_id(c->id);
	free(c->bufs);
	for (i = 0; i < LIAR_MAX_CONNS; i++)
		if (liar.conns[i] == c)
			liar.conns[i] = NULL;
	free(c);
}

static struct liar_conn *find_session(uint64_t id, const uint8_t *key)
{
	unsigned int i;

	for (i = 0; i < LIAR_MAX_CONNS; i++) {
		struct liar_conn *c = liar.conns[i];

		if (c && c->admin && c->opened && c->session_id == id &&
		    !memcmp(c->join_key, key, RMBD_JOIN_KEY_LEN))
			return c;
	}
	return NULL;
}

/* Returns @id, for the caller to destroy once the event is acknowledged. */
static struct rdma_cm_id *reject(struct rdma_cm_id *id,
				 enum rmbd_cm_rej_reason r)
{
	struct rmbd_cm_rej rej = {
		.magic = htole32(RMBD_PROTO_MAGIC),
		.version = htole16(RMBD_PROTO_VERSION),
		.reason = htole16(r),
	};

	rdma_reject(id, &rej, sizeof(rej));
	return id;
}

static int setup_conn(struct liar_conn *c, bool admin)
{
	size_t len = (LIAR_SENDS + LIAR_RECVS) * RMBD_MSG_SIZE;
	struct ibv_qp_init_attr attr = { };
	unsigned int i;

	c->cq = ibv_create_cq(liar.verbs, LIAR_CQ_SIZE, NULL, NULL, 0);
	if (!c->cq)
		return -1;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	attr.cap.max_send_wr = LIAR_SENDS;
	attr.cap.max_recv_wr = LIAR_RECVS;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	attr.sq_sig_all = 1;
	if (rdma_create_qp(c->id, liar.pd, &attr))
		return -1;
	c->qp = true;
	if (!admin)
		return 0;
	c->bufs = calloc(1, len);
	if (!c->bufs)
		return -1;
	c->mr = ibv_reg_mr(liar.pd, c->bufs, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		return -1;
	for (i = 0; i < LIAR_RECVS; i++)
		if (post_recv(c, i))
			return -1;
	return 0;
}

/* Returns an id to destroy once @ev is acknowledged, or NULL. */
static struct rdma_cm_id *connect_request(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param param = { };
	struct rmbd_cm_rep rep = { };
	struct rmbd_cm_req req;
	struct liar_conn *c, *sess = NULL;
	unsigned int slot;

	if (ev->param.conn.private_data_len < sizeof(req))
		return reject(id, RMBD_REJ_INVALID);
	memcpy(&req, ev->param.conn.private_data, sizeof(req));
	if (le32toh(req.magic) != RMBD_PROTO_MAGIC)
		return reject(id, RMBD_REJ_INVALID);
	if (le16toh(req.version) != RMBD_PROTO_VERSION)
		return reject(id, RMBD_REJ_VERSION);
	if (!liar.pd) {
		liar.verbs = id->verbs;
		liar.pd = ibv_alloc_pd(id->verbs);
		if (!liar.pd || ibv_query_device(id->verbs, &liar.attr)) {
			fail("cannot allocate a protection domain");
			return reject(id, RMBD_REJ_NOMEM);
		}
	}
	if (id->verbs != liar.verbs)
		return reject(id, RMBD_REJ_DEVICE);
	if (le16toh(req.qtype) == RMBD_QUEUE_IO) {
		sess = find_session(le64toh(req.session_id), req.join_key);
		if (!sess)
			return reject(id, RMBD_REJ_SESSION);
	} else if (le16toh(req.qtype) != RMBD_QUEUE_ADMIN) {
		return reject(id, RMBD_REJ_QTYPE);
	}
	for (slot = 0; slot < LIAR_MAX_CONNS; slot++)
		if (!liar.conns[slot])
			break;
	c = slot < LIAR_MAX_CONNS ? calloc(1, sizeof(*c)) : NULL;
	if (!c)
		return reject(id, RMBD_REJ_NOMEM);
	c->id = id;
	c->admin = !sess;
	id->context = c;
	liar.conns[slot] = c;
	if (setup_conn(c, c->admin)) {
		fail("cannot set up a queue pair: %s", strerror(errno));
		liar.conns[slot] = NULL;
		id->context = NULL;
		reject(id, RMBD_REJ_NOMEM);
		if (c->qp)
			rdma_destroy_qp(id);
		if (c->mr)
			ibv_dereg_mr(c->mr);
		if (c->cq)
			ibv_destroy_cq(c->cq);
		free(c->bufs);
		free(c);
		return id;
	}
	if (c->admin)
		getrandom(&c->session_id, sizeof(c->session_id), 0);
	c->session_id |= 1;
	if (sess)
		c->session_id = sess->session_id;
	rep.magic = htole32(RMBD_PROTO_MAGIC);
	rep.version = htole16(RMBD_PROTO_VERSION);
	rep.session_id = htole64(c->session_id);
	param.private_data = &rep;
	param.private_data_len = sizeof(rep);
	param.flow_control = 1;
	param.rnr_retry_count = 7;
	param.responder_resources = ev->param.conn.responder_resources;
	if (param.responder_resources > liar.attr.max_qp_rd_atom)
		param.responder_resources = liar.attr.max_qp_rd_atom;
	if (rdma_accept(id, &param))
		fail("cannot accept: %s", strerror(errno));
	return NULL;
}

static void reply(struct liar_conn *c, const struct rmbd_msg_hdr *rq,
		  void *msg, size_t len, int status)
{
	unsigned int i = c->next_send++ % LIAR_SENDS;
	struct rmbd_msg_hdr *h = msg;
	struct ibv_sge sge = {
		.addr = (uintptr_t)send_buf(c, i), .length = len,
		.lkey = c->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	h->opcode = htole16(le16toh(rq->opcode) | RMBD_OP_REPLY);
	h->status = htole16(status);
	h->tag = rq->tag;
	memcpy(send_buf(c, i), msg, len);
	if (ibv_post_send(c->id->qp, &wr, &bad))
		fail("cannot post a reply: %s", strerror(errno));
}

static void handle_open(struct liar_conn *c, const struct rmbd_msg_hdr *h)
{
	const struct rmbd_open_req *req = (const void *)h;
	struct rmbd_open_rsp rsp = { };
	uint32_t flags = le32toh(req->flags);

	if (c->opened)
		return reply(c, h, &rsp, sizeof(rsp), EINVAL);
	rsp.size = htole64(liar.size);
	rsp.slab_size = htole64(LIAR_SLAB_SIZE);
	rsp.nr_slabs = htole32(liar.nr_slabs +
			       (liar.lie == LIE_GEOMETRY ? 1 : 0));
	rsp.export_id = htole64(liar.export_id);
	rsp.flags = htole32((flags & RMBD_OPEN_RDONLY) |
			    (liar.no_range ? 0 : RMBD_OPEN_MAP_RANGE));
	getrandom(c->join_key, sizeof(c->join_key), 0);
	memcpy(rsp.join_key, c->join_key, sizeof(rsp.join_key));
	c->opened = true;
	c->slow = liar.lie == LIE_SLOW ||
		  (liar.lie == LIE_SLOW_AGAIN && liar.sessions > 0);
	liar.sessions++;
	say("session %" PRIx64 " opened", c->session_id);
	reply(c, h, &rsp, sizeof(rsp), 0);
}

static void lied_about(struct liar_conn *c, uint32_t i)
{
	if (!c->lied) {
		say("slab %u lied about", i);
		c->lied = true;
	}
}

/* Slab @i's memory region for @c's session, registered if it is not yet. */
static struct ibv_mr *slab_mr(struct liar_conn *c, uint32_t i)
{
	uint64_t reg = slab_len(i);

	if (liar.lie == LIE_SHORT_SLAB && i == liar.lie_slab) {
		reg /= 2;
		lied_about(c, i);
	}
	if (!c->slab_mr[i])
		c->slab_mr[i] = ibv_reg_mr(liar.pd,
					   liar.mem + (uint64_t)i * LIAR_SLAB_SIZE,
					   reg, IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_READ |
					   IBV_ACCESS_REMOTE_WRITE);
	return c->slab_mr[i];
}

static void handle_map(struct liar_conn *c, const struct rmbd_msg_hdr *h)
{
	const struct rmbd_map_req *req = (const void *)h;
	struct rmbd_map_rsp rsp = { };
	uint32_t i = le32toh(req->slab);
	uint64_t len;

	if (!c->opened || i >= liar.nr_slabs)
		return reply(c, h, &rsp, sizeof(rsp), EINVAL);
	len = slab_len(i);
	if (!slab_mr(c, i))
		return reply(c, h, &rsp, sizeof(rsp), ENOMEM);
	if (liar.lie == LIE_MAP_LEN) {
		len += 4096;
		lied_about(c, i);
	}
	if (liar.lie == LIE_MAP_SLAB)
		lied_about(c, i);
	rsp.addr = htole64((uintptr_t)(liar.mem + (uint64_t)i * LIAR_SLAB_SIZE));
	rsp.len = htole64(len);
	rsp.rkey = htole32(c->slab_mr[i]->rkey);
	rsp.slab = htole32(liar.lie == LIE_MAP_SLAB ? i + 1 : i);
	reply(c, h, &rsp, sizeof(rsp), 0);
}

/*
 * RMBD_OP_MAP_RANGE, checked as rmbd-target checks it: slab i's address is
 * liar.mem + i * LIAR_SLAB_SIZE, so the slabs follow each other.
 */
static void handle_map_range(struct liar_conn *c,
			     const struct rmbd_msg_hdr *h)
{
	const struct rmbd_map_range_req *req = (const void *)h;
	struct rmbd_map_range_rsp rsp = { };
	uint32_t first = le32toh(req->first);
	uint32_t count = le32toh(req->count);
	uint64_t addr, end;
	uint32_t i, n;

	if (!c->opened || liar.no_range)
		return reply(c, h, &rsp, sizeof(rsp.hdr), EINVAL);
	if (!count || count > RMBD_MAP_RANGE_MAX)
		return reply(c, h, &rsp, sizeof(rsp.hdr), EINVAL);
	if (first >= liar.nr_slabs || count > liar.nr_slabs - first)
		return reply(c, h, &rsp, sizeof(rsp.hdr), ERANGE);
	n = count;
	/* Fewer than asked, from 1 to count - 1, varying with @first */
	if (liar.lie == LIE_RANGE_PARTIAL && count > 1)
		n = 1 + (first * 7 + 3) % (count - 1);
	if (c->slow) {
		struct timespec ts = {
			.tv_sec = liar.slow_ms / 1000,
			.tv_nsec = (liar.slow_ms % 1000) * 1000000L,
		};

		n = 1;
		while (nanosleep(&ts, &ts) && errno == EINTR && !liar_stop)
			;
		/* Stopped meanwhile: the client waits on, for nothing. */
		if (liar_stop)
			return;
	}
	for (i = 0; i < n; i++) {
		if (!slab_mr(c, first + i)) {
			if (!i)
				return reply(c, h, &rsp, sizeof(rsp.hdr),
					     ENOMEM);
			break;
		}
		rsp.rkeys[i] = htole32(c->slab_mr[first + i]->rkey);
	}
	n = i;
	addr = (uintptr_t)(liar.mem + (uint64_t)first * LIAR_SLAB_SIZE);
	switch (liar.lie) {
	case LIE_RANGE_FIRST:
		first++;
		break;
	case LIE_RANGE_COUNT:
		n = count + 1;
		break;
	case LIE_RANGE_ZERO:
		n = 0;
		break;
	case LIE_RANGE_WRAP:
		/* The range ends 4 KiB past 2^64; the first slab fits. */
		end = (uint64_t)(n - 1) * LIAR_SLAB_SIZE +
		      slab_len(first + n - 1);
		addr = 4096 - end;
		break;
	default:
		break;
	}
	if (liar.lie >= LIE_RANGE_FIRST && liar.lie <= LIE_RANGE_WRAP)
		lied_about(c, le32toh(req->first));
	rsp.addr = htole64(addr);
	rsp.first = htole32(first);
	rsp.count = htole32(n);
	say("range %u+%u: %u", le32toh(req->first), count, n);
	reply(c, h, &rsp, sizeof(rsp), 0);
}

static void handle_msg(struct liar_conn *c, unsigned int i, uint32_t len)
{
	uint8_t msg[RMBD_MSG_SIZE] = { };
	struct rmbd_msg_hdr *h = (void *)msg;

	memcpy(msg, recv_buf(c, i), len < sizeof(msg) ? len : sizeof(msg));
	if (post_recv(c, i))
		fail("cannot post a receive");
	if (len < sizeof(*h))
		return;
	switch (le16toh(h->opcode)) {
	case RMBD_OP_OPEN:
		return handle_open(c, h);
	case RMBD_OP_MAP:
		return handle_map(c, h);
	case RMBD_OP_MAP_RANGE:
		return handle_map_range(c, h);
	case RMBD_OP_KEEPALIVE:
	case RMBD_OP_CLOSE:
		return reply(c, h, msg, sizeof(*h), 0);
	default:
		return reply(c, h, msg, sizeof(*h), EOPNOTSUPP);
	}
}

static void poll_conn(struct liar_conn *c)
{
	struct ibv_wc wc[LIAR_CQ_SIZE];
	int n, i;

	if (!c->cq)
		return;
	while ((n = ibv_poll_cq(c->cq, LIAR_CQ_SIZE, wc)) > 0) {
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id < LIAR_WR_RECV)
				continue;
			handle_msg(c, wc[i].wr_id - LIAR_WR_RECV,
				   wc[i].byte_len);
		}
	}
}

static void handle_cm(struct rdma_cm_event *ev)
{
	struct liar_conn *c = ev->id->context;
	enum rdma_cm_event_type type = ev->event;

	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		struct rdma_cm_id *gone = connect_request(ev);

		rdma_ack_cm_event(ev);
		if (gone)
			rdma_destroy_id(gone);
		return;
	}
	rdma_ack_cm_event(ev);
	if (!c)
		return;
	switch (type) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rdma_disconnect(c->id);
		conn_free(c);
		break;
	default:
		break;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	liar_stop = 1;
}

static int parse_lie(const char *s)
{
	char *end;

	if (!strcmp(s, "none"))
		liar.lie = LIE_NONE;
	else if (!strcmp(s, "map-len"))
		liar.lie = LIE_MAP_LEN;
	else if (!strcmp(s, "map-slab"))
		liar.lie = LIE_MAP_SLAB;
	else if (!strcmp(s, "geometry"))
		liar.lie = LIE_GEOMETRY;
	else if (!strcmp(s, "range-first"))
		liar.lie = LIE_RANGE_FIRST;
	else if (!strcmp(s, "range-count"))
		liar.lie = LIE_RANGE_COUNT;
	else if (!strcmp(s, "range-zero"))
		liar.lie = LIE_RANGE_ZERO;
	else if (!strcmp(s, "range-wrap"))
		liar.lie = LIE_RANGE_WRAP;
	else if (!strcmp(s, "range-partial"))
		liar.lie = LIE_RANGE_PARTIAL;
	else if (!strncmp(s, "short-slab:", 11)) {
		liar.lie = LIE_SHORT_SLAB;
		errno = 0;
		liar.lie_slab = strtoul(s + 11, &end, 0);
		if (errno || *end || end == s + 11)
			return -1;
	} else if (!strncmp(s, "slow:", 5) || !strncmp(s, "slow-again:", 11)) {
		liar.lie = s[4] == ':' ? LIE_SLOW : LIE_SLOW_AGAIN;
		s = strchr(s, ':') + 1;
		errno = 0;
		liar.slow_ms = strtoul(s, &end, 0);
		if (errno || *end || end == s || liar.slow_ms > 60000)
			return -1;
	} else {
		return -1;
	}
	return 0;
}

/* The export's bytes into liar.dump, once every session has ended. */
static int dump_mem(void)
{
	FILE *f = fopen(liar.dump, "w");
	int ret = 0;

	if (!f)
		return fail("cannot create %s: %s", liar.dump, strerror(errno));
	if (fwrite(liar.mem, 1, liar.size, f) != liar.size)
		ret = fail("cannot write %s: %s", liar.dump, strerror(errno));
	if (fclose(f) && !ret)
		ret = fail("cannot write %s: %s", liar.dump, strerror(errno));
	return ret;
}

static int listen_on(void)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai;
	int ret;

	ret = getaddrinfo(liar.addr, liar.port, &hints, &ai);
	if (ret)
		return fail("bad address %s port %s: %s", liar.addr, liar.port,
			    gai_strerror(ret));
	liar.ch = rdma_create_event_channel();
	if (!liar.ch ||
	    rdma_create_id(liar.ch, &liar.listen_id, NULL, RDMA_PS_TCP)) {
		freeaddrinfo(ai);
		return fail("cannot create an rdma_cm id: %s", strerror(errno));
	}
	ret = rdma_bind_addr(liar.listen_id, ai->ai_addr);
	freeaddrinfo(ai);
	if (ret || rdma_listen(liar.listen_id, 16))
		return fail("cannot listen on %s port %s: %s", liar.addr,
			    liar.port, strerror(errno));
	if (nonblock(liar.ch->fd))
		return fail("cannot make the event channel non-blocking");
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: rmbd-liar --addr A [--port P] [--size BYTES] [--lie LIE]\n"
	      "                 [--no-range] [--dump FILE] [--seconds N]\n"
	      "LIE: none, short-slab:N, map-len, map-slab (with --no-range),\n"
	      "     range-first, range-count, range-zero, range-wrap,\n"
	      "     range-partial, slow:MS, slow-again:MS (without --no-range),\n"
	      "     geometry\n", f);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "lie", required_argument, NULL, 'l' },
		{ "no-range", no_argument, NULL, 'n' },
		{ "dump", required_argument, NULL, 'd' },
		{ "seconds", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct sigaction sa = { .sa_handler = on_signal };
	struct rdma_cm_event *ev;
	time_t deadline = 0;
	unsigned int i;
	char *end;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			liar.addr = optarg;
			break;
		case 'p':
			liar.port = optarg;
			break;
		case 's':
			errno = 0;
			liar.size = strtoull(optarg, &end, 0);
			if (errno || *end || !liar.size || liar.size % 4096 ||
			    liar.size > LIAR_MAX_SLABS * LIAR_SLAB_SIZE) {
				fprintf(stderr, "rmbd-liar: bad --size %s\n",
					optarg);
				return 2;
			}
			break;
		case 'l':
			if (parse_lie(optarg)) {
				fprintf(stderr, "rmbd-liar: bad --lie %s\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			liar.no_range = true;
			break;
		case 'd':
			liar.dump = optarg;
			break;
		case 't':
			liar.seconds = strtoul(optarg, NULL, 0);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!liar.addr || optind != argc) {
		usage(stderr);
		return 2;
	}
	liar.nr_slabs = (liar.size + LIAR_SLAB_SIZE - 1) / LIAR_SLAB_SIZE;
	/* A lie the client would never hear is a test that proves nothing. */
	if ((liar.lie == LIE_MAP_LEN || liar.lie == LIE_MAP_SLAB) &&
	    !liar.no_range) {
		fprintf(stderr, "rmbd-liar: --lie map-len and map-slab need --no-range\n");
		return 2;
	}
	if (liar.lie >= LIE_RANGE_FIRST && liar.no_range) {
		fprintf(stderr, "rmbd-liar: the range lies need MAP_RANGE: no --no-range\n");
		return 2;
	}
	if (liar.lie == LIE_SHORT_SLAB && liar.lie_slab >= liar.nr_slabs) {
		fprintf(stderr, "rmbd-liar: no slab %u\n", liar.lie_slab);
		return 2;
	}
	liar.mem = aligned_alloc(4096, liar.size);
	if (!liar.mem)
		return fail("out of memory");
	memset(liar.mem, 0, liar.size);
	getrandom(&liar.export_id, sizeof(liar.export_id), 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (listen_on())
		return 1;
	say("listening");
	if (liar.seconds)
		deadline = time(NULL) + liar.seconds;
	while (!liar_stop && (!deadline || time(NULL) < deadline)) {
		struct pollfd pfd = { .fd = liar.ch->fd, .events = POLLIN };

		poll(&pfd, 1, 1);
		while (!rdma_get_cm_event(liar.ch, &ev))
			handle_cm(ev);
		for (i = 0; i < LIAR_MAX_CONNS; i++)
			if (liar.conns[i])
				poll_conn(liar.conns[i]);
	}
	for (i = 0; i < LIAR_MAX_CONNS; i++) {
		if (liar.conns[i]) {
			rdma_disconnect(liar.conns[i]->id);
			conn_free(liar.conns[i]);
		}
	}
	rdma_destroy_id(liar.listen_id);
	if (liar.pd)
		ibv_dealloc_pd(liar.pd);
	rdma_destroy_event_channel(liar.ch);
	ret = liar.dump ? dump_mem() : 0;
	free(liar.mem);
	return ret;
}
