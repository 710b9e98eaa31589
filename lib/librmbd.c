// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * librmbd: generic netlink requests to the rmbd target and client modules.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

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

/* Each family's bit in the RMBD_EVENTS_* masks */
static const unsigned int rmbd_event_bit[RMBD_NR_FAMILIES] = {
	[RMBD_FAM_TARGET]	= RMBD_EVENTS_TARGET,
	[RMBD_FAM_CLIENT]	= RMBD_EVENTS_CLIENT,
};

#define RMBD_MAX_ATTR \
	((int)RMBD_TARGET_ATTR_MAX > (int)RMBD_CLIENT_ATTR_MAX ? \
	 (int)RMBD_TARGET_ATTR_MAX : (int)RMBD_CLIENT_ATTR_MAX)

/* Bytes of one datagram of events; the kernel's are below a page. */
#define RMBD_EV_BUF_SIZE	32768

struct rmbd_ctx {
	struct nl_sock *sk;
	int family[RMBD_NR_FAMILIES];	/* 0: not resolved yet */
	char errmsg[256];
	/* RMBD_EVENTS_* bits: the families not found, by the failed call */
	unsigned int missing;
	int64_t err_offs;	/* the ext ack's offset of the bad attribute */

	/* Events: a socket of their own, and the datagram being read. */
	struct nl_sock *ev_sk;
	int ev_fd;			/* -1: none */
	unsigned int ev_joined;		/* RMBD_EVENTS_* */
	char *ev_buf;
	size_t ev_len, ev_off;		/* ev_off: the next message */
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

/* No error message, no module found missing. */
static void rmbd_err_clear(struct rmbd_ctx *ctx)
{
	ctx->errmsg[0] = '\0';
	ctx->missing = 0;
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
	if (tb[NLMSGERR_ATTR_OFFS])
		ctx->err_offs = nla_get_u32(tb[NLMSGERR_ATTR_OFFS]);
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
		ctx->missing |= rmbd_event_bit[fam];
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

	rmbd_err_clear(ctx);
	ctx->err_offs = -1;
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
			/*
			 * libnl's word for recvmsg()'s ENOBUFS: the kernel
			 * dropped a message to us (its reply or its ack could
			 * not be allocated, or found no room), after the
			 * command ran or not.  (libnl's own allocations fail
			 * so too; then as well the outcome is unknown.)
			 */
			if (req.err == -ENOMEM) {
				req.err = -ENOBUFS;
				rmbd_set_errmsg(ctx, "the kernel's answer was lost (no memory or no room for it): the command may have been carried out (look with show)");
			}
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
	ctx->ev_fd = -1;
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
	if (ctx->ev_sk)
		nl_socket_free(ctx->ev_sk);
	free(ctx->ev_buf);
	free(ctx);
}

const char *rmbd_version(void)
{
	return RMBD_VERSION;
}

const char *rmbd_errmsg(const struct rmbd_ctx *ctx)
{
	return ctx ? ctx->errmsg : "";
}

unsigned int rmbd_missing_modules(const struct rmbd_ctx *ctx)
{
	return ctx ? ctx->missing : 0;
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
	e->any_host = tb[RMBD_TARGET_ATTR_EXPORT_ANY_HOST] != NULL;
	e->shared = tb[RMBD_TARGET_ATTR_EXPORT_SHARED] != NULL;
	e->read_only = tb[RMBD_TARGET_ATTR_EXPORT_READ_ONLY] != NULL;
	if (tb[RMBD_TARGET_ATTR_EXPORT_HOSTS]) {
		struct nlattr *a;
		int rem;

		nla_for_each_nested(a, tb[RMBD_TARGET_ATTR_EXPORT_HOSTS], rem) {
			if (nla_type(a) != RMBD_TARGET_ATTR_HOST ||
			    e->nr_hosts >= RMBD_MAX_EXPORT_HOSTS)
				continue;
			nla_strlcpy(e->hosts[e->nr_hosts++], a, RMBD_HOST_MAX);
		}
	}
	if (tb[RMBD_TARGET_ATTR_EXPORT_AUTH_HOSTS]) {
		struct nlattr *a;
		int rem;

		nla_for_each_nested(a, tb[RMBD_TARGET_ATTR_EXPORT_AUTH_HOSTS],
				    rem) {
			if (nla_type(a) != RMBD_TARGET_ATTR_HOST ||
			    e->nr_auth_hosts >= RMBD_MAX_EXPORT_HOSTS)
				continue;
			nla_strlcpy(e->auth_hosts[e->nr_auth_hosts++], a,
				    RMBD_HOST_MAX);
		}
	}
	return 0;
}

/* The attributes of EXPORT_ADD; optional ones only when given. */
static int rmbd_put_export_opts(struct nl_msg *msg,
				const struct rmbd_export_opts *opts)
{
	struct nlattr *nest;
	uint32_t i;
	int ret;

	ret = nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, opts->name);
	if (!ret)
		ret = nla_put_u64(msg, RMBD_TARGET_ATTR_EXPORT_SIZE, opts->size);
	if (!ret && opts->slab_size)
		ret = nla_put_u64(msg, RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE,
				  opts->slab_size);
	if (!ret && opts->any_host)
		ret = nla_put_flag(msg, RMBD_TARGET_ATTR_EXPORT_ANY_HOST);
	if (!ret && opts->shared)
		ret = nla_put_flag(msg, RMBD_TARGET_ATTR_EXPORT_SHARED);
	if (!ret && opts->read_only)
		ret = nla_put_flag(msg, RMBD_TARGET_ATTR_EXPORT_READ_ONLY);
	if (ret || !opts->nr_hosts)
		return ret;
	nest = nla_nest_start(msg, RMBD_TARGET_ATTR_EXPORT_HOSTS);
	if (!nest)
		return -NLE_NOMEM;
	for (i = 0; i < opts->nr_hosts && !ret; i++)
		ret = nla_put_string(msg, RMBD_TARGET_ATTR_HOST, opts->hosts[i]);
	if (!ret)
		nla_nest_end(msg, nest);
	return ret;
}

int rmbd_export_create(struct rmbd_ctx *ctx,
		       const struct rmbd_export_opts *opts,
		       struct rmbd_export_info *out)
{
	struct nl_msg *msg;
	int ret;

	if (!opts || !opts->name || (opts->nr_hosts && !opts->hosts)) {
		rmbd_err_clear(ctx);
		return -EINVAL;
	}
	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, RMBD_TARGET_CMD_EXPORT_ADD,
			   0, &msg);
	if (ret)
		return ret;
	if (rmbd_put_ret(msg, rmbd_put_export_opts(msg, opts)))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_TARGET, msg, rmbd_parse_export, out);
}

int rmbd_export_add(struct rmbd_ctx *ctx, const char *name, uint64_t size,
		    uint64_t slab_size, struct rmbd_export_info *out)
{
	const struct rmbd_export_opts opts = {
		.name		= name,
		.size		= size,
		.slab_size	= slab_size,
	};

	return rmbd_export_create(ctx, &opts, out);
}

static int rmbd_export_host(struct rmbd_ctx *ctx, uint8_t cmd,
			    const char *name, const char *host,
			    const uint8_t *secret, size_t secret_len)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, cmd, 0, &msg);
	if (ret)
		return ret;
	ret = nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, name);
	if (!ret)
		ret = nla_put_string(msg, RMBD_TARGET_ATTR_HOST, host);
	if (!ret && secret)
		ret = nla_put(msg, RMBD_TARGET_ATTR_SECRET, (int)secret_len,
			      secret);
	if (rmbd_put_ret(msg, ret))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_TARGET, msg, NULL, NULL);
}

int rmbd_export_host_add(struct rmbd_ctx *ctx, const char *name,
			 const char *host, const uint8_t *secret,
			 size_t secret_len)
{
	return rmbd_export_host(ctx, RMBD_TARGET_CMD_EXPORT_HOST_ADD, name,
				host, secret, secret_len);
}

int rmbd_export_host_del(struct rmbd_ctx *ctx, const char *name,
			 const char *host)
{
	return rmbd_export_host(ctx, RMBD_TARGET_CMD_EXPORT_HOST_DEL, name,
				host, NULL, 0);
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

	/*
	 * Every export message carries the total, as it was when the
	 * message was filled: the last one read is the latest.
	 */
	if (tb[RMBD_TARGET_ATTR_TOTAL_MEM] && w->total_mem)
		*w->total_mem = nla_get_u64(tb[RMBD_TARGET_ATTR_TOTAL_MEM]);
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
	if (tb[RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS])
		l->max_sessions =
			nla_get_u32(tb[RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS]);
	if (tb[RMBD_TARGET_ATTR_LISTENER_SESSIONS])
		l->sessions = nla_get_u32(tb[RMBD_TARGET_ATTR_LISTENER_SESSIONS]);
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
		      uint32_t max_sessions, struct rmbd_listener_info *out)
{
	struct nl_msg *msg;
	int ret;

	ret = rmbd_listener_msg(ctx, RMBD_TARGET_CMD_LISTENER_ADD, addr, port,
				&msg);
	if (ret)
		return ret;
	if (max_sessions &&
	    rmbd_put_ret(msg, nla_put_u32(msg,
					  RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS,
					  max_sessions)))
		return -EMSGSIZE;
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

static void rmbd_parse_leg_info(struct nlattr *nest, struct rmbd_leg_info *l)
{
	struct nlattr *tb[RMBD_LEG_ATTR_MAX + 1];

	memset(l, 0, sizeof(*l));
	if (nla_parse_nested(tb, RMBD_LEG_ATTR_MAX, nest, NULL))
		return;
	if (tb[RMBD_LEG_ATTR_INDEX])
		l->index = nla_get_u32(tb[RMBD_LEG_ATTR_INDEX]);
	if (tb[RMBD_LEG_ATTR_STATE])
		l->state = nla_get_u8(tb[RMBD_LEG_ATTR_STATE]);
	if (tb[RMBD_LEG_ATTR_ADDR])
		nla_strlcpy(l->addr, tb[RMBD_LEG_ATTR_ADDR], sizeof(l->addr));
	if (tb[RMBD_LEG_ATTR_PORT])
		l->port = nla_get_u16(tb[RMBD_LEG_ATTR_PORT]);
	if (tb[RMBD_LEG_ATTR_EXPORT_NAME])
		nla_strlcpy(l->export_name, tb[RMBD_LEG_ATTR_EXPORT_NAME],
			    sizeof(l->export_name));
	if (tb[RMBD_LEG_ATTR_SIZE])
		l->size = nla_get_u64(tb[RMBD_LEG_ATTR_SIZE]);
	if (tb[RMBD_LEG_ATTR_SLAB_SIZE])
		l->slab_size = nla_get_u64(tb[RMBD_LEG_ATTR_SLAB_SIZE]);
	if (tb[RMBD_LEG_ATTR_NR_SLABS])
		l->nr_slabs = nla_get_u32(tb[RMBD_LEG_ATTR_NR_SLABS]);
	if (tb[RMBD_LEG_ATTR_NR_RECONNECTS])
		l->nr_reconnects = nla_get_u32(tb[RMBD_LEG_ATTR_NR_RECONNECTS]);
	if (tb[RMBD_LEG_ATTR_DIRTY])
		l->dirty = nla_get_u64(tb[RMBD_LEG_ATTR_DIRTY]);
}

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
	d->shared = tb[RMBD_CLIENT_ATTR_SHARED] != NULL;
	if (tb[RMBD_CLIENT_ATTR_HOST])
		nla_strlcpy(d->host, tb[RMBD_CLIENT_ATTR_HOST], sizeof(d->host));
	d->auth = tb[RMBD_CLIENT_ATTR_AUTH] != NULL;
	d->read_only = tb[RMBD_CLIENT_ATTR_READ_ONLY] != NULL;
	if (tb[RMBD_CLIENT_ATTR_LAYOUT])
		d->layout = nla_get_u8(tb[RMBD_CLIENT_ATTR_LAYOUT]);
	if (tb[RMBD_CLIENT_ATTR_COPIES])
		d->copies = nla_get_u8(tb[RMBD_CLIENT_ATTR_COPIES]);
	if (tb[RMBD_CLIENT_ATTR_EXTENT_SIZE])
		d->extent_size = nla_get_u64(tb[RMBD_CLIENT_ATTR_EXTENT_SIZE]);
	if (tb[RMBD_CLIENT_ATTR_SPARES]) {
		struct nlattr *a;
		int rem;

		nla_for_each_nested(a, tb[RMBD_CLIENT_ATTR_SPARES], rem) {
			if (nla_type(a) != RMBD_CLIENT_ATTR_LEG ||
			    d->nr_spares >= RMBD_DEV_MAX_SPARES)
				continue;
			rmbd_parse_leg_info(a, &d->spares[d->nr_spares++]);
		}
	}
	if (tb[RMBD_CLIENT_ATTR_LEGS]) {
		struct nlattr *a;
		int rem;

		nla_for_each_nested(a, tb[RMBD_CLIENT_ATTR_LEGS], rem) {
			if (nla_type(a) != RMBD_CLIENT_ATTR_LEG ||
			    d->nr_legs >= RMBD_DEV_MAX_LEGS)
				continue;
			rmbd_parse_leg_info(a, &d->legs[d->nr_legs++]);
		}
	}
	return 0;
}

/*
 * DEV_CONNECT's reply: the device, or before a refusal, the export's
 * holder.
 */
struct rmbd_connect_reply {
	struct rmbd_dev_info dev;
	char holder[RMBD_HOST_MAX];
};

static int rmbd_parse_connect(struct nlattr **tb, void *arg)
{
	struct rmbd_connect_reply *r = arg;

	if (tb[RMBD_CLIENT_ATTR_HOLDER]) {
		nla_strlcpy(r->holder, tb[RMBD_CLIENT_ATTR_HOLDER],
			    sizeof(r->holder));
		return 0;
	}
	return rmbd_parse_dev_info(tb, &r->dev);
}

/*
 * The legs of DEV_CONNECT, as a RMBD_CLIENT_ATTR_LEGS nest; @offs gets
 * the offset of each leg's nest in the message, which a refusal's ext ack
 * points at.
 */
/*
 * Legs @l (@n of them) as nest @type (RMBD_CLIENT_ATTR_LEGS or _SPARES),
 * the offset of each LEG nest in @offs (at most @max of them).
 */
static int rmbd_put_legs(struct nl_msg *msg, int type,
			 const struct rmbd_leg_opts *legs_opts, unsigned int n,
			 int64_t *offs, unsigned int max)
{
	const struct rmbd_leg_opts *l;
	struct nlattr *legs, *leg;
	unsigned int i;
	int ret = 0;

	legs = nla_nest_start(msg, type);
	if (!legs)
		return -NLE_NOMEM;
	for (i = 0; !ret && i < n; i++) {
		l = &legs_opts[i];
		leg = nla_nest_start(msg, RMBD_CLIENT_ATTR_LEG);
		if (!leg)
			return -NLE_NOMEM;
		/* More legs than this are the kernel's to refuse. */
		if (i < max)
			offs[i] = (char *)leg - (char *)nlmsg_hdr(msg);
		ret = nla_put_string(msg, RMBD_LEG_ATTR_ADDR, l->addr);
		if (!ret && l->port)
			ret = nla_put_u16(msg, RMBD_LEG_ATTR_PORT, l->port);
		if (!ret)
			ret = nla_put_string(msg, RMBD_LEG_ATTR_EXPORT_NAME,
					     l->export_name);
		if (!ret)
			nla_nest_end(msg, leg);
	}
	if (!ret)
		nla_nest_end(msg, legs);
	return ret;
}

/* The attributes of DEV_CONNECT; optional ones only when given. */
static int rmbd_put_connect_opts(struct nl_msg *msg,
				 const struct rmbd_connect_opts *opts,
				 int64_t *offs)
{
	int ret;

	if (opts->nr_legs) {
		ret = rmbd_put_legs(msg, RMBD_CLIENT_ATTR_LEGS, opts->legs,
				    opts->nr_legs, offs, RMBD_MAX_LEGS);
		if (!ret && opts->nr_spares)
			ret = rmbd_put_legs(msg, RMBD_CLIENT_ATTR_SPARES,
					    opts->spares, opts->nr_spares,
					    offs + RMBD_MAX_LEGS,
					    RMBD_MAX_SPARES);
	} else {
		ret = nla_put_string(msg, RMBD_CLIENT_ATTR_ADDR, opts->addr);
		if (!ret && opts->port)
			ret = nla_put_u16(msg, RMBD_CLIENT_ATTR_PORT,
					  opts->port);
		if (!ret)
			ret = nla_put_string(msg, RMBD_CLIENT_ATTR_EXPORT_NAME,
					     opts->export_name);
	}
	if (!ret && opts->layout)
		ret = nla_put_u8(msg, RMBD_CLIENT_ATTR_LAYOUT, opts->layout);
	if (!ret && opts->copies)
		ret = nla_put_u8(msg, RMBD_CLIENT_ATTR_COPIES, opts->copies);
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
	if (!ret && opts->shared)
		ret = nla_put_flag(msg, RMBD_CLIENT_ATTR_SHARED);
	if (!ret && opts->host && opts->host[0])
		ret = nla_put_string(msg, RMBD_CLIENT_ATTR_HOST, opts->host);
	if (!ret && opts->secret)
		ret = nla_put(msg, RMBD_CLIENT_ATTR_SECRET, (int)opts->secret_len,
			      opts->secret);
	if (!ret && opts->read_only)
		ret = nla_put_flag(msg, RMBD_CLIENT_ATTR_READ_ONLY);
	return ret;
}

/*
 * Whether the legs and spares of @opts are there, and the device's own
 * target not: spares go with legs only.
 */
static bool rmbd_legs_valid(const struct rmbd_connect_opts *opts)
{
	unsigned int i;

	if (!opts->nr_legs)
		return opts->addr && opts->export_name && !opts->nr_spares;
	if (!opts->legs || opts->addr || opts->export_name || opts->port ||
	    (opts->nr_spares && !opts->spares))
		return false;
	for (i = 0; i < opts->nr_legs; i++)
		if (!opts->legs[i].addr || !opts->legs[i].export_name)
			return false;
	for (i = 0; i < opts->nr_spares; i++)
		if (!opts->spares[i].addr || !opts->spares[i].export_name)
			return false;
	return true;
}

/* Name leg (or spare: @what) @i, @l, before the kernel's message. */
static void rmbd_leg_errmsg(struct rmbd_ctx *ctx, const char *what,
			    const struct rmbd_leg_opts *l, int64_t i)
{
	char msg[sizeof(ctx->errmsg)];

	memcpy(msg, ctx->errmsg, sizeof(msg));
	if (l->port)
		rmbd_set_errmsg(ctx, "%s %" PRId64 " (addr %s port %u export %s): %s",
				what, i, l->addr, l->port, l->export_name, msg);
	else
		rmbd_set_errmsg(ctx, "%s %" PRId64 " (addr %s export %s): %s",
				what, i, l->addr, l->export_name, msg);
}

int rmbd_dev_connect(struct rmbd_ctx *ctx,
		     const struct rmbd_connect_opts *opts,
		     struct rmbd_dev_info *out)
{
	int64_t offs[RMBD_MAX_LEGS + RMBD_MAX_SPARES];
	struct rmbd_connect_reply r;
	struct rmbd_connect_opts o;
	char host[RMBD_HOST_MAX];
	struct nl_msg *msg;
	unsigned int i;
	int ret;

	if (!opts || !rmbd_legs_valid(opts)) {
		rmbd_err_clear(ctx);
		return -EINVAL;
	}
	o = *opts;
	if (!o.host) {
		ret = rmbd_host_default(host, sizeof(host));
		if (ret) {
			rmbd_err_clear(ctx);
			snprintf(ctx->errmsg, sizeof(ctx->errmsg),
				 ret == -ENOENT ?
				 "this machine has no host identity: write one to /etc/rmbd/hostid" :
				 "/etc/rmbd/hostid holds no valid host identity");
			return ret;
		}
		o.host = host;
	}
	ret = rmbd_msg_new(ctx, RMBD_FAM_CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT,
			   0, &msg);
	if (ret)
		return ret;
	for (i = 0; i < RMBD_MAX_LEGS + RMBD_MAX_SPARES; i++)
		offs[i] = -1;
	if (rmbd_put_ret(msg, rmbd_put_connect_opts(msg, &o, offs)))
		return -EMSGSIZE;
	memset(&r, 0, sizeof(r));
	ret = rmbd_do(ctx, RMBD_FAM_CLIENT, msg, rmbd_parse_connect, &r);
	if (ret == -EBUSY && r.holder[0])
		rmbd_set_errmsg(ctx, "export in use by host %s", r.holder);
	/* A refusal about one leg points at its nest. */
	for (i = 0; ret && o.nr_legs > 1 && i < o.nr_legs && i < RMBD_MAX_LEGS;
	     i++) {
		if (ctx->err_offs >= 0 && ctx->err_offs == offs[i]) {
			rmbd_leg_errmsg(ctx, "leg", &o.legs[i], (int64_t)i);
			break;
		}
	}
	for (i = 0; ret && i < o.nr_spares && i < RMBD_MAX_SPARES; i++) {
		if (ctx->err_offs >= 0 &&
		    ctx->err_offs == offs[RMBD_MAX_LEGS + i]) {
			rmbd_leg_errmsg(ctx, "spare", &o.spares[i], (int64_t)i);
			break;
		}
	}
	if (!ret && out)
		*out = r.dev;
	return ret;
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

int rmbd_dev_replace(struct rmbd_ctx *ctx, uint32_t index, uint32_t leg,
		     const struct rmbd_leg_opts *to, struct rmbd_dev_info *out)
{
	struct rmbd_dev_info dummy;
	struct nl_msg *msg;
	int ret;

	if (!to || !to->addr || !to->export_name) {
		rmbd_err_clear(ctx);
		return -EINVAL;
	}
	ret = rmbd_dev_msg(ctx, RMBD_CLIENT_CMD_DEV_REPLACE, index, &msg);
	if (ret)
		return ret;
	ret = nla_put_u32(msg, RMBD_CLIENT_ATTR_LEG_INDEX, leg);
	if (!ret)
		ret = nla_put_string(msg, RMBD_CLIENT_ATTR_ADDR, to->addr);
	if (!ret && to->port)
		ret = nla_put_u16(msg, RMBD_CLIENT_ATTR_PORT, to->port);
	if (!ret)
		ret = nla_put_string(msg, RMBD_CLIENT_ATTR_EXPORT_NAME,
				     to->export_name);
	if (rmbd_put_ret(msg, ret))
		return -EMSGSIZE;
	return rmbd_do(ctx, RMBD_FAM_CLIENT, msg, rmbd_parse_dev_info,
		       out ? out : &dummy);
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

/* One counter of a STATS nest into @c; unknown or malformed ones are left. */
static void rmbd_parse_counter(struct nlattr *a, struct rmbd_dev_counters *c)
{
	uint64_t *u64s[RMBD_STATS_ATTR_MAX + 1] = {
		[RMBD_STATS_ATTR_READS]		= &c->reads,
		[RMBD_STATS_ATTR_READ_BYTES]	= &c->read_bytes,
		[RMBD_STATS_ATTR_WRITES]	= &c->writes,
		[RMBD_STATS_ATTR_WRITE_BYTES]	= &c->write_bytes,
		[RMBD_STATS_ATTR_DISCARDS]	= &c->discards,
		[RMBD_STATS_ATTR_DISCARD_BYTES]	= &c->discard_bytes,
		[RMBD_STATS_ATTR_ERRORS]	= &c->errors,
		[RMBD_STATS_ATTR_REQUEUES]	= &c->requeues,
		[RMBD_STATS_ATTR_TIMEOUTS]	= &c->timeouts,
	};
	uint32_t *u32s[RMBD_STATS_ATTR_MAX + 1] = {
		[RMBD_STATS_ATTR_INDEX]		= &c->queue,
		[RMBD_STATS_ATTR_IN_FLIGHT]	= &c->in_flight,
		[RMBD_STATS_ATTR_RECONNECTS]	= &c->reconnects,
	};
	int type = nla_type(a);

	if (type > RMBD_STATS_ATTR_MAX)
		return;
	if (u64s[type] && nla_len(a) == sizeof(uint64_t))
		*u64s[type] = nla_get_u64(a);
	else if (u32s[type] && nla_len(a) == sizeof(uint32_t))
		*u32s[type] = nla_get_u32(a);
	else if (type == RMBD_STATS_ATTR_POLL)
		c->poll = true;
}

static void rmbd_parse_counters(struct nlattr *nest,
				struct rmbd_dev_counters *c)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem)
		rmbd_parse_counter(a, c);
}

static void rmbd_parse_stats(struct nlattr *nest, struct rmbd_dev_stats *st)
{
	struct nlattr *a;
	int rem;

	memset(st, 0, sizeof(*st));
	if (!nest)
		return;
	st->valid = true;
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != RMBD_STATS_ATTR_QUEUE) {
			rmbd_parse_counter(a, &st->total);
		} else if (st->nr_queues < RMBD_DEV_MAX_QUEUES) {
			rmbd_parse_counters(a, &st->queues[st->nr_queues]);
			st->nr_queues++;
		}
	}
}

struct rmbd_dev_stats_reply {
	struct rmbd_dev_info *info;
	struct rmbd_dev_stats *stats;
	int (*cb)(const struct rmbd_dev_info *,
		  const struct rmbd_dev_stats *, void *);
	void *arg;
};

static int rmbd_parse_dev_stats(struct nlattr **tb, void *arg)
{
	struct rmbd_dev_stats_reply *r = arg;

	if (!tb[RMBD_CLIENT_ATTR_DEV_INDEX])
		return 0;
	rmbd_parse_dev_info(tb, r->info);
	rmbd_parse_stats(tb[RMBD_CLIENT_ATTR_STATS], r->stats);
	return r->cb ? r->cb(r->info, r->stats, r->arg) : 0;
}

/*
 * A module older than the library refuses GET_STATS as an attribute it
 * does not know: its devices then come without counters (stats->valid
 * false), as those of a module that keeps none.
 */
static bool rmbd_unknown_attr(const struct rmbd_ctx *ctx, int ret)
{
	return ret == -EINVAL && !strcmp(ctx->errmsg, "Unknown attribute type");
}

/* DEV_GET of one device (index) or of all (dump), with GET_STATS or not */
static int rmbd_dev_get_counted(struct rmbd_ctx *ctx, bool dump,
				uint32_t index, bool stats,
				struct rmbd_dev_stats_reply *r)
{
	struct nl_msg *msg;
	int ret;

	ret = dump ? rmbd_msg_new(ctx, RMBD_FAM_CLIENT, RMBD_CLIENT_CMD_DEV_GET,
				  NLM_F_DUMP, &msg) :
		     rmbd_dev_msg(ctx, RMBD_CLIENT_CMD_DEV_GET, index, &msg);
	if (ret)
		return ret;
	if (stats &&
	    rmbd_put_ret(msg, nla_put_flag(msg, RMBD_CLIENT_ATTR_GET_STATS)))
		return -EMSGSIZE;
	if (!dump)
		return rmbd_do(ctx, RMBD_FAM_CLIENT, msg, rmbd_parse_dev_stats,
			       r);
	return rmbd_transact(ctx, RMBD_FAM_CLIENT, msg, rmbd_parse_dev_stats,
			     r, NULL);
}

int rmbd_dev_get_stats(struct rmbd_ctx *ctx, uint32_t index,
		       struct rmbd_dev_info *out, struct rmbd_dev_stats *stats)
{
	struct rmbd_dev_stats_reply r = { .info = out, .stats = stats };
	int ret;

	if (!out || !stats) {
		ctx->errmsg[0] = '\0';
		return -EINVAL;
	}
	ret = rmbd_dev_get_counted(ctx, false, index, true, &r);
	if (rmbd_unknown_attr(ctx, ret))
		ret = rmbd_dev_get_counted(ctx, false, index, false, &r);
	return ret;
}

int rmbd_dev_list_stats(struct rmbd_ctx *ctx,
			int (*cb)(const struct rmbd_dev_info *,
				  const struct rmbd_dev_stats *, void *),
			void *arg)
{
	struct rmbd_dev_stats_reply r = { .cb = cb, .arg = arg };
	struct rmbd_dev_info info;
	int ret;

	r.info = &info;
	r.stats = malloc(sizeof(*r.stats));
	if (!r.stats)
		return -ENOMEM;
	ret = rmbd_dev_get_counted(ctx, true, 0, true, &r);
	/* Refused before any reply: no device was passed to cb yet */
	if (rmbd_unknown_attr(ctx, ret))
		ret = rmbd_dev_get_counted(ctx, true, 0, false, &r);
	free(r.stats);
	return ret;
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

const char *rmbd_layout_name(uint8_t layout)
{
	switch (layout) {
	case RMBD_LAYOUT_MIRROR:
		return "mirror";
	case RMBD_LAYOUT_POOL:
		return "pool";
	default:
		return "unknown";
	}
}

const char *rmbd_leg_state_name(uint8_t state)
{
	switch (state) {
	case RMBD_LEG_STATE_DOWN:
		return "down";
	case RMBD_LEG_STATE_UP:
		return "up";
	case RMBD_LEG_STATE_STALE:
		return "stale";
	case RMBD_LEG_STATE_FAILED:
		return "failed";
	default:
		return "unknown";
	}
}

/* Events. */

/* What an event may carry; strings must end in a NUL. */
static const struct nla_policy
rmbd_client_event_policy[RMBD_CLIENT_ATTR_MAX + 1] = {
	[RMBD_CLIENT_ATTR_DEV_INDEX]		= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_DEV_NAME]		= { .type = NLA_STRING },
	[RMBD_CLIENT_ATTR_DEV_SIZE]		= { .type = NLA_U64 },
	[RMBD_CLIENT_ATTR_DEV_STATE]		= { .type = NLA_U8 },
	[RMBD_CLIENT_ATTR_ADDR]			= { .type = NLA_STRING },
	[RMBD_CLIENT_ATTR_PORT]			= { .type = NLA_U16 },
	[RMBD_CLIENT_ATTR_EXPORT_NAME]		= { .type = NLA_STRING },
	[RMBD_CLIENT_ATTR_NR_IO_QUEUES]		= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_QUEUE_DEPTH]		= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_SLAB_SIZE]		= { .type = NLA_U64 },
	[RMBD_CLIENT_ATTR_NR_POLL_QUEUES]	= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_RECONNECT_DELAY]	= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_LOSS_TIMEOUT]		= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_NR_RECONNECTS]	= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_EVENT]		= { .type = NLA_U8 },
	[RMBD_CLIENT_ATTR_SHARED]		= { .type = NLA_FLAG },
	[RMBD_CLIENT_ATTR_HOST]			= { .type = NLA_STRING },
	[RMBD_CLIENT_ATTR_AUTH]			= { .type = NLA_FLAG },
	[RMBD_CLIENT_ATTR_READ_ONLY]		= { .type = NLA_FLAG },
};

static const struct nla_policy
rmbd_target_event_policy[RMBD_TARGET_ATTR_MAX + 1] = {
	[RMBD_TARGET_ATTR_EXPORT_NAME]		= { .type = NLA_STRING },
	[RMBD_TARGET_ATTR_EVENT]		= { .type = NLA_U8 },
	[RMBD_TARGET_ATTR_SESSION_ID]		= { .type = NLA_U64 },
	[RMBD_TARGET_ATTR_SESSION_PEER]		= { .type = NLA_STRING },
	[RMBD_TARGET_ATTR_SESSION_HOST]		= { .type = NLA_STRING },
	[RMBD_TARGET_ATTR_SESSION_UP]		= { .type = NLA_FLAG },
	[RMBD_TARGET_ATTR_SESSION_AUTH]		= { .type = NLA_FLAG },
	[RMBD_TARGET_ATTR_SESSION_READ_ONLY]	= { .type = NLA_FLAG },
};

/* A session, from an event (checked by its policy) or a SESSION_GET dump. */
static void rmbd_parse_session(struct nlattr **tb, struct rmbd_session_info *s)
{
	memset(s, 0, sizeof(*s));
	if (tb[RMBD_TARGET_ATTR_SESSION_ID])
		s->id = nla_get_u64(tb[RMBD_TARGET_ATTR_SESSION_ID]);
	if (tb[RMBD_TARGET_ATTR_SESSION_PEER])
		nla_strlcpy(s->peer, tb[RMBD_TARGET_ATTR_SESSION_PEER],
			    sizeof(s->peer));
	if (tb[RMBD_TARGET_ATTR_EXPORT_NAME])
		nla_strlcpy(s->export_name, tb[RMBD_TARGET_ATTR_EXPORT_NAME],
			    sizeof(s->export_name));
	if (tb[RMBD_TARGET_ATTR_SESSION_HOST])
		nla_strlcpy(s->host, tb[RMBD_TARGET_ATTR_SESSION_HOST],
			    sizeof(s->host));
	s->up = tb[RMBD_TARGET_ATTR_SESSION_UP] != NULL;
	s->auth = tb[RMBD_TARGET_ATTR_SESSION_AUTH] != NULL;
	s->read_only = tb[RMBD_TARGET_ATTR_SESSION_READ_ONLY] != NULL;
	if (tb[RMBD_TARGET_ATTR_SESSION_MAPPED] &&
	    nla_len(tb[RMBD_TARGET_ATTR_SESSION_MAPPED]) == sizeof(uint32_t))
		s->mapped = nla_get_u32(tb[RMBD_TARGET_ATTR_SESSION_MAPPED]);
	if (tb[RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES] &&
	    nla_len(tb[RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES]) ==
	    sizeof(uint64_t))
		s->mapped_bytes =
			nla_get_u64(tb[RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES]);
}

struct rmbd_session_walk {
	int (*cb)(const struct rmbd_session_info *, void *);
	void *arg;
};

static int rmbd_walk_session(struct nlattr **tb, void *arg)
{
	struct rmbd_session_walk *w = arg;
	struct rmbd_session_info si;

	if (!tb[RMBD_TARGET_ATTR_SESSION_ID])
		return 0;
	rmbd_parse_session(tb, &si);
	return w->cb ? w->cb(&si, w->arg) : 0;
}

int rmbd_session_list(struct rmbd_ctx *ctx, const char *export_name,
		      int (*cb)(const struct rmbd_session_info *, void *),
		      void *arg)
{
	struct rmbd_session_walk w = { cb, arg };
	struct nl_msg *msg;
	int ret;

	ret = rmbd_msg_new(ctx, RMBD_FAM_TARGET, RMBD_TARGET_CMD_SESSION_GET,
			   NLM_F_DUMP, &msg);
	if (ret)
		return ret;
	if (export_name &&
	    rmbd_put_ret(msg, nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME,
					     export_name)))
		return -EMSGSIZE;
	return rmbd_transact(ctx, RMBD_FAM_TARGET, msg, rmbd_walk_session, &w,
			     NULL);
}

/*
 * Fills *ev from nlh if it is an event of a family this context resolved;
 * 0 if it is anything else (another family or command, a reply, an error,
 * a malformed event).
 */
static int rmbd_parse_event(const struct rmbd_ctx *ctx, struct nlmsghdr *nlh,
			    struct rmbd_event *ev)
{
	struct nlattr *tb[RMBD_MAX_ATTR + 1];
	const struct genlmsghdr *ghdr;
	int type = nlh->nlmsg_type;

	if (type < NLMSG_MIN_TYPE || nlh->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
		return 0;
	ghdr = nlmsg_data(nlh);

	if (ctx->family[RMBD_FAM_CLIENT] > 0 &&
	    type == ctx->family[RMBD_FAM_CLIENT]) {
		if (ghdr->cmd != RMBD_CLIENT_CMD_DEV_EVENT ||
		    genlmsg_parse(nlh, 0, tb, RMBD_CLIENT_ATTR_MAX,
				  rmbd_client_event_policy) < 0 ||
		    !tb[RMBD_CLIENT_ATTR_EVENT] ||
		    !tb[RMBD_CLIENT_ATTR_DEV_INDEX])
			return 0;
		memset(ev, 0, sizeof(*ev));
		ev->family = RMBD_EVENTS_CLIENT;
		ev->event = nla_get_u8(tb[RMBD_CLIENT_ATTR_EVENT]);
		rmbd_parse_dev_info(tb, &ev->dev);
		return 1;
	}

	if (ctx->family[RMBD_FAM_TARGET] > 0 &&
	    type == ctx->family[RMBD_FAM_TARGET]) {
		if (ghdr->cmd != RMBD_TARGET_CMD_SESSION_EVENT ||
		    genlmsg_parse(nlh, 0, tb, RMBD_TARGET_ATTR_MAX,
				  rmbd_target_event_policy) < 0 ||
		    !tb[RMBD_TARGET_ATTR_EVENT] ||
		    !tb[RMBD_TARGET_ATTR_SESSION_ID])
			return 0;
		memset(ev, 0, sizeof(*ev));
		ev->family = RMBD_EVENTS_TARGET;
		ev->event = nla_get_u8(tb[RMBD_TARGET_ATTR_EVENT]);
		rmbd_parse_session(tb, &ev->session);
		return 1;
	}
	return 0;
}

static int rmbd_events_open(struct rmbd_ctx *ctx)
{
	int ret;

	if (ctx->ev_sk)
		return 0;
	ctx->ev_sk = nl_socket_alloc();
	if (!ctx->ev_sk)
		return -ENOMEM;
	/* Nothing is sent on it: notifications have sequence number 0. */
	nl_socket_disable_seq_check(ctx->ev_sk);
	ret = genl_connect(ctx->ev_sk);
	if (ret < 0) {
		nl_socket_free(ctx->ev_sk);
		ctx->ev_sk = NULL;
		return rmbd_nlerr_to_errno(ret);
	}
	ctx->ev_fd = nl_socket_get_fd(ctx->ev_sk);
	return 0;
}

static int rmbd_events_join(struct rmbd_ctx *ctx, enum rmbd_family_id fam)
{
	const struct rmbd_family *f = &rmbd_families[fam];
	int id, grp, ret;

	id = rmbd_resolve(ctx, fam);
	if (id < 0)
		return id;
	grp = genl_ctrl_resolve_grp(ctx->sk, f->genl_name,
				    fam == RMBD_FAM_TARGET ?
				    RMBD_TARGET_MCGRP_EVENTS :
				    RMBD_CLIENT_MCGRP_EVENTS);
	if (grp == -NLE_OBJ_NOTFOUND) {
		rmbd_set_errmsg(ctx, "kernel module %s has no events group",
				f->module);
		return -EOPNOTSUPP;
	}
	if (grp < 0)
		return rmbd_nlerr_to_errno(grp);
	ret = nl_socket_add_membership(ctx->ev_sk, grp);
	if (ret < 0) {
		rmbd_set_errmsg(ctx, "cannot join the events group of %s",
				f->module);
		return rmbd_nlerr_to_errno(ret);
	}
	return 0;
}

int rmbd_events_subscribe(struct rmbd_ctx *ctx, unsigned int which,
			  unsigned int *joined)
{
	/* The client first: its message wins when both are missing. */
	static const enum rmbd_family_id order[] = {
		RMBD_FAM_CLIENT, RMBD_FAM_TARGET
	};
	char errmsg[sizeof(ctx->errmsg)] = "";
	unsigned int i, nr_missing = 0, nr_asked = 0;
	int ret, err = 0;

	rmbd_err_clear(ctx);
	if (!which || (which & ~RMBD_EVENTS_ALL)) {
		ret = -EINVAL;
		goto out;
	}
	ret = rmbd_events_open(ctx);
	if (ret)
		goto out;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		unsigned int bit = rmbd_event_bit[order[i]];

		if (!(which & bit))
			continue;
		nr_asked++;
		if (ctx->ev_joined & bit)
			continue;
		ret = rmbd_events_join(ctx, order[i]);
		if (!ret) {
			ctx->ev_joined |= bit;
			continue;
		}
		if (ret != -ENOENT && ret != -EOPNOTSUPP)
			goto out;
		/* Skipped; its error stands if nothing is joined. */
		if (ret == -ENOENT)
			nr_missing++;
		if (!err || err == -ENOENT) {
			err = ret;
			memcpy(errmsg, ctx->errmsg, sizeof(errmsg));
		}
	}

	if (ctx->ev_joined & which) {
		rmbd_err_clear(ctx);
		ret = 0;
	} else {
		ret = err;
		if (nr_asked > 1 && nr_missing == nr_asked)
			rmbd_set_errmsg(ctx, "neither %s nor %s is loaded",
					rmbd_families[RMBD_FAM_CLIENT].module,
					rmbd_families[RMBD_FAM_TARGET].module);
		else
			memcpy(ctx->errmsg, errmsg, sizeof(errmsg));
	}
out:
	if (joined)
		*joined = ctx->ev_joined;
	return ret;
}

int rmbd_events_fd(const struct rmbd_ctx *ctx)
{
	if (!ctx->ev_joined || ctx->ev_fd < 0)
		return -EINVAL;
	return ctx->ev_fd;
}

static int64_t rmbd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The next whole message of the datagram in ev_buf, or NULL. */
static struct nlmsghdr *rmbd_next_msg(struct rmbd_ctx *ctx)
{
	struct nlmsghdr *nlh;
	size_t left = ctx->ev_len - ctx->ev_off;

	if (ctx->ev_off >= ctx->ev_len || left < NLMSG_HDRLEN)
		goto none;
	nlh = (struct nlmsghdr *)(ctx->ev_buf + ctx->ev_off);
	if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > left)
		goto none;
	ctx->ev_off += NLMSG_ALIGN(nlh->nlmsg_len);
	return nlh;
none:
	ctx->ev_off = ctx->ev_len = 0;
	return NULL;
}

int rmbd_event_recv(struct rmbd_ctx *ctx, struct rmbd_event *ev,
		    int timeout_ms)
{
	int64_t deadline = timeout_ms > 0 ? rmbd_now_ms() + timeout_ms : 0;
	struct sockaddr_nl sa;
	struct nlmsghdr *nlh;
	struct pollfd pfd;
	struct iovec iov;
	struct msghdr mh;
	ssize_t len;
	int wait, ret;

	rmbd_err_clear(ctx);
	if (!ctx->ev_joined || ctx->ev_fd < 0)
		return -EINVAL;
	if (!ctx->ev_buf) {
		ctx->ev_buf = malloc(RMBD_EV_BUF_SIZE);
		if (!ctx->ev_buf)
			return -ENOMEM;
	}

	for (;;) {
		/* What is left of the last datagram comes first. */
		while ((nlh = rmbd_next_msg(ctx)))
			if (rmbd_parse_event(ctx, nlh, ev))
				return 1;

		wait = timeout_ms;
		if (timeout_ms > 0) {
			int64_t left = deadline - rmbd_now_ms();

			wait = left > 0 ? (int)left : 0;
		}
		pfd.fd = ctx->ev_fd;
		pfd.events = POLLIN;
		ret = poll(&pfd, 1, wait);
		if (ret < 0)
			return -errno;
		if (!ret)
			return 0;

		memset(&sa, 0, sizeof(sa));
		iov.iov_base = ctx->ev_buf;
		iov.iov_len = RMBD_EV_BUF_SIZE;
		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &sa;
		mh.msg_namelen = sizeof(sa);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		len = recvmsg(ctx->ev_fd, &mh, MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			if (errno == ENOBUFS)
				rmbd_set_errmsg(ctx,
						"events were lost: the receive buffer was full");
			return -errno;
		}
		/* Only the kernel sends events; a cut datagram is no use. */
		if ((mh.msg_flags & MSG_TRUNC) ||
		    (sa.nl_family == AF_NETLINK && sa.nl_pid != 0))
			continue;
		ctx->ev_len = (size_t)len;
		ctx->ev_off = 0;
	}
}
