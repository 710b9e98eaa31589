// SPDX-License-Identifier: GPL-2.0
/*
 * nl-fuzz: send malformed requests to the rmbd_target and rmbd_client
 * generic netlink families and check that the kernel refuses each one with
 * a policy-style error (EINVAL, ERANGE, ...) and an extended ack: a message
 * or, for a missing attribute, its type.
 *
 * Cases: required attributes missing, oversized strings, wrong lengths
 * and types, strings without a NUL, unknown attribute types, bad values
 * and unknown commands.  Output is KTAP; exit status 0 when every case
 * passed, 1 when one failed, 4 when neither family is registered.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/rmbd_client.h>
#include <linux/rmbd_target.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define BIG_LEN		4096
#define REPLY_TIMEOUT	30	/* seconds */

enum kind { A_END, A_U8, A_U16, A_U32, A_U64, A_STR, A_BIGSTR, A_RAW, A_FLAG };

struct attr {
	int type;
	enum kind kind;
	uint64_t val;
	const char *str;	/* A_STR: with NUL; A_RAW: without */
};

enum fam { TARGET, CLIENT };

struct fcase {
	enum fam fam;
	int cmd;
	bool dump;
	const char *desc;
	struct attr attrs[7];
	int miss;		/* the missing attribute extack must name */
};

#define T_NAME(s)	{ RMBD_TARGET_ATTR_EXPORT_NAME, A_STR, 0, s }
#define T_SIZE(v)	{ RMBD_TARGET_ATTR_EXPORT_SIZE, A_U64, v, NULL }
#define T_ADDR(s)	{ RMBD_TARGET_ATTR_LISTENER_ADDR, A_STR, 0, s }
#define C_ADDR(s)	{ RMBD_CLIENT_ATTR_ADDR, A_STR, 0, s }
#define C_EXP(s)	{ RMBD_CLIENT_ATTR_EXPORT_NAME, A_STR, 0, s }
#define ADDR		"10.200.0.1"
#define MB4		(4ULL << 20)

static const struct fcase cases[] = {
	/* rmbd_target: EXPORT_ADD */
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "no attributes", { },
	  RMBD_TARGET_ATTR_EXPORT_NAME },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "size missing", { T_NAME("fz1") },
	  RMBD_TARGET_ATTR_EXPORT_SIZE },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "name missing", { T_SIZE(MB4) },
	  RMBD_TARGET_ATTR_EXPORT_NAME },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "4 KiB name",
	  { { RMBD_TARGET_ATTR_EXPORT_NAME, A_BIGSTR }, T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "64-byte name",
	  { T_NAME("nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"),
	    T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "size as u8",
	  { T_NAME("fz2"), { RMBD_TARGET_ATTR_EXPORT_SIZE, A_U8, 4 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "size as u32",
	  { T_NAME("fz3"), { RMBD_TARGET_ATTR_EXPORT_SIZE, A_U32, MB4 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "name without NUL",
	  { { RMBD_TARGET_ATTR_EXPORT_NAME, A_RAW, 0, "fz4" }, T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "name as u32",
	  { { RMBD_TARGET_ATTR_EXPORT_NAME, A_U32, 0x41414141 }, T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "slab size as u8",
	  { T_NAME("fz5"), T_SIZE(MB4), { RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE, A_U8, 2 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "slab size 3 MiB",
	  { T_NAME("fz6"), T_SIZE(64ULL << 20),
	    { RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE, A_U64, 3ULL << 20 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "size 0", { T_NAME("fz8"), T_SIZE(0) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "size 4097",
	  { T_NAME("fz9"), T_SIZE(4097) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "empty name", { T_NAME(""), T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "name with a slash",
	  { T_NAME("a/b"), T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "name with a space",
	  { T_NAME("a b"), T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "name starting with a dot",
	  { T_NAME(".x"), T_SIZE(MB4) } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "force flag with a payload",
	  { T_NAME("fz11"), T_SIZE(MB4), { RMBD_TARGET_ATTR_EXPORT_FORCE, A_U32, 1 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "unknown attribute type",
	  { T_NAME("fz12"), T_SIZE(MB4), { RMBD_TARGET_ATTR_MAX + 1, A_U32, 1 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_ADD, false, "attribute type 0",
	  { T_NAME("fz13"), T_SIZE(MB4), { 0, A_U32, 1 } } },
	/* EXPORT_DEL */
	{ TARGET, RMBD_TARGET_CMD_EXPORT_DEL, false, "no attributes", { },
	  RMBD_TARGET_ATTR_EXPORT_NAME },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_DEL, false, "4 KiB name",
	  { { RMBD_TARGET_ATTR_EXPORT_NAME, A_BIGSTR } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_DEL, false, "name as u64",
	  { { RMBD_TARGET_ATTR_EXPORT_NAME, A_U64, 0x4141414141414141ULL } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_DEL, false, "force flag with a payload",
	  { T_NAME("keep"), { RMBD_TARGET_ATTR_EXPORT_FORCE, A_U32, 1 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_DEL, false, "unknown attribute type",
	  { T_NAME("keep"), { RMBD_TARGET_ATTR_MAX + 1, A_U32, 1 } } },
	/* EXPORT_GET */
	{ TARGET, RMBD_TARGET_CMD_EXPORT_GET, false, "4 KiB name",
	  { { RMBD_TARGET_ATTR_EXPORT_NAME, A_BIGSTR } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_GET, false, "name as u8",
	  { { RMBD_TARGET_ATTR_EXPORT_NAME, A_U8, 0x41 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_GET, false, "unknown attribute type",
	  { T_NAME("keep"), { RMBD_TARGET_ATTR_MAX + 1, A_U32, 1 } } },
	{ TARGET, RMBD_TARGET_CMD_EXPORT_GET, true, "dump, unknown attribute type",
	  { { RMBD_TARGET_ATTR_MAX + 1, A_U32, 1 } } },
	/* LISTENER_ADD */
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "no attributes", { },
	  RMBD_TARGET_ATTR_LISTENER_ADDR },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "port only",
	  { { RMBD_TARGET_ATTR_LISTENER_PORT, A_U16, 7480 } },
	  RMBD_TARGET_ATTR_LISTENER_ADDR },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "4 KiB address",
	  { { RMBD_TARGET_ATTR_LISTENER_ADDR, A_BIGSTR } } },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "address 1.2.3", { T_ADDR("1.2.3") } },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "address without NUL",
	  { { RMBD_TARGET_ATTR_LISTENER_ADDR, A_RAW, 0, ADDR },
	    { RMBD_TARGET_ATTR_LISTENER_PORT, A_U16, 7481 } } },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "port as u8",
	  { T_ADDR(ADDR), { RMBD_TARGET_ATTR_LISTENER_PORT, A_U8, 7 } } },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "port as u32",
	  { T_ADDR(ADDR), { RMBD_TARGET_ATTR_LISTENER_PORT, A_U32, 7482 } } },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_ADD, false, "unknown attribute type",
	  { T_ADDR(ADDR), { RMBD_TARGET_ATTR_LISTENER_PORT, A_U16, 7483 },
	    { RMBD_TARGET_ATTR_MAX + 1, A_U32, 1 } } },
	/* LISTENER_DEL */
	{ TARGET, RMBD_TARGET_CMD_LISTENER_DEL, false, "no attributes", { },
	  RMBD_TARGET_ATTR_LISTENER_ADDR },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_DEL, false, "4 KiB address",
	  { { RMBD_TARGET_ATTR_LISTENER_ADDR, A_BIGSTR } } },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_DEL, false, "port as u64",
	  { T_ADDR(ADDR), { RMBD_TARGET_ATTR_LISTENER_PORT, A_U64, RMBD_DEFAULT_PORT } } },
	{ TARGET, RMBD_TARGET_CMD_LISTENER_DEL, false, "unknown attribute type",
	  { T_ADDR(ADDR), { RMBD_TARGET_ATTR_MAX + 1, A_U32, 1 } } },
	/* LISTENER_GET */
	{ TARGET, RMBD_TARGET_CMD_LISTENER_GET, true, "dump, unknown attribute type",
	  { { RMBD_TARGET_ATTR_MAX + 1, A_U32, 1 } } },
	{ TARGET, RMBD_TARGET_CMD_MAX + 1, false, "unknown command", { } },

	/* rmbd_client: DEV_CONNECT */
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "no attributes", { },
	  RMBD_CLIENT_ATTR_ADDR },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "export missing", { C_ADDR(ADDR) },
	  RMBD_CLIENT_ATTR_EXPORT_NAME },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "address missing", { C_EXP("keep") },
	  RMBD_CLIENT_ATTR_ADDR },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "4 KiB address",
	  { { RMBD_CLIENT_ATTR_ADDR, A_BIGSTR }, C_EXP("keep") } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "4 KiB export name",
	  { C_ADDR(ADDR), { RMBD_CLIENT_ATTR_EXPORT_NAME, A_BIGSTR } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "address 1.2.3",
	  { C_ADDR("1.2.3"), C_EXP("keep") } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "address without NUL",
	  { { RMBD_CLIENT_ATTR_ADDR, A_RAW, 0, ADDR }, C_EXP("keep") } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "export name without NUL",
	  { C_ADDR(ADDR), { RMBD_CLIENT_ATTR_EXPORT_NAME, A_RAW, 0, "keep" } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "port as u8",
	  { C_ADDR(ADDR), C_EXP("keep"), { RMBD_CLIENT_ATTR_PORT, A_U8, 7 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "port as u32",
	  { C_ADDR(ADDR), C_EXP("keep"), { RMBD_CLIENT_ATTR_PORT, A_U32, RMBD_DEFAULT_PORT } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "queues as u8",
	  { C_ADDR(ADDR), C_EXP("keep"), { RMBD_CLIENT_ATTR_NR_IO_QUEUES, A_U8, 1 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "0 queues",
	  { C_ADDR(ADDR), C_EXP("keep"), { RMBD_CLIENT_ATTR_NR_IO_QUEUES, A_U32, 0 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "RMBD_MAX_IO_QUEUES + 1 queues",
	  { C_ADDR(ADDR), C_EXP("keep"),
	    { RMBD_CLIENT_ATTR_NR_IO_QUEUES, A_U32, RMBD_MAX_IO_QUEUES + 1 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "depth 0",
	  { C_ADDR(ADDR), C_EXP("keep"), { RMBD_CLIENT_ATTR_QUEUE_DEPTH, A_U32, 0 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "depth RMBD_MAX_QUEUE_DEPTH + 1",
	  { C_ADDR(ADDR), C_EXP("keep"),
	    { RMBD_CLIENT_ATTR_QUEUE_DEPTH, A_U32, RMBD_MAX_QUEUE_DEPTH + 1 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "depth as u64",
	  { C_ADDR(ADDR), C_EXP("keep"), { RMBD_CLIENT_ATTR_QUEUE_DEPTH, A_U64, 16 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "unknown attribute type",
	  { C_ADDR(ADDR), C_EXP("keep"), { RMBD_CLIENT_ATTR_MAX + 1, A_U32, 1 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_CONNECT, false, "attribute type 0",
	  { C_ADDR(ADDR), C_EXP("keep"), { 0, A_U32, 1 } } },
	/* DEV_DISCONNECT */
	{ CLIENT, RMBD_CLIENT_CMD_DEV_DISCONNECT, false, "no attributes", { },
	  RMBD_CLIENT_ATTR_DEV_INDEX },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_DISCONNECT, false, "index as u8",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U8, 0 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_DISCONNECT, false, "index as u64",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U64, 0 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_DISCONNECT, false, "index as a string",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_STR, 0, "rmbd0" } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_DISCONNECT, false, "unknown attribute type",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U32, 0 }, { RMBD_CLIENT_ATTR_MAX + 1, A_U32, 1 } } },
	/* DEV_GET */
	{ CLIENT, RMBD_CLIENT_CMD_DEV_GET, false, "index as u8",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U8, 0 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_GET, false, "unknown attribute type",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U32, 0 }, { RMBD_CLIENT_ATTR_MAX + 1, A_U32, 1 } } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_GET, true, "dump, unknown attribute type",
	  { { RMBD_CLIENT_ATTR_MAX + 1, A_U32, 1 } } },
	{ CLIENT, RMBD_CLIENT_CMD_MAX + 1, false, "unknown command", { } },
};

static const char *const target_cmds[] = {
	[RMBD_TARGET_CMD_EXPORT_ADD] = "EXPORT_ADD",
	[RMBD_TARGET_CMD_EXPORT_DEL] = "EXPORT_DEL",
	[RMBD_TARGET_CMD_EXPORT_GET] = "EXPORT_GET",
	[RMBD_TARGET_CMD_LISTENER_ADD] = "LISTENER_ADD",
	[RMBD_TARGET_CMD_LISTENER_DEL] = "LISTENER_DEL",
	[RMBD_TARGET_CMD_LISTENER_GET] = "LISTENER_GET",
};

static const char *const client_cmds[] = {
	[RMBD_CLIENT_CMD_DEV_CONNECT] = "DEV_CONNECT",
	[RMBD_CLIENT_CMD_DEV_DISCONNECT] = "DEV_DISCONNECT",
	[RMBD_CLIENT_CMD_DEV_GET] = "DEV_GET",
};

static const char *cmd_name(enum fam fam, int cmd)
{
	if (fam == TARGET && cmd > 0 && cmd <= RMBD_TARGET_CMD_MAX)
		return target_cmds[cmd];
	if (fam == CLIENT && cmd > 0 && cmd <= RMBD_CLIENT_CMD_MAX)
		return client_cmds[cmd];
	return "UNKNOWN_CMD";
}

/* The refusals a malformed request may get. */
static bool policy_errno(int err)
{
	switch (err) {
	case EINVAL:
	case ERANGE:
	case E2BIG:
	case EMSGSIZE:
	case ENAMETOOLONG:
	case EOPNOTSUPP:
		return true;
	}
	return false;
}

static int put_attr(struct nl_msg *msg, const struct attr *a)
{
	static char big[BIG_LEN];

	switch (a->kind) {
	case A_U8:
		return nla_put_u8(msg, a->type, (uint8_t)a->val);
	case A_U16:
		return nla_put_u16(msg, a->type, (uint16_t)a->val);
	case A_U32:
		return nla_put_u32(msg, a->type, (uint32_t)a->val);
	case A_U64:
		return nla_put_u64(msg, a->type, a->val);
	case A_STR:
		return nla_put_string(msg, a->type, a->str);
	case A_BIGSTR:
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		return nla_put(msg, a->type, sizeof(big), big);
	case A_RAW:
		return nla_put(msg, a->type, (int)strlen(a->str), a->str);
	case A_FLAG:
		return nla_put_flag(msg, a->type);
	case A_END:
		break;
	}
	return 0;
}

struct result {
	int err;		/* 0: accepted, > 0: errno */
	bool replied;		/* a data message came back */
	char msg[256];		/* extended-ack message */
	int miss_type;		/* extended-ack missing attribute, or -1 */
	bool timed_out;
};

static void parse_extack(struct nlmsghdr *h, struct result *r)
{
	struct nlmsgerr *e = NLMSG_DATA(h);
	size_t off = sizeof(*e);
	char *end = (char *)h + h->nlmsg_len;
	struct nlattr *a;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	for (a = (struct nlattr *)((char *)e + off);
	     (char *)a + NLA_HDRLEN <= end && a->nla_len >= NLA_HDRLEN &&
	     (char *)a + a->nla_len <= end;
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
		int type = a->nla_type & NLA_TYPE_MASK;

		if (type == NLMSGERR_ATTR_MSG)
			snprintf(r->msg, sizeof(r->msg), "%.*s",
				 (int)(a->nla_len - NLA_HDRLEN),
				 (char *)a + NLA_HDRLEN);
		else if (type == NLMSGERR_ATTR_MISS_TYPE &&
			 a->nla_len >= NLA_HDRLEN + sizeof(uint32_t))
			memcpy(&r->miss_type, (char *)a + NLA_HDRLEN,
			       sizeof(uint32_t));
	}
}

static int send_case(struct nl_sock *sk, int family, const struct fcase *c,
		     struct result *r)
{
	struct sockaddr_nl peer;
	unsigned char *buf = NULL;
	struct nl_msg *msg;
	uint32_t seq;
	int i, ret, len;

	memset(r, 0, sizeof(*r));
	r->miss_type = -1;
	msg = nlmsg_alloc_size(BIG_LEN * 2);
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0,
			 c->dump ? NLM_F_DUMP : 0, (uint8_t)c->cmd, 1)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	for (i = 0; c->attrs[i].kind != A_END; i++) {
		if (put_attr(msg, &c->attrs[i]) < 0) {
			nlmsg_free(msg);
			return -EMSGSIZE;
		}
	}
	ret = nl_send_auto(sk, msg);
	seq = nlmsg_hdr(msg)->nlmsg_seq;
	nlmsg_free(msg);
	if (ret < 0)
		return -EIO;

	for (;;) {
		struct nlmsghdr *h;

		len = nl_recv(sk, &peer, &buf, NULL);
		if (len == -NLE_AGAIN || len == 0) {
			r->timed_out = true;
			return 0;
		}
		if (len < 0)
			return -EIO;
		for (h = (struct nlmsghdr *)buf; nlmsg_ok(h, len);
		     h = nlmsg_next(h, &len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				r->err = -e->error;
				parse_extack(h, r);
				free(buf);
				return 0;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				free(buf);
				return 0;
			}
			r->replied = true;
		}
		free(buf);
		buf = NULL;
	}
}

static const char *errname(int err)
{
	switch (err) {
	case 0: return "accepted";
	case EINVAL: return "EINVAL";
	case ERANGE: return "ERANGE";
	case E2BIG: return "E2BIG";
	case EMSGSIZE: return "EMSGSIZE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EEXIST: return "EEXIST";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ETIMEDOUT: return "ETIMEDOUT";
	}
	return strerror(err);
}

int main(void)
{
	const size_t n = sizeof(cases) / sizeof(cases[0]);
	const char *names[] = { RMBD_TARGET_GENL_NAME, RMBD_CLIENT_GENL_NAME };
	int family[2], failed = 0;
	struct timeval tv = { .tv_sec = REPLY_TIMEOUT };
	struct nl_sock *sk;
	int one = 1;
	size_t i;

	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk)) {
		printf("Bail out! cannot open a generic netlink socket\n");
		return 1;
	}
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	nl_socket_enable_msg_peek(sk);

	for (i = 0; i < 2; i++)
		family[i] = genl_ctrl_resolve(sk, names[i]);
	if (family[0] < 0 && family[1] < 0) {
		printf("1..0 # SKIP rmbd families not registered\n");
		return 4;
	}

	printf("KTAP version 1\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		const struct fcase *c = &cases[i];
		struct result r;
		char what[160];
		int ret;

		snprintf(what, sizeof(what), "%s %s: %s", names[c->fam],
			 cmd_name(c->fam, c->cmd), c->desc);
		if (family[c->fam] < 0) {
			printf("ok %zu %s # SKIP family not registered\n", i + 1, what);
			continue;
		}
		ret = send_case(sk, family[c->fam], c, &r);
		if (ret < 0) {
			printf("not ok %zu %s # cannot send: %s\n", i + 1, what, strerror(-ret));
			failed++;
		} else if (r.timed_out) {
			printf("not ok %zu %s # no reply in %d s\n", i + 1, what, REPLY_TIMEOUT);
			failed++;
		} else if (!r.err) {
			printf("not ok %zu %s # accepted%s\n", i + 1, what,
			       r.replied ? " (with a reply)" : "");
			failed++;
		} else if (!policy_errno(r.err)) {
			printf("not ok %zu %s # %s, expected EINVAL or ERANGE: \"%s\"\n",
			       i + 1, what, errname(r.err), r.msg);
			failed++;
		} else if (!r.msg[0] && r.miss_type < 0 &&
			   c->cmd <= (c->fam == TARGET ?
				      RMBD_TARGET_CMD_MAX : RMBD_CLIENT_CMD_MAX)) {
			printf("not ok %zu %s # %s without an extack message\n",
			       i + 1, what, errname(r.err));
			failed++;
		} else if (c->miss && r.miss_type != c->miss) {
			printf("not ok %zu %s # %s: extack names missing attribute %d, not %d \"%s\"\n",
			       i + 1, what, errname(r.err), r.miss_type, c->miss, r.msg);
			failed++;
		} else if (r.miss_type >= 0) {
			printf("ok %zu %s # %s: missing attribute %d%s%s\n", i + 1, what,
			       errname(r.err), r.miss_type, r.msg[0] ? ": " : "", r.msg);
		} else {
			printf("ok %zu %s # %s: \"%s\"\n", i + 1, what, errname(r.err), r.msg);
		}
		fflush(stdout);
	}
	printf("# %zu cases, %d failed\n", n, failed);
	nl_socket_free(sk);
	return failed ? 1 : 0;
}
