// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd-peer: a userspace client of an rmbd target, for the VM tests.
 *
 * It speaks version 2 of the wire protocol (Documentation/protocol.rst) on
 * an admin queue, as rmbd-client does, and runs a list of steps taken from
 * the table below: connect, OPEN, MAP, keepalives, CLOSE, or silence.  A
 * test says what the peer does and checks what the target did about it:
 *
 *   rmbd-peer --addr A [--port P] --export NAME [--map] \
 *             --open-then silent|keepalive|close [--seconds N]
 *   rmbd-peer --addr A --export NAME --do connect,open,map:0,ping,silent
 *
 * What it learns and what happened go to stdout, one line each, flushed:
 *
 *   session ID                    the target accepted; ID in hex
 *   opened size S slab_size B nr_slabs N session_timeout_ms T export_id X
 *   mapped slab I addr A len L rkey K
 *   read slab I off O: ok         an RDMA READ (write: WRITE) of 4 KiB at
 *   read slab I off O: STATUS     offset O of a mapped slab, and how it
 *                                 ended (the work completion's status)
 *   holder H                      the host an OPEN refused as busy named
 *   silent-since-us US            realtime (us since the epoch) of the
 *                                 last message sent, when the peer falls
 *                                 silent
 *   keepalive-interval-ms MS      when it keeps the session alive
 *   keepalives N                  how many were answered, at the end
 *   ended-by WHAT                 the CM event or QP error that ended the
 *                                 connection
 *   disconnected-after-ms MS      the connection ended MS ms after the last
 *                                 message the peer sent
 *   still-connected               the time was up, the connection still there
 *
 * Exit status: 0 when the last step saw what it expects (silent: the target
 * ends the session within --seconds; keepalive: it does not), 1 on a
 * protocol or setup failure (a reason on stderr), 2 on a usage error, 3 when
 * a step saw the other outcome.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/if_alg.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <linux/rmbd_proto.h>

#define TOOL_NAME "rmbd-peer"
#include "tool.h"

/* As rmbd-client (kmod/client/queue.c) does. */
#define PEER_RESOLVE_MS		5000
#define PEER_CM_TIMEOUT_MS	15000
#define PEER_ADMIN_TIMEOUT_MS	10000
#define PEER_ACK_TIMEOUT	16
#define PEER_RETRY_COUNT	6
#define PEER_RD_ATOM		16
#define PEER_ADMIN_DEPTH	2

/* Receives kept posted: the target answers one request at a time. */
#define PEER_RECVS		4
/* SEND, +1 for luck */
#define PEER_SEND_WR		2
#define PEER_CQ_SIZE		(PEER_SEND_WR + PEER_RECVS + 1)
/* wr_id of the one send buffer; receive i has PEER_WR_RECV + i */
#define PEER_WR_SEND		0
#define PEER_WR_RECV		1
#define PEER_WR_RDMA		1000
/* Bytes one read or write step moves; slabs it remembers. */
#define PEER_RDMA_LEN		4096
#define PEER_MAX_MAPS		64

/* Geometry limits a client accepts (kmod/common/proto.h). */
#define PEER_MAX_EXPORT_SIZE	(1ULL << 50)
#define PEER_MIN_SLAB_SIZE	(2ULL << 20)
#define PEER_MAX_SLAB_SIZE	(1ULL << 30)
#define PEER_MAX_SLABS		(1U << 20)
#define PEER_MAX_WIRE_ERRNO	133

/* The IB CM reject reason of a reject by the listener's owner (ib_cm.h). */
#define PEER_REJ_CONSUMER_DEFINED	28

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

enum {
	PEER_OK		= 0,
	PEER_FAIL	= 1,
	PEER_USAGE	= 2,
	PEER_OTHER	= 3,
};

/* What xfer() returns besides 0 and the errno of a refusal. */
enum {
	XFER_FAIL	= -1,	/* said why on stderr */
	XFER_ENDED	= -2,	/* the connection ended first */
};

struct peer {
	/* options */
	const char *addr;
	const char *port;
	const char *export;
	const char *host;		/* --host; NULL: none */
	uint8_t secret[RMBD_SECRET_MAX];	/* --secret-file */
	size_t secret_len;
	unsigned int seconds;
	long interval_ms;		/* < 0: a third of the timeout */
	uint32_t open_flags;		/* --open-flags */

	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	bool cq_armed;
	bool qp_created;
	bool connected;			/* established, not ended */
	bool established;
	uint8_t *bufs;			/* send buffer, then the receives */

	/* the last CM event of the connect, with its private data */
	bool cm_seen;
	enum rdma_cm_event_type cm_event;
	int cm_status;
	uint8_t cm_data[256];
	uint8_t cm_len;

	/* the admin exchange in flight */
	bool awaiting;
	bool send_done;
	int reply;			/* receive that holds the reply, or -1 */
	uint32_t reply_len;
	const char *proto_error;

	uint64_t session_id;
	uint32_t tag;
	uint64_t size;
	uint64_t slab_size;
	uint32_t nr_slabs;
	uint32_t timeout_ms;
	uint64_t export_id;
	bool opened;
	bool auth;			/* the OPEN reply asked for AUTH */
	const char *opened_name;	/* the export OPEN opened */
	uint8_t nc[RMBD_CHALLENGE_LEN];	/* our challenge */
	uint8_t nt[RMBD_CHALLENGE_LEN];	/* the target's */
	uint8_t join_key[RMBD_JOIN_KEY_LEN];	/* from the OPEN reply */
	/* Step "pair": replies counted, not matched to one request. */
	bool counting;
	unsigned int counted, sends_done;
	uint32_t counted_tag;
	uint16_t counted_op, counted_status;
	struct rdma_cm_id *ioq_id;	/* the I/O queue "ioq" joined */

	uint64_t last_sent_ns;		/* CLOCK_MONOTONIC */
	uint64_t last_sent_us;		/* CLOCK_REALTIME */
	const char *ended;		/* what ended the connection */
	char ended_buf[64];
	uint64_t ended_ns;
	unsigned int keepalives;

	/* The slabs MAP gave, for the read and write steps. */
	struct {
		uint64_t addr, len;
		uint32_t rkey;
		bool mapped;
	} maps[PEER_MAX_MAPS];
	uint8_t *data;			/* PEER_RDMA_LEN bytes */
	struct ibv_mr *data_mr;
	bool rdma_done;
	enum ibv_wc_status rdma_status;
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}


#define xfer_fail(...)	(fail(__VA_ARGS__), XFER_FAIL)


static uint8_t *send_buf(struct peer *p)
{
	return p->bufs;
}

static uint8_t *recv_buf(struct peer *p, int i)
{
	return p->bufs + (1 + i) * RMBD_MSG_SIZE;
}

static void note_end(struct peer *p, const char *what)
{
	if (p->ended)
		return;
	snprintf(p->ended_buf, sizeof(p->ended_buf), "%s", what);
	p->ended = p->ended_buf;
	p->ended_ns = mono_ns();
}

static int post_recv(struct peer *p, int i)
{
	struct ibv_sge sge = {
		.addr	= (uintptr_t)recv_buf(p, i),
		.length	= RMBD_MSG_SIZE,
		.lkey	= p->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id		= PEER_WR_RECV + i,
		.sg_list	= &sge,
		.num_sge	= 1,
	}, *bad;

	return ibv_post_recv(p->id->qp, &wr, &bad);
}

static void handle_wc(struct peer *p, const struct ibv_wc *wc)
{
	int i = (int)wc->wr_id - PEER_WR_RECV;

	if (wc->wr_id == PEER_WR_RDMA) {
		p->rdma_done = true;
		p->rdma_status = wc->status;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		char what[64];

		/* A flush follows whatever ended the connection first. */
		snprintf(what, sizeof(what), "QP error: %s",
			 ibv_wc_status_str(wc->status));
		note_end(p, what);
		return;
	}
	if (wc->wr_id == PEER_WR_SEND) {
		p->send_done = true;
		p->sends_done++;
		return;
	}
	if (wc->wr_id == PEER_WR_RDMA)
		return;
	if (i < 0 || i >= PEER_RECVS) {
		p->proto_error = "completion of an unknown work request";
		return;
	}
	if (p->counting && wc->byte_len >= sizeof(struct rmbd_msg_hdr)) {
		const struct rmbd_msg_hdr *h =
			(const struct rmbd_msg_hdr *)recv_buf(p, i);

		if (p->counted++ && le32toh(h->tag) != p->counted_tag)
			p->proto_error = "the replies carry different tags";
		p->counted_tag = le32toh(h->tag);
		p->counted_op = le16toh(h->opcode);
		p->counted_status = le16toh(h->status);
		if (post_recv(p, i))
			note_end(p, "QP error: cannot post a receive");
		return;
	}
	if (!p->awaiting)
		p->proto_error = "the target sent a message nobody asked for";
	else if (p->reply >= 0)
		p->proto_error = "the target sent two replies to one request";
	if (p->proto_error) {
		if (post_recv(p, i))
			note_end(p, "QP error: cannot post a receive");
		return;
	}
	p->reply = i;
	p->reply_len = wc->byte_len;
}

static int drain_cq(struct peer *p)
{
	struct ibv_wc wc[PEER_CQ_SIZE];
	int i, n;

	while ((n = ibv_poll_cq(p->cq, PEER_CQ_SIZE, wc)) > 0)
		for (i = 0; i < n; i++)
			handle_wc(p, &wc[i]);
	return n < 0 ? fail("ibv_poll_cq failed") : 0;
}

static void handle_cm(struct peer *p, struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		if (p->connected) {
			note_end(p, rdma_event_str(ev->event));
			return;
		}
		break;
	default:
		break;
	}
	p->cm_seen = true;
	p->cm_event = ev->event;
	p->cm_status = ev->status;
	p->cm_len = 0;
	if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
		p->cm_len = ev->param.conn.private_data_len;
		memcpy(p->cm_data, ev->param.conn.private_data, p->cm_len);
	}
}

/*
 * Wait up to @ms for CM events, completions and asynchronous events and
 * handle what came.  Nothing here ends the program: the callers look at
 * what changed.
 */
static int pump(struct peer *p, int ms)
{
	struct pollfd fds[3] = {
		{ .fd = p->ch->fd, .events = POLLIN },
		{ .fd = p->cc ? p->cc->fd : -1, .events = POLLIN },
		{ .fd = p->pd ? p->id->verbs->async_fd : -1, .events = POLLIN },
	};
	struct rdma_cm_event *ev;
	int n;

	n = poll(fds, 3, ms < 0 ? 0 : ms);
	if (n < 0 && errno != EINTR)
		return fail("poll failed: %s", strerror(errno));
	if (n <= 0)
		return 0;
	while (fds[0].revents && !rdma_get_cm_event(p->ch, &ev)) {
		handle_cm(p, ev);
		rdma_ack_cm_event(ev);
	}
	if (fds[1].revents) {
		struct ibv_cq *cq;
		void *ctx;

		while (!ibv_get_cq_event(p->cc, &cq, &ctx)) {
			ibv_ack_cq_events(cq, 1);
			p->cq_armed = false;
		}
		if (!p->cq_armed) {
			if (ibv_req_notify_cq(p->cq, 0))
				return fail("ibv_req_notify_cq failed");
			p->cq_armed = true;
		}
	}
	if (p->cq && drain_cq(p))
		return PEER_FAIL;
	if (fds[2].revents) {
		struct ibv_async_event aev;

		while (!ibv_get_async_event(p->id->verbs, &aev)) {
			if (aev.event_type == IBV_EVENT_QP_FATAL ||
			    aev.event_type == IBV_EVENT_QP_REQ_ERR ||
			    aev.event_type == IBV_EVENT_QP_ACCESS_ERR ||
			    aev.event_type == IBV_EVENT_DEVICE_FATAL ||
			    aev.event_type == IBV_EVENT_PORT_ERR)
				note_end(p, ibv_event_type_str(aev.event_type));
			ibv_ack_async_event(&aev);
		}
	}
	return 0;
}

static int ms_left(uint64_t deadline_ns)
{
	uint64_t now = mono_ns();

	if (now >= deadline_ns)
		return 0;
	/* Round up: never wake early and spin. */
	return (int)((deadline_ns - now + 999999) / 1000000);
}


/* Wait for the CM event @want of the connect's current step. */
static int wait_cm(struct peer *p, enum rdma_cm_event_type want,
		   int timeout_ms, const char *step)
{
	uint64_t deadline = mono_ns() + (uint64_t)timeout_ms * 1000000;
	int ms;

	p->cm_seen = false;
	while (!p->cm_seen) {
		ms = ms_left(deadline);
		if (!ms)
			return fail("%s: no answer within %d ms", step,
				    timeout_ms);
		if (pump(p, ms))
			return PEER_FAIL;
	}
	if (p->cm_event == want)
		return 0;
	if (p->cm_event == RDMA_CM_EVENT_REJECTED) {
		struct rmbd_cm_rej rej;

		if (p->cm_status != PEER_REJ_CONSUMER_DEFINED ||
		    p->cm_len < sizeof(rej))
			return fail("%s: rejected with reason %d, not by an rmbd target (nothing listening on that port?)",
				    step, p->cm_status);
		memcpy(&rej, p->cm_data, sizeof(rej));
		if (le32toh(rej.magic) != RMBD_PROTO_MAGIC)
			return fail("%s: rejected by a peer that is not an rmbd target",
				    step);
		return fail("%s: rejected, reason %u, target speaks up to version %u",
			    step, le16toh(rej.reason), le16toh(rej.version));
	}
	return fail("%s: %s (status %d)", step, rdma_event_str(p->cm_event),
		    p->cm_status);
}

static int setup_queue(struct peer *p)
{
	struct ibv_qp_init_attr attr = { };
	size_t len = (1 + PEER_RECVS) * RMBD_MSG_SIZE;
	int i;

	p->pd = ibv_alloc_pd(p->id->verbs);
	if (!p->pd)
		return fail("cannot allocate a protection domain");
	if (nonblock(p->id->verbs->async_fd))
		return fail("cannot make the async event fd non-blocking");
	p->cc = ibv_create_comp_channel(p->id->verbs);
	if (!p->cc || nonblock(p->cc->fd))
		return fail("cannot create a completion channel");
	p->cq = ibv_create_cq(p->id->verbs, PEER_CQ_SIZE, NULL, p->cc, 0);
	if (!p->cq)
		return fail("cannot create a completion queue");
	if (ibv_req_notify_cq(p->cq, 0))
		return fail("ibv_req_notify_cq failed");
	p->cq_armed = true;

	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	attr.cap.max_send_wr = PEER_SEND_WR;
	attr.cap.max_recv_wr = PEER_RECVS;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	if (rdma_create_qp(p->id, p->pd, &attr))
		return fail("cannot create a queue pair: %s", strerror(errno));
	p->qp_created = true;

	p->bufs = calloc(1, len);
	if (!p->bufs)
		return fail("out of memory");
	p->mr = ibv_reg_mr(p->pd, p->bufs, len, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return fail("cannot register the message buffers");
	for (i = 0; i < PEER_RECVS; i++)
		if (post_recv(p, i))
			return fail("cannot post a receive");
	return 0;
}

/* Resolve @dst's address and a route to it for @id; @what prefixes errors. */
static int resolve(struct peer *p, struct rdma_cm_id *id, struct sockaddr *dst,
		   const char *what)
{
	char step[64];

	if (rdma_resolve_addr(id, NULL, dst, PEER_RESOLVE_MS))
		return fail("%scannot resolve the target address: %s", what,
			    strerror(errno));
	snprintf(step, sizeof(step), "%saddress resolution", what);
	if (wait_cm(p, RDMA_CM_EVENT_ADDR_RESOLVED, PEER_CM_TIMEOUT_MS, step))
		return PEER_FAIL;
	if (rdma_resolve_route(id, PEER_RESOLVE_MS))
		return fail("%scannot resolve a route: %s", what,
			    strerror(errno));
	snprintf(step, sizeof(step), "%sroute resolution", what);
	if (wait_cm(p, RDMA_CM_EVENT_ROUTE_RESOLVED, PEER_CM_TIMEOUT_MS, step))
		return PEER_FAIL;
	return 0;
}

/*
 * How "connect:HOW" spoils the connect request's private data: none at
 * all, too short, a wrong magic, version or queue type, a zero depth, an
 * I/O queue of a session that does not exist, or valid data followed by
 * bytes the target must ignore ("long": accepted).
 */
static int spoil_cm_req(const char *how, struct rmbd_cm_req *req,
			uint8_t *len)
{
	if (!how)
		return 0;
	if (!strcmp(how, "none"))
		*len = 0;
	else if (!strcmp(how, "short"))
		*len = 6;	/* IB and RoCE pad it with zeros to 56 */
	else if (!strcmp(how, "magic"))
		req->magic = htole32(RMBD_PROTO_MAGIC ^ 1);
	else if (!strcmp(how, "version"))
		req->version = htole16(RMBD_PROTO_VERSION + 7);
	else if (!strcmp(how, "qtype"))
		req->qtype = htole16(9);
	else if (!strcmp(how, "depth"))
		req->queue_depth = 0;
	else if (!strcmp(how, "ioq")) {
		req->qtype = htole16(RMBD_QUEUE_IO);
		req->session_id = htole64(0x5eed5eed5eed5eedULL);
	} else if (!strcmp(how, "long"))
		*len = 56;
	else
		return fail("connect: unknown way '%s'", how);
	return 0;
}

/* Step "connect[:HOW]": the admin queue, as rmbd-client connects it. */
static int act_connect(struct peer *p, const char *arg)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	}, *ai;
	struct rdma_conn_param param = { };
	struct ibv_device_attr dattr;
	uint8_t data[56] = { 0 }, len = sizeof(struct rmbd_cm_req);
	struct rmbd_cm_req req = { };
	struct rmbd_cm_rep rep;
	uint8_t ack = PEER_ACK_TIMEOUT;
	int ret;

	if (p->id)
		return fail("connect: already connected");
	ret = getaddrinfo(p->addr, p->port, &hints, &ai);
	if (ret)
		return fail("cannot resolve %s port %s: %s", p->addr, p->port,
			    gai_strerror(ret));
	if (rdma_create_id(p->ch, &p->id, p, RDMA_PS_TCP)) {
		freeaddrinfo(ai);
		return fail("rdma_create_id failed: %s", strerror(errno));
	}
	ret = resolve(p, p->id, ai->ai_addr, "");
	freeaddrinfo(ai);
	if (ret)
		return ret;
	if (setup_queue(p))
		return PEER_FAIL;
	if (ibv_query_device(p->id->verbs, &dattr))
		return fail("cannot query the RDMA device");
	if (rdma_set_option(p->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			    &ack, sizeof(ack)))
		return fail("cannot set the ACK timeout: %s", strerror(errno));

	req.magic = htole32(RMBD_PROTO_MAGIC);
	req.version = htole16(RMBD_PROTO_VERSION);
	req.qtype = htole16(RMBD_QUEUE_ADMIN);
	req.qid = 0;
	req.queue_depth = htole16(PEER_ADMIN_DEPTH);
	req.session_id = 0;
	if (spoil_cm_req(arg, &req, &len))
		return PEER_FAIL;
	memcpy(data, &req, sizeof(req));
	memset(data + sizeof(req), 0xa5, sizeof(data) - sizeof(req));
	param.private_data = len ? data : NULL;
	param.private_data_len = len;
	param.flow_control = 1;
	param.retry_count = PEER_RETRY_COUNT;
	param.rnr_retry_count = 7;
	param.initiator_depth = dattr.max_qp_init_rd_atom < PEER_RD_ATOM ?
				dattr.max_qp_init_rd_atom : PEER_RD_ATOM;
	/* The target's session timeout runs from the connect request on. */
	p->last_sent_ns = mono_ns();
	p->last_sent_us = now_ns(CLOCK_REALTIME) / 1000;
	if (rdma_connect(p->id, &param))
		return fail("cannot send the connect request: %s",
			    strerror(errno));
	if (wait_cm(p, RDMA_CM_EVENT_ESTABLISHED, PEER_CM_TIMEOUT_MS,
		    "connect"))
		return PEER_FAIL;

	/* rmbd_check_cm_rep() */
	if (p->cm_len < sizeof(rep))
		return fail("connect: accept with %u bytes of private data, expected %zu",
			    p->cm_len, sizeof(rep));
	memcpy(&rep, p->cm_data, sizeof(rep));
	if (le32toh(rep.magic) != RMBD_PROTO_MAGIC ||
	    le16toh(rep.version) != RMBD_PROTO_VERSION || !rep.session_id)
		return fail("connect: invalid accept (magic %#x, version %u, session %#" PRIx64 ")",
			    le32toh(rep.magic), le16toh(rep.version),
			    (uint64_t)le64toh(rep.session_id));
	p->session_id = le64toh(rep.session_id);
	p->connected = true;
	p->established = true;
	say("session %" PRIx64, p->session_id);
	return 0;
}

/*
 * Step "ioq[:KEY]": join I/O queue 0 to the session, as rmbd-client does,
 * with the join key of the OPEN reply ("right", the default), another
 * one ("wrong") or none ("none").  Prints "ioq 0 joined"; a refusal
 * fails the step with its reason.
 */
static int act_ioq(struct peer *p, const char *arg)
{
	struct ibv_qp_init_attr attr = { };
	struct rdma_conn_param param = { };
	uint8_t data[56] = { 0 };
	struct rmbd_cm_req req = { };
	struct rdma_cm_id *id;

	if (!p->id || !p->pd)
		return fail("ioq: connect first");
	if (p->ioq_id)
		return fail("ioq: joined already");
	if (rdma_create_id(p->ch, &id, p, RDMA_PS_TCP))
		return fail("rdma_create_id failed: %s", strerror(errno));
	p->ioq_id = id;
	if (resolve(p, id, rdma_get_peer_addr(p->id), "ioq: "))
		return PEER_FAIL;
	if (id->verbs != p->id->verbs)
		return fail("ioq: resolved to another RDMA device");
	/* Nothing is posted on it: the admin queue's CQ will do. */
	attr.send_cq = p->cq;
	attr.recv_cq = p->cq;
	attr.cap.max_send_wr = 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.qp_type = IBV_QPT_RC;
	if (rdma_create_qp(id, p->pd, &attr))
		return fail("ioq: cannot create a queue pair: %s",
			    strerror(errno));

	req.magic = htole32(RMBD_PROTO_MAGIC);
	req.version = htole16(RMBD_PROTO_VERSION);
	req.qtype = htole16(RMBD_QUEUE_IO);
	req.qid = 0;
	req.queue_depth = htole16(16);
	req.session_id = htole64(p->session_id);
	if (!arg || !strcmp(arg, "right")) {
		memcpy(req.join_key, p->join_key, sizeof(req.join_key));
	} else if (!strcmp(arg, "wrong")) {
		memcpy(req.join_key, p->join_key, sizeof(req.join_key));
		req.join_key[RMBD_JOIN_KEY_LEN - 1] ^= 1;
	} else if (strcmp(arg, "none")) {
		return fail("ioq: unknown key '%s'", arg);
	}
	memcpy(data, &req, sizeof(req));
	param.private_data = data;
	param.private_data_len = sizeof(req);
	param.flow_control = 1;
	param.retry_count = PEER_RETRY_COUNT;
	param.rnr_retry_count = 7;
	param.initiator_depth = 1;
	if (rdma_connect(id, &param))
		return fail("ioq: cannot send the connect request: %s",
			    strerror(errno));
	if (wait_cm(p, RDMA_CM_EVENT_ESTABLISHED, PEER_CM_TIMEOUT_MS, "ioq"))
		return PEER_FAIL;
	say("ioq 0 joined");
	return 0;
}

static const char *op_name(uint16_t op)
{
	switch (op) {
	case RMBD_OP_OPEN:
		return "OPEN";
	case RMBD_OP_MAP:
		return "MAP";
	case RMBD_OP_CLOSE:
		return "CLOSE";
	case RMBD_OP_KEEPALIVE:
		return "KEEPALIVE";
	case RMBD_OP_AUTH:
		return "AUTH";
	default:
		return "request";
	}
}

/*
 * Send the @len bytes of the send buffer as request @op and wait for the
 * reply, which is checked as rmbd_check_reply() does and copied to @rsp
 * (RMBD_MSG_SIZE bytes); a successful one must have @rsp_len bytes.
 * Returns 0, the errno the target answered with (> 0), XFER_ENDED, or
 * XFER_FAIL after saying why.
 */
static int xfer(struct peer *p, uint16_t op, size_t len, void *rsp,
		size_t rsp_len)
{
	struct rmbd_msg_hdr *hdr = (struct rmbd_msg_hdr *)send_buf(p);
	struct ibv_sge sge = {
		.addr	= (uintptr_t)send_buf(p),
		.length	= len,
		.lkey	= p->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id		= PEER_WR_SEND,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IBV_WR_SEND,
		.send_flags	= IBV_SEND_SIGNALED,
	}, *bad;
	const struct rmbd_msg_hdr *r;
	uint64_t deadline;
	uint16_t status;
	int ms, i;

	if (!p->connected)
		return xfer_fail("%s: not connected", op_name(op));
	hdr->opcode = htole16(op);
	hdr->status = 0;
	hdr->tag = htole32(++p->tag);
	p->awaiting = true;
	p->send_done = false;
	p->reply = -1;
	/* Before the post: the target cannot have heard it any earlier. */
	p->last_sent_ns = mono_ns();
	p->last_sent_us = now_ns(CLOCK_REALTIME) / 1000;
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return xfer_fail("%s: cannot post the send", op_name(op));
	deadline = p->last_sent_ns + PEER_ADMIN_TIMEOUT_MS * 1000000ULL;
	while (!p->send_done || p->reply < 0) {
		if (p->proto_error)
			return xfer_fail("%s: %s", op_name(op), p->proto_error);
		if (p->ended) {
			/*
			 * A target that refuses and then ends the session
			 * sent its reply first: it may wait in the CQ.  The
			 * reply shows the request arrived, even when the end
			 * flushed our send before its ACK was processed
			 * (rxe's completer drops the ACK of a QP that went
			 * to the error state meanwhile).
			 */
			if (drain_cq(p))
				return XFER_FAIL;
			if (p->reply >= 0)
				break;
			return XFER_ENDED;
		}
		ms = ms_left(deadline);
		if (!ms)
			return xfer_fail("%s: target did not answer within %d ms",
				     op_name(op), PEER_ADMIN_TIMEOUT_MS);
		if (pump(p, ms))
			return XFER_FAIL;
	}
	p->awaiting = false;
	i = p->reply;
	len = p->reply_len;
	memcpy(rsp, recv_buf(p, i), RMBD_MSG_SIZE);
	p->reply = -1;
	if (post_recv(p, i))
		return xfer_fail("cannot post a receive");

	r = rsp;
	if (len < sizeof(*r) || len > RMBD_MSG_SIZE)
		return xfer_fail("%s: reply of %zu bytes", op_name(op), len);
	if (le16toh(r->opcode) != (op | RMBD_OP_REPLY) ||
	    le32toh(r->tag) != p->tag)
		return xfer_fail("%s: reply with opcode %#x tag %u, expected %#x tag %u",
			     op_name(op), le16toh(r->opcode), le32toh(r->tag),
			     op | RMBD_OP_REPLY, p->tag);
	status = le16toh(r->status);
	if (status > PEER_MAX_WIRE_ERRNO)
		return xfer_fail("%s: reply with status %u", op_name(op), status);
	if (status)
		return status;
	if (len < rsp_len)
		return xfer_fail("%s: successful reply of %zu bytes, expected %zu",
			     op_name(op), len, rsp_len);
	return 0;
}

/* Report a connection that ended; @expected: the step waited for it. */
static int report_end(struct peer *p, bool expected)
{
	say("ended-by %s", p->ended);
	say("disconnected-after-ms %" PRIu64,
	    (p->ended_ns - p->last_sent_ns) / 1000000);
	p->connected = false;
	return expected ? PEER_OK : PEER_OTHER;
}

/* The outcome of xfer() other than 0: a failure whatever the step. */
static int xfer_failed(struct peer *p, int ret, const char *what)
{
	if (ret == XFER_ENDED) {
		report_end(p, false);
		return fail("%s: the connection ended (%s)", what, p->ended);
	}
	if (ret < 0)
		return PEER_FAIL;
	return fail("%s: target answered %s (%d)", what, strerror(ret), ret);
}

/* Step "open[:NAME]": OPEN the export (--export by default). */
static int act_open(struct peer *p, const char *arg)
{
	struct rmbd_open_req *req = (struct rmbd_open_req *)send_buf(p);
	uint8_t buf[RMBD_MSG_SIZE];
	struct rmbd_open_rsp *rsp = (struct rmbd_open_rsp *)buf;
	const char *name = arg ? arg : p->export;
	uint8_t nc[RMBD_CHALLENGE_LEN];
	size_t n;
	int ret;

	if (!name)
		return fail("open: no export name (--export)");
	memset(req, 0, RMBD_MSG_SIZE);
	/* A name of 64 characters or more goes without its NUL. */
	n = strlen(name);
	memcpy(req->name, name, n < RMBD_NAME_LEN ? n : RMBD_NAME_LEN);
	if (getrandom(nc, sizeof(nc), 0) != sizeof(nc))
		return fail("open: getrandom: %s", strerror(errno));
	memcpy(req->challenge, nc, sizeof(nc));
	/* Likewise a host identity of 128 characters or more. */
	if (p->host) {
		n = strlen(p->host);
		memcpy(req->host, p->host, n < RMBD_HOST_LEN ? n : RMBD_HOST_LEN);
	}
	req->flags = htole32(p->open_flags);
	ret = xfer(p, RMBD_OP_OPEN, sizeof(*req), buf, sizeof(*rsp));
	if (ret == EBUSY && p->reply_len >= sizeof(*rsp) &&
	    memchr(rsp->holder, 0, sizeof(rsp->holder)))
		say("holder %s", rsp->holder);
	if (ret)
		return xfer_failed(p, ret, "OPEN");

	/* rmbd_check_geometry() */
	p->size = le64toh(rsp->size);
	p->slab_size = le64toh(rsp->slab_size);
	p->nr_slabs = le32toh(rsp->nr_slabs);
	p->timeout_ms = le32toh(rsp->session_timeout_ms);
	p->export_id = le64toh(rsp->export_id);
	if (!p->size || p->size > PEER_MAX_EXPORT_SIZE || p->size % 4096 ||
	    p->slab_size < PEER_MIN_SLAB_SIZE ||
	    p->slab_size > PEER_MAX_SLAB_SIZE ||
	    (p->slab_size & (p->slab_size - 1)) ||
	    p->nr_slabs > PEER_MAX_SLABS ||
	    p->nr_slabs != (p->size + p->slab_size - 1) / p->slab_size)
		return fail("OPEN: invalid geometry: size %" PRIu64 " slab_size %" PRIu64 " nr_slabs %u",
			    p->size, p->slab_size, p->nr_slabs);
	p->opened = true;
	p->opened_name = name;
	memcpy(p->nc, nc, sizeof(nc));
	p->auth = le32toh(rsp->flags) & RMBD_OPEN_AUTH;
	memcpy(p->nt, rsp->challenge, sizeof(p->nt));
	memcpy(p->join_key, rsp->join_key, sizeof(p->join_key));
	say("opened size %" PRIu64 " slab_size %" PRIu64 " nr_slabs %u session_timeout_ms %u export_id %016" PRIx64 " auth %d read_only %d",
	    p->size, p->slab_size, p->nr_slabs, p->timeout_ms, p->export_id,
	    p->auth, !!(le32toh(rsp->flags) & RMBD_OPEN_RDONLY));
	return 0;
}

static int map_one(struct peer *p, uint32_t slab)
{
	struct rmbd_map_req *req = (struct rmbd_map_req *)send_buf(p);
	uint8_t buf[RMBD_MSG_SIZE];
	struct rmbd_map_rsp *rsp = (struct rmbd_map_rsp *)buf;
	uint64_t addr, len, want = 0;
	char what[32];
	int ret;

	memset(req, 0, RMBD_MSG_SIZE);
	req->slab = htole32(slab);
	snprintf(what, sizeof(what), "MAP of slab %u", slab);
	ret = xfer(p, RMBD_OP_MAP, sizeof(*req), buf, sizeof(*rsp));
	if (ret)
		return xfer_failed(p, ret, what);
	addr = le64toh(rsp->addr);
	len = le64toh(rsp->len);
	if (slab < p->nr_slabs) {
		want = p->size - (uint64_t)slab * p->slab_size;
		if (want > p->slab_size)
			want = p->slab_size;
	}
	if (le32toh(rsp->slab) != slab || len != want || addr + len < addr)
		return fail("%s: invalid reply: slab %u addr %#" PRIx64 " len %" PRIu64 " (expected %" PRIu64 ")",
			    what, le32toh(rsp->slab), addr, len, want);
	say("mapped slab %u addr 0x%" PRIx64 " len %" PRIu64 " rkey 0x%x",
	    slab, addr, len, le32toh(rsp->rkey));
	if (slab < PEER_MAX_MAPS) {
		p->maps[slab].addr = addr;
		p->maps[slab].len = len;
		p->maps[slab].rkey = le32toh(rsp->rkey);
		p->maps[slab].mapped = true;
	}
	return 0;
}

/*
 * Step "map[:SLAB]": MAP that slab, or every slab of the export.  A SLAB
 * past the end, or before an OPEN, is sent all the same: the target must
 * refuse it.
 */
static int act_map(struct peer *p, const char *arg)
{
	uint32_t i;
	char *end;
	unsigned long v;

	if (arg) {
		errno = 0;
		v = strtoul(arg, &end, 0);
		if (errno || *end || end == arg || v > UINT32_MAX)
			return fail("map: bad slab index '%s'", arg);
		return map_one(p, v);
	}
	if (!p->opened)
		return fail("map: no export opened");
	for (i = 0; i < p->nr_slabs; i++)
		if (map_one(p, i))
			return PEER_FAIL;
	return 0;
}

/*
 * Step "range:FIRST:COUNT": one RMBD_OP_MAP_RANGE, sent as given (the
 * target must refuse a count of 0 or past RMBD_MAP_RANGE_MAX, and slabs
 * past the end); says how many slabs the reply mapped.
 */
static int act_range(struct peer *p, const char *arg)
{
	struct rmbd_map_range_req *req = (struct rmbd_map_range_req *)send_buf(p);
	uint8_t buf[RMBD_MSG_SIZE];
	struct rmbd_map_range_rsp *rsp = (struct rmbd_map_range_rsp *)buf;
	unsigned long first, count;
	char what[48], *end;
	int ret;

	errno = 0;
	first = strtoul(arg ? arg : "", &end, 0);
	if (errno || !arg || end == arg || *end != ':' || first > UINT32_MAX)
		return fail("range: want FIRST:COUNT, not '%s'", arg ? arg : "");
	arg = end + 1;
	count = strtoul(arg, &end, 0);
	if (errno || *end || end == arg || count > UINT32_MAX)
		return fail("range: bad count '%s'", arg);
	memset(req, 0, RMBD_MSG_SIZE);
	req->first = htole32(first);
	req->count = htole32(count);
	snprintf(what, sizeof(what), "MAP_RANGE of %lu+%lu", first, count);
	ret = xfer(p, RMBD_OP_MAP_RANGE, sizeof(*req), buf, sizeof(*rsp));
	if (ret)
		return xfer_failed(p, ret, what);
	say("%s: first %u count %u addr 0x%" PRIx64, what, le32toh(rsp->first),
	    le32toh(rsp->count), (uint64_t)le64toh(rsp->addr));
	return 0;
}

static int keepalive_once(struct peer *p)
{
	uint8_t buf[RMBD_MSG_SIZE];
	int ret;

	ret = xfer(p, RMBD_OP_KEEPALIVE, sizeof(struct rmbd_msg_hdr), buf,
		   sizeof(struct rmbd_msg_hdr));
	if (!ret)
		p->keepalives++;
	return ret;
}

/* Step "ping[:N]": one KEEPALIVE exchange, or N in a row (a flood). */
static int act_ping(struct peer *p, const char *arg)
{
	unsigned long i, n = 1;
	char *end;
	int ret;

	if (arg) {
		errno = 0;
		n = strtoul(arg, &end, 0);
		if (errno || *end || !n || n > 1000000)
			return fail("ping: bad count '%s'", arg);
	}
	for (i = 0; i < n; i++) {
		ret = keepalive_once(p);
		if (ret)
			return xfer_failed(p, ret, "KEEPALIVE");
	}
	say("keepalives %u", p->keepalives);
	return 0;
}

/*
 * Step "pair": two KEEPALIVEs in flight at once that carry one tag (a
 * replayed tag, requests interleaved): the target answers each.  Prints
 * "pair: N replies, tag T, status S" once both came, or that the
 * session ended.
 */
static int act_pair(struct peer *p, const char *arg)
{
	struct rmbd_msg_hdr *hdr = (struct rmbd_msg_hdr *)send_buf(p);
	struct ibv_sge sge = {
		.addr	= (uintptr_t)send_buf(p),
		.length	= sizeof(*hdr),
		.lkey	= p->mr->lkey,
	};
	struct ibv_send_wr wr[2] = { }, *bad;
	uint64_t deadline;
	int i, ms;

	(void)arg;
	if (!p->connected)
		return fail("pair: not connected");
	memset(hdr, 0, RMBD_MSG_SIZE);
	hdr->opcode = htole16(RMBD_OP_KEEPALIVE);
	hdr->tag = htole32(++p->tag);
	for (i = 0; i < 2; i++) {
		wr[i].wr_id = PEER_WR_SEND;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i ? NULL : &wr[1];
	}
	p->counting = true;
	p->counted = 0;
	p->sends_done = 0;
	p->last_sent_ns = mono_ns();
	p->last_sent_us = now_ns(CLOCK_REALTIME) / 1000;
	if (ibv_post_send(p->id->qp, wr, &bad))
		return fail("pair: cannot post the sends");
	deadline = p->last_sent_ns + PEER_ADMIN_TIMEOUT_MS * 1000000ULL;
	while (p->counted < 2 || p->sends_done < 2) {
		if (p->proto_error)
			return fail("pair: %s", p->proto_error);
		if (p->ended) {
			if (drain_cq(p))
				return PEER_FAIL;
			if (p->counted >= 2)
				break;
			say("pair: ended after %u replies", p->counted);
			return 0;
		}
		ms = ms_left(deadline);
		if (!ms)
			return fail("pair: %u replies within %d ms", p->counted,
				    PEER_ADMIN_TIMEOUT_MS);
		if (pump(p, ms))
			return PEER_FAIL;
	}
	p->counting = false;
	if (p->counted_op != (RMBD_OP_KEEPALIVE | RMBD_OP_REPLY) ||
	    p->counted_tag != p->tag)
		return fail("pair: replies with opcode %#x tag %u, expected %#x tag %u",
			    p->counted_op, p->counted_tag,
			    RMBD_OP_KEEPALIVE | RMBD_OP_REPLY, p->tag);
	say("pair: %u replies, tag %u, status %u", p->counted, p->counted_tag,
	    p->counted_status);
	return 0;
}

/*
 * Steps "read:SLAB[:OFF]" and "write:SLAB[:OFF]": one RDMA READ or WRITE
 * of PEER_RDMA_LEN bytes at offset OFF (default 0; negative or past the
 * end to try outside the region) of a slab MAP gave, with its rkey; or
 * "read:@ADDR:RKEY", at an address with a key from elsewhere (another
 * session's, or one that ended).  0 when it completed, PEER_OTHER when
 * the target's device refused it (the queue pair is in error then: no
 * step after it gets far).
 */
static int rdma_step(struct peer *p, const char *arg, bool write)
{
	const char *what = write ? "write" : "read";
	struct ibv_sge sge = { .length = PEER_RDMA_LEN };
	struct ibv_send_wr wr = {
		.wr_id		= PEER_WR_RDMA,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags	= IBV_SEND_SIGNALED,
	}, *bad;
	unsigned long slab, rkey = 0;
	uint64_t deadline, addr = 0;
	long long off = 0;
	char *end;
	int ms;

	if (!arg)
		return fail("%s: which slab?", what);
	errno = 0;
	if (arg[0] == '@') {
		addr = strtoull(arg + 1, &end, 0);
		if (!errno && *end == ':')
			rkey = strtoul(end + 1, &end, 0);
		if (errno || *end || rkey > UINT32_MAX)
			return fail("%s: '%s' is no @addr:rkey", what, arg);
		slab = 0;
	} else {
		slab = strtoul(arg, &end, 0);
		if (!errno && *end == ':')
			off = strtoll(end + 1, &end, 0);
		if (errno || *end || slab >= PEER_MAX_MAPS ||
		    !p->maps[slab].mapped)
			return fail("%s: '%s' is no mapped slab[:offset]",
				    what, arg);
		addr = p->maps[slab].addr + (uint64_t)off;
		rkey = p->maps[slab].rkey;
	}
	if (!p->connected)
		return fail("%s: not connected", what);
	if (!p->data) {
		p->data = calloc(1, PEER_RDMA_LEN);
		if (!p->data)
			return fail("out of memory");
		/* A READ's sink: remote write too, as iWARP wants it. */
		p->data_mr = ibv_reg_mr(p->pd, p->data, PEER_RDMA_LEN,
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_WRITE);
		if (!p->data_mr)
			return fail("cannot register the data buffer");
	}
	memset(p->data, 0xa5, PEER_RDMA_LEN);
	sge.addr = (uintptr_t)p->data;
	sge.lkey = p->data_mr->lkey;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	p->rdma_done = false;
	if (ibv_post_send(p->id->qp, &wr, &bad))
		return fail("%s: cannot post the work request", what);
	deadline = mono_ns() + PEER_ADMIN_TIMEOUT_MS * 1000000ULL;
	while (!p->rdma_done) {
		ms = ms_left(deadline);
		if (!ms)
			return fail("%s: no completion within %d ms", what,
				    PEER_ADMIN_TIMEOUT_MS);
		if (pump(p, ms))
			return PEER_FAIL;
	}
	if (arg[0] == '@')
		say("%s %s: %s", what, arg,
		    p->rdma_status == IBV_WC_SUCCESS ? "ok" :
		    ibv_wc_status_str(p->rdma_status));
	else
		say("%s slab %lu off %lld: %s", what, slab, off,
		    p->rdma_status == IBV_WC_SUCCESS ? "ok" :
		    ibv_wc_status_str(p->rdma_status));
	return p->rdma_status == IBV_WC_SUCCESS ? PEER_OK : PEER_OTHER;
}

static int act_read(struct peer *p, const char *arg)
{
	return rdma_step(p, arg, false);
}

static int act_write(struct peer *p, const char *arg)
{
	return rdma_step(p, arg, true);
}

/*
 * Step "raw:OPCODE:LEN": an admin message of LEN bytes (8 to
 * RMBD_MSG_SIZE) with that opcode, the rest 0xa5.  Prints "raw OP LEN:
 * status ERRNO" for a reply, "raw OP LEN: ended" when the target ended
 * the session instead; 0 for a reply, PEER_OTHER for the end.
 */
static int act_raw(struct peer *p, const char *arg)
{
	uint8_t buf[RMBD_MSG_SIZE];
	unsigned long op, len;
	char *end;
	int ret;

	errno = 0;
	op = arg ? strtoul(arg, &end, 0) : 0;
	if (!arg || errno || *end != ':' || op > UINT16_MAX)
		return fail("raw: OPCODE:LEN, not '%s'", arg ? arg : "");
	len = strtoul(end + 1, &end, 0);
	if (errno || *end || len < sizeof(struct rmbd_msg_hdr) ||
	    len > RMBD_MSG_SIZE)
		return fail("raw: length 8 to %d, not '%s'", RMBD_MSG_SIZE, arg);
	memset(send_buf(p), 0xa5, RMBD_MSG_SIZE);
	ret = xfer(p, (uint16_t)op, len, buf, sizeof(struct rmbd_msg_hdr));
	if (ret == XFER_ENDED) {
		say("raw %#lx %lu: ended", op, len);
		return report_end(p, false);
	}
	if (ret < 0)
		return PEER_FAIL;
	say("raw %#lx %lu: status %d", op, len, ret);
	return 0;
}

/* HMAC-SHA-256 of the iov with the kernel's crypto API (AF_ALG). */
static int hmac_sha256(const uint8_t *key, size_t klen,
		       const struct iovec *iov, int n, uint8_t *out)
{
	struct sockaddr_alg sa = {
		.salg_family = AF_ALG,
		.salg_type = "hash",
		.salg_name = "hmac(sha256)",
	};
	int tfm, op = -1, i, ret = -1;

	tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (tfm < 0)
		return -1;
	if (bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, (socklen_t)klen))
		goto out;
	op = accept(tfm, NULL, 0);
	if (op < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (send(op, iov[i].iov_base, iov[i].iov_len,
			 i < n - 1 ? MSG_MORE : 0) != (ssize_t)iov[i].iov_len)
			goto out;
	if (read(op, out, RMBD_RESPONSE_LEN) == RMBD_RESPONSE_LEN)
		ret = 0;
out:
	if (op >= 0)
		close(op);
	close(tfm);
	return ret;
}

/* The answer of struct rmbd_auth_msg, the client's or the target's. */
static int auth_response(struct peer *p, bool target, uint8_t *out)
{
	static const char labels[2][16] = { "rmbd v2 client", "rmbd v2 target" };
	char host[RMBD_HOST_LEN] = { 0 }, name[RMBD_NAME_LEN] = { 0 };
	uint64_t sid = htole64(p->session_id);
	struct iovec iov[] = {
		{ (void *)labels[target], 16 },
		{ &sid, sizeof(sid) },
		{ target ? p->nc : p->nt, RMBD_CHALLENGE_LEN },
		{ target ? p->nt : p->nc, RMBD_CHALLENGE_LEN },
		{ host, sizeof(host) },
		{ name, sizeof(name) },
	};

	if (p->host)
		strncpy(host, p->host, sizeof(host) - 1);
	strncpy(name, p->opened_name, sizeof(name) - 1);
	return hmac_sha256(p->secret, p->secret_len, iov, 6, out);
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

/*
 * Step "auth[:wrong|:HEX]": answer the target's challenge with the
 * secret (--secret-file), a wrong answer (one bit flipped), or the
 * answer HEX (say, one an earlier session printed); then check the
 * target's answer.
 */
static int act_auth(struct peer *p, const char *arg)
{
	struct rmbd_auth_msg *req = (struct rmbd_auth_msg *)send_buf(p);
	uint8_t buf[RMBD_MSG_SIZE], want[RMBD_RESPONSE_LEN];
	struct rmbd_auth_msg *rsp = (struct rmbd_auth_msg *)buf;
	char text[2 * RMBD_RESPONSE_LEN + 1];
	unsigned int i, v;
	int ret;

	if (!p->opened)
		return fail("auth: open first");
	memset(req, 0, RMBD_MSG_SIZE);
	if (arg && strcmp(arg, "wrong")) {
		if (strlen(arg) != 2 * RMBD_RESPONSE_LEN ||
		    strspn(arg, "0123456789abcdefABCDEF") != strlen(arg))
			return fail("auth: '%s' is no answer of 64 hex digits", arg);
		for (i = 0; i < RMBD_RESPONSE_LEN; i++) {
			if (sscanf(arg + 2 * i, "%2x", &v) != 1)
				return fail("auth: '%s' is no answer of 64 hex digits", arg);
			req->response[i] = (uint8_t)v;
		}
	} else {
		if (!p->secret_len)
			return fail("auth: no --secret-file");
		if (auth_response(p, false, req->response))
			return fail("auth: HMAC-SHA-256 through AF_ALG: %s", strerror(errno));
		if (arg)
			req->response[0] ^= 1;
	}
	hex(req->response, RMBD_RESPONSE_LEN, text);
	say("auth-response %s", text);
	ret = xfer(p, RMBD_OP_AUTH, sizeof(*req), buf, sizeof(*rsp));
	if (ret)
		return xfer_failed(p, ret, "AUTH");
	if (!p->secret_len || auth_response(p, true, want))
		return fail("auth: cannot check the target's answer");
	say("target-proved %s", memcmp(want, rsp->response, sizeof(want)) ? "no" : "yes");
	return memcmp(want, rsp->response, sizeof(want)) ? PEER_OTHER : 0;
}

/* A secret file: one line of 64 to 128 hex digits. */
static int read_secret(const char *path, uint8_t *buf, size_t *len)
{
	char line[2 * RMBD_SECRET_MAX + 2];
	unsigned int v;
	size_t n, i;
	FILE *f = fopen(path, "re");

	if (!f || !fgets(line, sizeof(line), f)) {
		fprintf(stderr, "rmbd-peer: cannot read %s\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	n = strcspn(line, "\n");
	if (n % 2 || n < 2 * RMBD_SECRET_MIN || n > 2 * RMBD_SECRET_MAX) {
		fprintf(stderr, "rmbd-peer: %s holds no secret\n", path);
		return -1;
	}
	for (i = 0; i < n / 2; i++) {
		if (sscanf(line + 2 * i, "%2x", &v) != 1)
			return -1;
		buf[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

/* Wait until the connection ends or @deadline_ns passes. */
static int wait_end(struct peer *p, uint64_t deadline_ns)
{
	int ms;

	while (!p->ended && (ms = ms_left(deadline_ns))) {
		if (pump(p, ms))
			return PEER_FAIL;
		if (p->proto_error)
			return fail("%s", p->proto_error);
	}
	return 0;
}

/*
 * Step "silent": send nothing, not even keepalives, for --seconds.
 * Expected: the target ends the session first.
 */
static int act_silent(struct peer *p, const char *arg)
{
	uint64_t deadline = mono_ns() + p->seconds * 1000000000ULL;

	(void)arg;
	if (!p->connected)
		return fail("silent: not connected");
	say("silent-since-us %" PRIu64, p->last_sent_us);
	if (wait_end(p, deadline))
		return PEER_FAIL;
	if (p->ended)
		return report_end(p, true);
	say("still-connected");
	return PEER_OTHER;
}

/*
 * Step "keepalive": for --seconds, a KEEPALIVE every --interval-ms, by
 * default every third of the timeout the OPEN reply gave (none if 0), as
 * rmbd-client sends them.  Expected: the session stays.
 */
static int act_keepalive(struct peer *p, const char *arg)
{
	uint64_t deadline = mono_ns() + p->seconds * 1000000000ULL;
	uint64_t interval_ns, next;
	int ret;

	(void)arg;
	if (!p->connected)
		return fail("keepalive: not connected");
	if (p->interval_ms >= 0)
		interval_ns = p->interval_ms * 1000000ULL;
	else
		interval_ns = p->timeout_ms / 3 * 1000000ULL;
	say("keepalive-interval-ms %" PRIu64, interval_ns / 1000000);
	for (;;) {
		next = interval_ns ? p->last_sent_ns + interval_ns : deadline;
		if (next > deadline)
			next = deadline;
		if (wait_end(p, next))
			return PEER_FAIL;
		if (p->ended)
			break;
		if (mono_ns() >= deadline)
			break;
		ret = keepalive_once(p);
		if (ret == XFER_ENDED)
			break;
		if (ret)
			return xfer_failed(p, ret, "KEEPALIVE");
	}
	say("keepalives %u", p->keepalives);
	if (p->ended)
		return report_end(p, false);
	say("still-connected");
	return 0;
}

/* Step "close": CLOSE; the target answers and ends the session. */
static int act_close(struct peer *p, const char *arg)
{
	uint8_t buf[RMBD_MSG_SIZE];
	int ret;

	(void)arg;
	ret = xfer(p, RMBD_OP_CLOSE, sizeof(struct rmbd_msg_hdr), buf,
		   sizeof(struct rmbd_msg_hdr));
	/*
	 * The target answers, then ends the session: on a slow kernel the
	 * disconnect may overtake the reply.  Either way the session ended.
	 */
	if (ret == XFER_ENDED)
		return report_end(p, true);
	if (ret)
		return xfer_failed(p, ret, "CLOSE");
	if (wait_end(p, p->last_sent_ns + PEER_ADMIN_TIMEOUT_MS * 1000000ULL))
		return PEER_FAIL;
	if (p->ended)
		return report_end(p, true);
	say("still-connected");
	return PEER_OTHER;
}

struct peer_action {
	const char *name;
	int (*run)(struct peer *p, const char *arg);
	const char *help;
};

static const struct peer_action peer_actions[] = {
	{ "connect", act_connect, "connect the admin queue; :none, :short, :magic, :version, :qtype, :depth, :ioq or :long spoil its private data" },
	{ "ioq", act_ioq, "join I/O queue 0 to the session with the OPEN reply's join key; :wrong, :none spoil it" },
	{ "open", act_open, "OPEN the export, or the export NAME given" },
	{ "map", act_map, "MAP every slab, or the slab given" },
	{ "range", act_range, "MAP_RANGE of :FIRST:COUNT slabs, as given" },
	{ "ping", act_ping, "one KEEPALIVE, or :N in a row" },
	{ "pair", act_pair, "two KEEPALIVEs in flight at once with one tag" },
	{ "silent", act_silent, "send nothing for --seconds; expect the target to end the session" },
	{ "keepalive", act_keepalive, "keepalives for --seconds; expect the session to stay" },
	{ "close", act_close, "CLOSE; expect the target to end the session" },
	{ "auth", act_auth, "AUTH with --secret-file's answer, or :wrong, or :HEX" },
	{ "raw", act_raw, "an admin message OPCODE:LEN, filled with 0xa5" },
	{ "read", act_read, "RDMA READ 4 KiB of SLAB[:OFF] (a mapped slab) or @ADDR:RKEY" },
	{ "write", act_write, "RDMA WRITE 4 KiB to SLAB[:OFF] (a mapped slab) or @ADDR:RKEY" },
};

#define PEER_MAX_STEPS	64

struct peer_step {
	const struct peer_action *act;
	char *arg;
};

static const struct peer_action *find_action(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(peer_actions); i++)
		if (!strcmp(peer_actions[i].name, name))
			return &peer_actions[i];
	return NULL;
}

/* Append the steps of @list ("name[:arg],..."); it is modified. */
static int parse_steps(char *list, struct peer_step *steps, int *n)
{
	char *tok, *save = NULL, *arg;

	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		arg = strchr(tok, ':');
		if (arg)
			*arg++ = '\0';
		if (*n == PEER_MAX_STEPS) {
			fprintf(stderr, "rmbd-peer: more than %d steps\n",
				PEER_MAX_STEPS);
			return -1;
		}
		steps[*n].act = find_action(tok);
		if (!steps[*n].act) {
			fprintf(stderr, "rmbd-peer: unknown step '%s'\n", tok);
			return -1;
		}
		steps[*n].arg = arg;
		(*n)++;
	}
	return 0;
}

static void teardown(struct peer *p)
{
	uint64_t deadline;
	bool wait = p->connected && !p->ended;

	/*
	 * Let the target see a disconnect, not a vanished peer; after its
	 * own, this answers its request.
	 */
	p->connected = false;
	if (p->established && !rdma_disconnect(p->id) && wait) {
		deadline = mono_ns() + 2000000000ULL;
		p->cm_seen = false;
		while (!p->cm_seen && ms_left(deadline))
			if (pump(p, ms_left(deadline)))
				break;
	}
	if (p->qp_created)
		rdma_destroy_qp(p->id);
	if (p->data_mr)
		ibv_dereg_mr(p->data_mr);
	free(p->data);
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->bufs);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->cc)
		ibv_destroy_comp_channel(p->cc);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->id)
		rdma_destroy_id(p->id);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
}

/* "shared,rdonly", or a number for flags a client may not send. */
static int parse_open_flags(const char *arg, uint32_t *flags)
{
	char buf[64], *tok, *save = NULL, *end;
	unsigned long v;

	snprintf(buf, sizeof(buf), "%s", arg);
	*flags = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "shared")) {
			*flags |= RMBD_OPEN_SHARED;
			continue;
		}
		if (!strcmp(tok, "rdonly")) {
			*flags |= RMBD_OPEN_RDONLY;
			continue;
		}
		errno = 0;
		v = strtoul(tok, &end, 0);
		if (errno || *end || end == tok || v > UINT32_MAX) {
			fprintf(stderr, "rmbd-peer: bad open flag '%s'\n", tok);
			return -1;
		}
		*flags |= v;
	}
	return 0;
}

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"usage: rmbd-peer --addr ADDR [--port PORT] [--export NAME] [--host ID]\n"
		"                 [--seconds N]\n"
		"                 [--interval-ms MS] [--map]\n"
		"                 { --open-then silent|keepalive|close | --keepalive |\n"
		"                   --do STEP[:ARG][,STEP[:ARG]...] }\n"
		"  --open-then MODE   connect, open, map (with --map), then MODE\n"
		"  --keepalive        --open-then keepalive\n"
		"  --host ID          the host identity OPEN gives (default: none)\n"
		"  --open-flags F     OPEN's flags: shared,rdonly or a number\n"
		"  --secret-file F    the host's secret, for the auth step\n"
		"  --seconds N        how long silent and keepalive hold (default 10)\n"
		"  --interval-ms MS   keepalive interval (default: a third of the\n"
		"                     target's session timeout)\n"
		"steps:\n");
	for (i = 0; i < ARRAY_SIZE(peer_actions); i++)
		fprintf(f, "  %-10s %s\n", peer_actions[i].name,
			peer_actions[i].help);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "export", required_argument, NULL, 'e' },
		{ "host", required_argument, NULL, 'H' },
		{ "open-flags", required_argument, NULL, 'F' },
		{ "secret-file", required_argument, NULL, 'S' },
		{ "seconds", required_argument, NULL, 's' },
		{ "interval-ms", required_argument, NULL, 'i' },
		{ "map", no_argument, NULL, 'm' },
		{ "open-then", required_argument, NULL, 'o' },
		{ "keepalive", no_argument, NULL, 'k' },
		{ "do", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct peer p = {
		.port = "7470",
		.seconds = 10,
		.interval_ms = -1,
		.reply = -1,
	};
	struct peer_step steps[PEER_MAX_STEPS];
	char *list = NULL, *then = NULL, *end, buf[64];
	bool map = false;
	int c, i, n = 0, ret = 0;
	unsigned long v;

	while ((c = getopt_long(argc, argv, "a:p:e:H:F:S:s:i:mo:kd:h", opts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			p.addr = optarg;
			break;
		case 'p':
			p.port = optarg;
			break;
		case 'e':
			p.export = optarg;
			break;
		case 'H':
			p.host = optarg;
			break;
		case 'F':
			if (parse_open_flags(optarg, &p.open_flags))
				return PEER_USAGE;
			break;
		case 'S':
			if (read_secret(optarg, p.secret, &p.secret_len))
				return 2;
			break;
		case 's':
		case 'i':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || v > 86400000) {
				fprintf(stderr, "rmbd-peer: bad number '%s'\n",
					optarg);
				return PEER_USAGE;
			}
			if (c == 's')
				p.seconds = v;
			else
				p.interval_ms = v;
			break;
		case 'm':
			map = true;
			break;
		case 'o':
			then = optarg;
			break;
		case 'k':
			then = "keepalive";
			break;
		case 'd':
			list = optarg;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			print_usage(stderr);
			return PEER_USAGE;
		}
	}
	if (optind != argc || !p.addr || !!list == !!then) {
		print_usage(stderr);
		return PEER_USAGE;
	}
	if (then) {
		if (strcmp(then, "silent") && strcmp(then, "keepalive") &&
		    strcmp(then, "close")) {
			fprintf(stderr, "rmbd-peer: --open-then silent, keepalive or close\n");
			return PEER_USAGE;
		}
		snprintf(buf, sizeof(buf), "connect,open,%s%s",
			 map ? "map," : "", then);
		list = buf;
	}
	if (parse_steps(list, steps, &n))
		return PEER_USAGE;

	p.ch = rdma_create_event_channel();
	if (!p.ch)
		return fail("cannot create an rdma_cm event channel (is rdma_ucm loaded?): %s",
			    strerror(errno));
	if (nonblock(p.ch->fd)) {
		teardown(&p);
		return fail("cannot make the event channel non-blocking");
	}
	for (i = 0; i < n && !ret; i++)
		ret = steps[i].act->run(&p, steps[i].arg);
	teardown(&p);
	return ret;
}
