// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * librmbd: generic netlink requests to the rmbd target and client modules.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "librmbd.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK	270
#endif

enum rmbd_family_id {
	RMBD_FAM_TARGET,
	RMBD_FAM_CLIENT,
	RMBD_NR_FAMILIES,
};

static const struct rmbd_family {
	const char *genl_name;
	const char *module;
	int maxattr;
} rmbd_families[RMBD_NR_FAMILIES] = {
	[RMBD_FAM_TARGET] = {
		.genl_name	= RMBD_TARGET_GENL_NAME,
		.module		= "rmbd-target",
		.maxattr	= RMBD_TARGET_ATTR_MAX,
	},
	[RMBD_FAM_CLIENT] = {
		.genl_name	= RMBD_CLIENT_GENL_NAME,
		.module		= "rmbd-client",
		.maxattr	= RMBD_CLIENT_ATTR_MAX,
	},
};

#define RMBD_MAX_ATTR \
	((int)RMBD_TARGET_ATTR_MAX > (int)RMBD_CLIENT_ATTR_MAX ? \
	 (int)RMBD_TARGET_ATTR_MAX : (int)RMBD_CLIENT_ATTR_MAX)

struct rmbd_ctx {
	struct nl_sock *sk;
	int family[RMBD_NR_FAMILIES];	/* 0: not resolved yet */
	char errmsg[256];
};

/* Parses one reply message; non-zero stops further calls. */
typedef int (*rmbd_parse_fn)(struct nlattr **tb, void *arg);

struct rmbd_req {
	struct rmbd_ctx *ctx;
	int maxattr;
	rmbd_parse_fn parse;
	void *arg;
	bool done;
	int err;		/* negative errno from the kernel, or 0 */
	int cb_ret;		/* first non-zero return of parse */
	unsigned int nr_replies;
};

static void rmbd_set_errmsg(struct rmbd_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rmbd_set_errmsg(struct rmbd_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
	va_end(ap);
}

static int rmbd_nlerr_to_errno(int nlerr)
{
	switch (abs(nlerr)) {
	case NLE_SUCCESS:
		return 0;
	case NLE_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_EXIST:
		return -EEXIST;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_PERM:
		return -EPERM;
	case NLE_NODEV:
		return -ENODEV;
	default:
		return -EIO;
	}
}

/*
 * Extended ack: the TLVs follow struct nlmsgerr, and also the original
 * request unless the kernel capped it (NLM_F_CAPPED).
 */
static void rmbd_parse_ext_ack(struct rmbd_ctx *ctx,
			       const struct nlmsghdr *nlh, size_t tlv_offset)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct nlattr *attrs;
	size_t len;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (tlv_offset >= nlh->nlmsg_len)
		return;
	attrs = (struct nlattr *)((char *)nlh + tlv_offset);
	len = nlh->nlmsg_len - tlv_offset;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX, attrs, (int)len, NULL) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG])
		nla_strlcpy(ctx->errmsg, tb[NLMSGERR_ATTR_MSG],
			    sizeof(ctx->errmsg));
	else if (tb[NLMSGERR_ATTR_MISS_TYPE])
		rmbd_set_errmsg(ctx, "missing attribute %u",
				nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]));
}

static int rmbd_error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e,
			 void *arg)
{
	const struct nlmsghdr *nlh =
		(const struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct rmbd_req *req = arg;
	size_t off;

	(void)nla;
	req->err = e->error < 0 ? e->error : -e->error;
	req->done = true;

	off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*e));
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	rmbd_parse_ext_ack(req->ctx, nlh, off);
	return NL_STOP;
}

static int rmbd_ack_cb(struct nl_msg *msg, void *arg)
{
	struct rmbd_req *req = arg;

	(void)msg;
	req->done = true;
	return NL_STOP;
}

/* NLMSG_DONE of a dump carries the dump's errno and maybe an ext ack. */
static int rmbd_finish_cb(struct nl_msg *msg, void *arg)
{
	const struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct rmbd_req *req = arg;
	int err;

	req->done = true;
	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
		memcpy(&err, nlmsg_data(nlh), sizeof(err));
		if (err < 0) {
			req->err = err;
			rmbd_parse_ext_ack(req->ctx, nlh, NLMSG_HDRLEN +
					   NLMSG_ALIGN(sizeof(int)));
		}
	}
	return NL_STOP;
}

static int rmbd_valid_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[RMBD_MAX_ATTR + 1];
	struct rmbd_req *req = arg;
	int ret;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, req->maxattr, NULL) < 0)
		return NL_SKIP;
	req->nr_replies++;
	if (!req->parse || req->cb_ret)
		return NL_OK;
	ret = req->parse(tb, req->arg);
	if (ret)
		req->cb_ret = ret;
	return NL_OK;
}

static int rmbd_resolve(struct rmbd_ctx *ctx, enum rmbd_family_id fam)
{
	int id;

	if (ctx->family[fam] > 0)
		return ctx->family[fam];

	id = genl_ctrl_resolve(ctx->sk, rmbd_families[fam].genl_name);
	if (id == -NLE_OBJ_NOTFOUND) {
		rmbd_set_errmsg(ctx, "kernel module %s is not loaded",
				rmbd_families[fam].module);
		return -ENOENT;
	}
	if (id < 0)
		return rmbd_nlerr_to_errno(id);
	ctx->family[fam] = id;
	return id;
}

static int rmbd_msg_new(struct rmbd_ctx *ctx, enum rmbd_family_id fam,
			uint8_t cmd, int flags, struct nl_msg **msgp)
{
	struct nl_msg *msg;
	int id;

	ctx->errmsg[0] = '\0';
	id = rmbd_resolve(ctx, fam);
	if (id < 0)
		return id;

	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, id, 0, flags, cmd,
			 fam == RMBD_FAM_TARGET ? RMBD_TARGET_GENL_VERSION :
						  RMBD_CLIENT_GENL_VERSION)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	*msgp = msg;
	return 0;
}

/*
 * Sends msg (and frees it), then reads replies until the ack, the error or
 * the end of the dump.  Returns a negative errno, else the first non-zero
 * return of parse, else 0.
 */
static int rmbd_transact(struct rmbd_ctx *ctx, enum rmbd_family_id fam,
			 struct nl_msg *msg, rmbd_parse_fn parse, void *arg,
			 unsigned int *nr_replies)
{
	struct rmbd_req req = {
		.ctx		= ctx,
		.maxattr	= rmbd_families[fam].maxattr,
		.parse		= parse,
		.arg		= arg,
	};
	struct nl_cb *cb;
	int ret;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, rmbd_valid_cb, &req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, rmbd_ack_cb, &req);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, rmbd_finish_cb, &req);
	nl_cb_err(cb, NL_CB_CUSTOM, rmbd_error_cb, &req);

	/* The socket adds NLM_F_ACK: auto-ack is on. */
	ret = nl_send_auto(ctx->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		nl_cb_put(cb);
		return rmbd_nlerr_to_errno(ret);
	}

	while (!req.done) {
		ret = nl_recvmsgs(ctx->sk, cb);
		if (ret < 0 && !req.done) {
			req.err = rmbd_nlerr_to_errno(ret);
			break;
		}
	}
	nl_cb_put(cb);

	if (nr_replies)
		*nr_replies = req.nr_replies;
	if (req.err)
		return req.err;
	return req.cb_ret;
}

static int rmbd_put_ret(struct nl_msg *msg, int ret)
{
	if (ret < 0) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return 0;
}

/* A do-request whose reply, if any, fills an object. */
static int rmbd_do(struct rmbd_ctx *ctx, enum rmbd_family_id fam,
		   struct nl_msg *msg, rmbd_parse_fn parse, void *out)
{
	unsigned int nr;
	int ret;

	ret = rmbd_transact(ctx, fam, msg, out ? parse : NULL, out, &nr);
	if (ret < 0)
		return ret;
	if (out && !nr) {
		rmbd_set_errmsg(ctx, "the kernel sent no reply");
		return -EPROTO;
	}
	return 0;
}

int rmbd_open(struct rmbd_ctx **ctxp)
{
	struct rmbd_ctx *ctx;
	int one = 1;
	int ret;

	*ctxp = NULL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->sk = nl_socket_alloc();
	if (!ctx->sk) {
		ret = -ENOMEM;
		goto out_free_ctx;
	}
	ret = genl_connect(ctx->sk);
	if (ret < 0) {
		ret = rmbd_nlerr_to_errno(ret);
		goto out_free_sock;
	}
	/* Best effort: kernels without extended acks still work. */
	setsockopt(nl_socket_get_fd(ctx->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	*ctxp = ctx;
	return 0;

out_free_sock:
	nl_socket_free(ctx->sk);
out_free_ctx:
	free(ctx);
	return ret;
}

void rmbd_close(struct rmbd_ctx *ctx)
{
	if (!ctx)
		return;
	nl_socket_free(ctx->sk);
	free(ctx);
}

const char *rmbd_errmsg(const struct rmbd_ctx *ctx)
{
	return ctx ? ctx->errmsg : "";
}

/* Target: exports. */

static int rmbd_parse_export(struct nlattr **tb, void *arg)
{
	struct rmbd_export_info *e = arg;

	memset(e, 0, sizeof(*e));
	if (tb[RMBD_TARGET_ATTR_EXPORT_NAME])
		nla_strlcpy(e->name, tb[RMBD_TARGET_ATTR_EXPORT_NAME],
			    sizeof(e->name));
	if (tb[RMBD_TARGET_ATTR_EXPORT_SIZE])
		e->size = nla_get_u64(tb[RMBD_TARGET_ATTR_EXPORT_SIZE]);
	if (tb[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE])
		e->slab_size =
			nla_get_u64(tb[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE]);
	if (tb[RMBD_TARGET_ATTR_EXPORT_MEM])
		e->mem = nla_get_u64(tb[RMBD_TARGET_ATTR_EXPORT_MEM]);
	if (tb[RMBD_TARGET_ATTR_EXPORT_NR_SLABS])
		e->nr_slabs = nla_get_u32(tb[RMBD_TARGET_ATTR_EXPORT_NR_SLABS]);
	if (tb[RMBD_TARGET_ATTR_EXPORT_SESSIONS])
		e->sessions = nla_get_u32(tb[RMBD_TARGET_ATTR_EXPORT_SESSIONS]);
	if (tb[RMBD_TARGET_ATTR_EXPORT_MAPPED])
		e->mapped = nla_get_u32(tb[RMBD_TARGET_ATTR_EXPORT_MAPPED]);
	return 0;
}

int rmbd_export_add(struct rmbd_ctx *ctx, const char *name, uint64_t size,
		    uint64_t slab_size, struct rmbd_export_info *out)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, RMBD_TARGET_CMD_EXPORT_ADD,
			   0, &msg);
	if (ret)
		return ret;
	ret = nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, name);
	if (!ret)
		ret = nla_put_u64(msg, RMBD_TARGET_ATTR_EXPORT_SIZE, size);
	if (!ret && slab_size)
		ret = nla_put_u64(msg, RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE,
				  slab_size);
	if (rmbd_put_ret(msg, ret))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_TARGET, msg, rmbd_parse_export, out);
}

int rmbd_export_del(struct rmbd_ctx *ctx, const char *name, bool force)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, RMBD_TARGET_CMD_EXPORT_DEL,
			   0, &msg);
	if (ret)
		return ret;
	ret = nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, name);
	if (!ret && force)
		ret = nla_put_flag(msg, RMBD_TARGET_ATTR_EXPORT_FORCE);
	if (rmbd_put_ret(msg, ret))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_TARGET, msg, NULL, NULL);
}

int rmbd_export_get(struct rmbd_ctx *ctx, const char *name,
		    struct rmbd_export_info *out)
{
	struct rmbd_export_info dummy;
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, RMBD_TARGET_CMD_EXPORT_GET,
			   0, &msg);
	if (ret)
		return ret;
	ret = nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, name);
	if (rmbd_put_ret(msg, ret))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_TARGET, msg, rmbd_parse_export,
		       out ? out : &dummy);
}

struct rmbd_export_walk {
	int (*cb)(const struct rmbd_export_info *, void *);
	void *arg;
	uint64_t *total_mem;
};

static int rmbd_walk_export(struct nlattr **tb, void *arg)
{
	struct rmbd_export_walk *w = arg;
	struct rmbd_export_info e;

	if (tb[RMBD_TARGET_ATTR_TOTAL_MEM] && w->total_mem)
		*w->total_mem = nla_get_u64(tb[RMBD_TARGET_ATTR_TOTAL_MEM]);
	/* The total may come in a message of its own. */
	if (!tb[RMBD_TARGET_ATTR_EXPORT_NAME])
		return 0;
	rmbd_parse_export(tb, &e);
	return w->cb ? w->cb(&e, w->arg) : 0;
}

int rmbd_export_list(struct rmbd_ctx *ctx,
		     int (*cb)(const struct rmbd_export_info *, void *),
		     void *arg, uint64_t *total_mem)
{
	struct rmbd_export_walk w = { cb, arg, total_mem };
	struct nl_msg *msg;
	int ret;

	if (total_mem)
		*total_mem = 0;
	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, RMBD_TARGET_CMD_EXPORT_GET,
			   NLM_F_DUMP, &msg);
	if (ret)
		return ret;
	return rmbd_transact(ctx, RMBD_FAM_TARGET, msg, rmbd_walk_export, &w,
			     NULL);
}

/* Target: listeners. */

static int rmbd_parse_listener(struct nlattr **tb, void *arg)
{
	struct rmbd_listener_info *l = arg;

	memset(l, 0, sizeof(*l));
	if (tb[RMBD_TARGET_ATTR_LISTENER_ADDR])
		nla_strlcpy(l->addr, tb[RMBD_TARGET_ATTR_LISTENER_ADDR],
			    sizeof(l->addr));
	if (tb[RMBD_TARGET_ATTR_LISTENER_PORT])
		l->port = nla_get_u16(tb[RMBD_TARGET_ATTR_LISTENER_PORT]);
	return 0;
}

static int rmbd_listener_msg(struct rmbd_ctx *ctx, uint8_t cmd,
			     const char *addr, uint16_t port,
			     struct nl_msg **msgp)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, cmd, 0, &msg);
	if (ret)
		return ret;
	ret = nla_put_string(msg, RMBD_TARGET_ATTR_LISTENER_ADDR, addr);
	if (!ret && port)
		ret = nla_put_u16(msg, RMBD_TARGET_ATTR_LISTENER_PORT, port);
	if (rmbd_put_ret(msg, ret))
		return -EMSGSIZE;
	*msgp = msg;
	return 0;
}

int rmbd_listener_add(struct rmbd_ctx *ctx, const char *addr, uint16_t port,
		      struct rmbd_listener_info *out)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_listener_msg(ctx, RMBD_TARGET_CMD_LISTENER_ADD, addr, port,
				&msg);
	if (ret)
		return ret;
	return rmbd_do(ctx, RMBD_FAM_TARGET, msg, rmbd_parse_listener, out);
}

int rmbd_listener_del(struct rmbd_ctx *ctx, const char *addr, uint16_t port)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_listener_msg(ctx, RMBD_TARGET_CMD_LISTENER_DEL, addr, port,
				&msg);
	if (ret)
		return ret;
	return rmbd_do(ctx, RMBD_FAM_TARGET, msg, NULL, NULL);
}

struct rmbd_listener_walk {
	int (*cb)(const struct rmbd_listener_info *, void *);
	void *arg;
};

static int rmbd_walk_listener(struct nlattr **tb, void *arg)
{
	struct rmbd_listener_walk *w = arg;
	struct rmbd_listener_info l;

	if (!tb[RMBD_TARGET_ATTR_LISTENER_ADDR])
		return 0;
	rmbd_parse_listener(tb, &l);
	return w->cb ? w->cb(&l, w->arg) : 0;
}

int rmbd_listener_list(struct rmbd_ctx *ctx,
		       int (*cb)(const struct rmbd_listener_info *, void *),
		       void *arg)
{
	struct rmbd_listener_walk w = { cb, arg };
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET,
			   RMBD_TARGET_CMD_LISTENER_GET, NLM_F_DUMP, &msg);
	if (ret)
		return ret;
	return rmbd_transact(ctx, RMBD_FAM_TARGET, msg, rmbd_walk_listener,
			     &w, NULL);
}

/* Client: devices. */

static int rmbd_parse_dev_info(struct nlattr **tb, void *arg)
{
	struct rmbd_dev_info *d = arg;

	memset(d, 0, sizeof(*d));
	if (tb[RMBD_CLIENT_ATTR_DEV_INDEX])
		d->index = nla_get_u32(tb[RMBD_CLIENT_ATTR_DEV_INDEX]);
	if (tb[RMBD_CLIENT_ATTR_DEV_NAME])
		nla_strlcpy(d->name, tb[RMBD_CLIENT_ATTR_DEV_NAME],
			    sizeof(d->name));
	else
		snprintf(d->name, sizeof(d->name), "rmbd%u", d->index);
	if (tb[RMBD_CLIENT_ATTR_DEV_SIZE])
		d->size = nla_get_u64(tb[RMBD_CLIENT_ATTR_DEV_SIZE]);
	if (tb[RMBD_CLIENT_ATTR_SLAB_SIZE])
		d->slab_size = nla_get_u64(tb[RMBD_CLIENT_ATTR_SLAB_SIZE]);
	if (tb[RMBD_CLIENT_ATTR_DEV_STATE])
		d->state = nla_get_u8(tb[RMBD_CLIENT_ATTR_DEV_STATE]);
	if (tb[RMBD_CLIENT_ATTR_ADDR])
		nla_strlcpy(d->addr, tb[RMBD_CLIENT_ATTR_ADDR],
			    sizeof(d->addr));
	if (tb[RMBD_CLIENT_ATTR_PORT])
		d->port = nla_get_u16(tb[RMBD_CLIENT_ATTR_PORT]);
	if (tb[RMBD_CLIENT_ATTR_EXPORT_NAME])
		nla_strlcpy(d->export_name, tb[RMBD_CLIENT_ATTR_EXPORT_NAME],
			    sizeof(d->export_name));
	if (tb[RMBD_CLIENT_ATTR_NR_IO_QUEUES])
		d->nr_io_queues = nla_get_u32(tb[RMBD_CLIENT_ATTR_NR_IO_QUEUES]);
	if (tb[RMBD_CLIENT_ATTR_QUEUE_DEPTH])
		d->queue_depth = nla_get_u32(tb[RMBD_CLIENT_ATTR_QUEUE_DEPTH]);
	if (tb[RMBD_CLIENT_ATTR_NR_POLL_QUEUES])
		d->nr_poll_queues =
			nla_get_u32(tb[RMBD_CLIENT_ATTR_NR_POLL_QUEUES]);
	if (tb[RMBD_CLIENT_ATTR_RECONNECT_DELAY])
		d->reconnect_delay =
			nla_get_u32(tb[RMBD_CLIENT_ATTR_RECONNECT_DELAY]);
	if (tb[RMBD_CLIENT_ATTR_LOSS_TIMEOUT])
		d->loss_timeout = nla_get_u32(tb[RMBD_CLIENT_ATTR_LOSS_TIMEOUT]);
	if (tb[RMBD_CLIENT_ATTR_NR_RECONNECTS])
		d->nr_reconnects =
			nla_get_u32(tb[RMBD_CLIENT_ATTR_NR_RECONNECTS]);
	return 0;
}

/* The attributes of DEV_CONNECT; optional ones only when given. */
static int rmbd_put_connect_opts(struct nl_msg *msg,
				 const struct rmbd_connect_opts *opts)
{
	int ret;

	ret = nla_put_string(msg, RMBD_CLIENT_ATTR_ADDR, opts->addr);
	if (!ret && opts->port)
		ret = nla_put_u16(msg, RMBD_CLIENT_ATTR_PORT, opts->port);
	if (!ret)
		ret = nla_put_string(msg, RMBD_CLIENT_ATTR_EXPORT_NAME,
				     opts->export_name);
	if (!ret && opts->nr_io_queues)
		ret = nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_IO_QUEUES,
				  opts->nr_io_queues);
	if (!ret && opts->queue_depth)
		ret = nla_put_u32(msg, RMBD_CLIENT_ATTR_QUEUE_DEPTH,
				  opts->queue_depth);
	if (!ret && opts->nr_poll_queues)
		ret = nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_POLL_QUEUES,
				  opts->nr_poll_queues);
	if (!ret && opts->reconnect_delay)
		ret = nla_put_u32(msg, RMBD_CLIENT_ATTR_RECONNECT_DELAY,
				  opts->reconnect_delay);
	if (!ret && opts->has_loss_timeout)
		ret = nla_put_u32(msg, RMBD_CLIENT_ATTR_LOSS_TIMEOUT,
				  opts->loss_timeout);
	return ret;
}

int rmbd_dev_connect(struct rmbd_ctx *ctx,
		     const struct rmbd_connect_opts *opts,
		     struct rmbd_dev_info *out)
{
	struct nl_msg *msg;
	int ret;

	if (!opts || !opts->addr || !opts->export_name) {
		ctx->errmsg[0] = '\0';
		return -EINVAL;
	}
	ret = rmbd_msg_new(ctx, RMBD_FAM_CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT,
			   0, &msg);
	if (ret)
		return ret;
	if (rmbd_put_ret(msg, rmbd_put_connect_opts(msg, opts)))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_CLIENT, msg, rmbd_parse_dev_info, out);
}

static int rmbd_dev_msg(struct rmbd_ctx *ctx, uint8_t cmd, uint32_t index,
			struct nl_msg **msgp)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_CLIENT, cmd, 0, &msg);
	if (ret)
		return ret;
	ret = nla_put_u32(msg, RMBD_CLIENT_ATTR_DEV_INDEX, index);
	if (rmbd_put_ret(msg, ret))
		return -EMSGSIZE;
	*msgp = msg;
	return 0;
}

int rmbd_dev_disconnect(struct rmbd_ctx *ctx, uint32_t index, bool force)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_dev_msg(ctx, RMBD_CLIENT_CMD_DEV_DISCONNECT, index, &msg);
	if (ret)
		return ret;
	if (force && rmbd_put_ret(msg, nla_put_flag(msg,
						    RMBD_CLIENT_ATTR_FORCE)))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_CLIENT, msg, NULL, NULL);
}

int rmbd_dev_get(struct rmbd_ctx *ctx, uint32_t index,
		 struct rmbd_dev_info *out)
{
	struct rmbd_dev_info dummy;
	struct nl_msg *msg;
	int ret;

	ret = rmbd_dev_msg(ctx, RMBD_CLIENT_CMD_DEV_GET, index, &msg);
	if (ret)
		return ret;
	return rmbd_do(ctx, RMBD_FAM_CLIENT, msg, rmbd_parse_dev_info,
		       out ? out : &dummy);
}

struct rmbd_dev_walk {
	int (*cb)(const struct rmbd_dev_info *, void *);
	void *arg;
};

static int rmbd_walk_dev(struct nlattr **tb, void *arg)
{
	struct rmbd_dev_walk *w = arg;
	struct rmbd_dev_info d;

	if (!tb[RMBD_CLIENT_ATTR_DEV_INDEX])
		return 0;
	rmbd_parse_dev_info(tb, &d);
	return w->cb ? w->cb(&d, w->arg) : 0;
}

int rmbd_dev_list(struct rmbd_ctx *ctx,
		  int (*cb)(const struct rmbd_dev_info *, void *), void *arg)
{
	struct rmbd_dev_walk w = { cb, arg };
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_CLIENT, RMBD_CLIENT_CMD_DEV_GET,
			   NLM_F_DUMP, &msg);
	if (ret)
		return ret;
	return rmbd_transact(ctx, RMBD_FAM_CLIENT, msg, rmbd_walk_dev, &w,
			     NULL);
}

const char *rmbd_dev_state_name(uint8_t state)
{
	switch (state) {
	case RMBD_DEV_STATE_CONNECTING:
		return "connecting";
	case RMBD_DEV_STATE_LIVE:
		return "live";
	case RMBD_DEV_STATE_FAILED:
		return "failed";
	case RMBD_DEV_STATE_DELETING:
		return "deleting";
	case RMBD_DEV_STATE_RECONNECTING:
		return "reconnecting";
	default:
		return "unknown";
	}
}
