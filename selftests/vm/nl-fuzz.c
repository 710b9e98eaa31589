// SPDX-License-Identifier: GPL-2.0
/*
 * nl-fuzz: send malformed requests to the rmbd_target and rmbd_client
 * generic netlink families and check how the kernel answers.  One KTAP
 * stream, in this order:
 *
 *  - a table of malformed requests (required attributes missing, oversized
 *    strings, wrong lengths and types, strings without a NUL, unknown
 *    attribute types, bad values and unknown commands), each refused with
 *    a policy-style error (EINVAL, ERANGE, ...) and an extended ack: a
 *    message or, for a missing attribute, its type;
 *  - random requests from a seeded generator, written as raw bytes: random
 *    commands, flags and attributes, wrong lengths and types, nests,
 *    truncated messages, several messages in one send.  A model of the
 *    kernel's parsing (netlink_rcv_skb(), the generic netlink header
 *    checks, the families' policies and the checks their handlers make
 *    first) says what each message must get: nothing, an error with an
 *    errno, an extack offset or missing attribute, or, for a well-formed
 *    request, any answer.  Every message is answered in time, every dump
 *    ends, and what an accepted request created is deleted again;
 *  - an unprivileged caller (uid and gid 65534, no capabilities): every
 *    command of both families, do and dump, is refused with EPERM;
 *  - the exports, listeners and devices are those of before the run, and
 *    both families still answer.
 *
 * Environment:
 *   RMBD_FUZZ_SEED=S     seed of the random requests (default: from the clock)
 *   RMBD_FUZZ_ITERS=N    random sends (default 30000)
 *   RMBD_FUZZ_FIRST=I    start at send I (with the same seed: the same bytes)
 *   RMBD_FUZZ_SECONDS=T  stop the random sends after T s (default 20, 0: none)
 *   RMBD_FUZZ_TIMEOUT=T  seconds a send may wait for its answers (default 30)
 *   RMBD_FUZZ_VERBOSE=1  one line per message
 *   RMBD_FUZZ_STRICT=0   only count what the kernel takes although the
 *                        uapi headers call it invalid (export names with
 *                        Latin-1 letters, IPv4 addresses in the spellings
 *                        in4_pton() takes), instead of failing (default 1)
 *
 * Exit status 0 when every case passed, 1 when one failed, 4 when neither
 * family is registered.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
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

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
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
	/* DEV_REPLACE */
	{ CLIENT, RMBD_CLIENT_CMD_DEV_REPLACE, false, "no attributes", { },
	  RMBD_CLIENT_ATTR_DEV_INDEX },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_REPLACE, false, "leg missing",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U32, 0 }, C_ADDR(ADDR), C_EXP("keep") },
	  RMBD_CLIENT_ATTR_LEG_INDEX },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_REPLACE, false, "export missing",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U32, 0 },
	    { RMBD_CLIENT_ATTR_LEG_INDEX, A_U32, 1 }, C_ADDR(ADDR) },
	  RMBD_CLIENT_ATTR_EXPORT_NAME },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_REPLACE, false, "leg RMBD_MAX_LEGS",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U32, 0 },
	    { RMBD_CLIENT_ATTR_LEG_INDEX, A_U32, RMBD_MAX_LEGS }, C_ADDR(ADDR),
	    C_EXP("keep") } },
	{ CLIENT, RMBD_CLIENT_CMD_DEV_REPLACE, false, "export name '..'",
	  { { RMBD_CLIENT_ATTR_DEV_INDEX, A_U32, 0 },
	    { RMBD_CLIENT_ATTR_LEG_INDEX, A_U32, 1 }, C_ADDR(ADDR),
	    C_EXP("..") } },
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
	[RMBD_TARGET_CMD_SESSION_EVENT] = "SESSION_EVENT",
	[RMBD_TARGET_CMD_EXPORT_HOST_ADD] = "EXPORT_HOST_ADD",
	[RMBD_TARGET_CMD_EXPORT_HOST_DEL] = "EXPORT_HOST_DEL",
	[RMBD_TARGET_CMD_SESSION_GET] = "SESSION_GET",
};

static const char *const client_cmds[] = {
	[RMBD_CLIENT_CMD_DEV_CONNECT] = "DEV_CONNECT",
	[RMBD_CLIENT_CMD_DEV_DISCONNECT] = "DEV_DISCONNECT",
	[RMBD_CLIENT_CMD_DEV_GET] = "DEV_GET",
	[RMBD_CLIENT_CMD_DEV_EVENT] = "DEV_EVENT",
	[RMBD_CLIENT_CMD_DEV_REPLACE] = "DEV_REPLACE",
};

/* A command added to a family gets its name here. */
_Static_assert(ARRAY_SIZE(target_cmds) == RMBD_TARGET_CMD_MAX + 1,
	       "target_cmds lacks a command");
_Static_assert(ARRAY_SIZE(client_cmds) == RMBD_CLIENT_CMD_MAX + 1,
	       "client_cmds lacks a command");

static const char *cmd_name(enum fam fam, int cmd)
{
	const char *n = NULL;

	if (fam == TARGET && cmd > 0 && cmd < (int)ARRAY_SIZE(target_cmds))
		n = target_cmds[cmd];
	if (fam == CLIENT && cmd > 0 && cmd < (int)ARRAY_SIZE(client_cmds))
		n = client_cmds[cmd];
	return n ? n : "UNKNOWN_CMD";
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

/*
 * The extended ack of an NLMSG_ERROR: its message, the missing attribute
 * and the offset of the bad attribute (each left alone when absent).
 */
static void parse_extack(const struct nlmsghdr *h, char *msg, size_t msg_len,
			 int *miss, int *offs)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t off = sizeof(*e);
	const char *end = (const char *)h + h->nlmsg_len;
	const struct nlattr *a;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    h->nlmsg_len < NLMSG_HDRLEN + sizeof(*e))
		return;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	for (a = (const struct nlattr *)((const char *)e + off);
	     (const char *)a + NLA_HDRLEN <= end && a->nla_len >= NLA_HDRLEN &&
	     (const char *)a + a->nla_len <= end;
	     a = (const void *)((const char *)a + NLA_ALIGN(a->nla_len))) {
		int type = a->nla_type & NLA_TYPE_MASK;
		const char *data = (const char *)a + NLA_HDRLEN;
		uint32_t v;

		if (type == NLMSGERR_ATTR_MSG && msg)
			snprintf(msg, msg_len, "%.*s",
				 (int)strnlen(data, a->nla_len - NLA_HDRLEN),
				 data);
		if ((type == NLMSGERR_ATTR_MISS_TYPE ||
		     type == NLMSGERR_ATTR_OFFS) &&
		    a->nla_len >= NLA_HDRLEN + sizeof(v)) {
			memcpy(&v, data, sizeof(v));
			if (type == NLMSGERR_ATTR_MISS_TYPE && miss)
				*miss = (int)v;
			else if (type == NLMSGERR_ATTR_OFFS && offs)
				*offs = (int)v;
		}
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
				parse_extack(h, r->msg, sizeof(r->msg),
					     &r->miss_type, NULL);
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
	static char other[16];

	switch (err) {
	case 0: return "accepted";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case E2BIG: return "E2BIG";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case EXDEV: return "EXDEV";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ENODATA: return "ENODATA";
	case EPROTO: return "EPROTO";
	case EMSGSIZE: return "EMSGSIZE";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case EADDRINUSE: return "EADDRINUSE";
	case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
	case ENETUNREACH: return "ENETUNREACH";
	case ECONNABORTED: return "ECONNABORTED";
	case ECONNRESET: return "ECONNRESET";
	case ENOBUFS: return "ENOBUFS";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	}
	snprintf(other, sizeof(other), "errno %d", err);
	return other;
}

/* ---- raw generic netlink ------------------------------------------- */

#define PICK(a)		((a)[below(ARRAY_SIZE(a))])
#define NL_HDRS		(NLMSG_HDRLEN + GENL_HDRLEN)
#define MB_MAX		(3 * 65536)
#define MAX_OBJS	64
#define MIB		(1ULL << 20)
#define GIB		(1ULL << 30)

static uint16_t get16(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int reply_timeout = REPLY_TIMEOUT;	/* seconds */

/* A NETLINK_GENERIC socket for raw bytes, with extended and capped acks. */
static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, rcvbuf = 1 << 20;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	return fd;
}

/* A buffer of netlink messages, built by hand. */
struct mb {
	unsigned char b[MB_MAX];
	size_t len;
};

/* Append LEN bytes of DATA (zeros when NULL); returns their offset. */
static size_t mb_put(struct mb *m, const void *data, size_t len)
{
	size_t off = m->len;

	if (len > MB_MAX - m->len)
		len = MB_MAX - m->len;
	if (data)
		memcpy(m->b + off, data, len);
	else
		memset(m->b + off, 0, len);
	m->len += len;
	return off;
}

static void mb_align(struct mb *m)
{
	mb_put(m, NULL, NLMSG_ALIGN(m->len) - m->len);
}

/* Start a generic netlink message; returns the offset of its header. */
static size_t mb_msg(struct mb *m, uint16_t type, uint16_t flags,
		     uint32_t seq, uint8_t cmd)
{
	struct nlmsghdr h = {
		.nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq,
	};
	struct genlmsghdr g = { .cmd = cmd, .version = 1 };
	size_t off;

	mb_align(m);
	off = mb_put(m, &h, sizeof(h));
	mb_put(m, &g, sizeof(g));
	return off;
}

static void mb_msg_end(struct mb *m, size_t off)
{
	put32(m->b + off, (uint32_t)(m->len - off));
}

/* Append an attribute and its padding; returns its offset. */
static size_t mb_attr(struct mb *m, uint16_t type, const void *data,
		      size_t len)
{
	unsigned char hdr[NLA_HDRLEN];
	size_t off;

	put16(hdr, (uint16_t)(NLA_HDRLEN + len));
	put16(hdr + 2, type);
	off = mb_put(m, hdr, sizeof(hdr));
	mb_put(m, data, len);
	mb_align(m);
	return off;
}

static void hexdump(const unsigned char *b, size_t len, size_t max)
{
	size_t i, j;

	for (i = 0; i < len && i < max; i += 16) {
		printf("#   %04zx:", i);
		for (j = i; j < i + 16 && j < len; j++)
			printf(" %02x", b[j]);
		printf("\n");
	}
	if (len > max)
		printf("#   ... %zu more bytes\n", len - max);
}

/* ---- the families, as the kernel's policies and ops describe them ---- */

/* Policy types, as in the kernel's nla_policy tables. */
enum ptype { P_UNSPEC, P_U8, P_U16, P_U32, P_U64, P_STR, P_FLAG, P_REJECT,
	     P_NEST, P_NARRAY, P_BIN };

/* What the generator puts in an attribute. */
enum vclass {
	V_RAW, V_NAME, V_SIZE, V_SLAB, V_ADDR, V_PORT, V_INDEX, V_IOQ,
	V_POLLQ, V_DEPTH, V_DELAY, V_LOSS, V_FLAG, V_HOST, V_SESSIONS,
	V_LAYOUT, V_LEG, V_COPIES,
};

#define CK_MIN	1
#define CK_MAX	2

struct apol {
	enum ptype type;
	uint16_t len;		/* P_STR: longest string, no NUL; P_BIN: most bytes */
	uint8_t check;		/* CK_MIN, CK_MAX */
	uint64_t min, max;
	enum vclass v;
	const struct apol *nest;	/* P_NEST, P_NARRAY: the inner policy */
	int nest_max;			/* P_NARRAY: its highest type */
};

#define POL_STR(l, vc)	{ .type = P_STR, .len = (l), .v = (vc) }
#define POL_INT(t, vc)	{ .type = (t), .v = (vc) }
#define POL_RANGE(t, lo, hi, vc) \
	{ .type = (t), .check = CK_MIN | CK_MAX, .min = (lo), .max = (hi), \
	  .v = (vc) }
#define POL_MIN(t, lo, vc) \
	{ .type = (t), .check = CK_MIN, .min = (lo), .v = (vc) }
#define POL_MAX(t, hi, vc) \
	{ .type = (t), .check = CK_MAX, .max = (hi), .v = (vc) }
#define POL_REJECT	{ .type = P_REJECT }
#define POL_NEST(pol)	{ .type = P_NEST, .nest = (pol) }
#define POL_NARRAY(pol, max) \
	{ .type = P_NARRAY, .nest = (pol), .nest_max = (max) }
#define POL_BIN(l)	{ .type = P_BIN, .len = (l), .v = V_RAW }

/* Mirrors rmbd_t_host_policy: what an EXPORT_HOSTS nest may hold. */
static const struct apol target_host_pol[RMBD_TARGET_ATTR_MAX + 1] = {
	[RMBD_TARGET_ATTR_HOST]		= POL_STR(RMBD_HOST_MAX - 1, V_HOST),
};

/* Mirrors rmbd_t_policy in kmod/target/netlink.c. */
static const struct apol target_pol[RMBD_TARGET_ATTR_MAX + 1] = {
	[RMBD_TARGET_ATTR_EXPORT_NAME]	=
		POL_STR(RMBD_EXPORT_NAME_MAX - 1, V_NAME),
	[RMBD_TARGET_ATTR_EXPORT_SIZE]	= POL_INT(P_U64, V_SIZE),
	[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE] = POL_INT(P_U64, V_SLAB),
	[RMBD_TARGET_ATTR_EXPORT_FORCE]	= POL_INT(P_FLAG, V_FLAG),
	[RMBD_TARGET_ATTR_EXPORT_NR_SLABS] = POL_REJECT,
	[RMBD_TARGET_ATTR_EXPORT_SESSIONS] = POL_REJECT,
	[RMBD_TARGET_ATTR_EXPORT_MAPPED] = POL_REJECT,
	[RMBD_TARGET_ATTR_EXPORT_MEM]	= POL_REJECT,
	[RMBD_TARGET_ATTR_LISTENER_ADDR] = POL_STR(RMBD_ADDR_MAX - 1, V_ADDR),
	[RMBD_TARGET_ATTR_LISTENER_PORT] = POL_MIN(P_U16, 1, V_PORT),
	[RMBD_TARGET_ATTR_PAD]		= POL_REJECT,
	[RMBD_TARGET_ATTR_TOTAL_MEM]	= POL_REJECT,
	[RMBD_TARGET_ATTR_EVENT]	= POL_REJECT,
	[RMBD_TARGET_ATTR_SESSION_ID]	= POL_REJECT,
	[RMBD_TARGET_ATTR_SESSION_PEER]	= POL_REJECT,
	[RMBD_TARGET_ATTR_EXPORT_ANY_HOST] = POL_INT(P_FLAG, V_FLAG),
	[RMBD_TARGET_ATTR_HOST]		= POL_STR(RMBD_HOST_MAX - 1, V_HOST),
	[RMBD_TARGET_ATTR_EXPORT_HOSTS]	= POL_NEST(target_host_pol),
	[RMBD_TARGET_ATTR_SESSION_HOST]	= POL_REJECT,
	[RMBD_TARGET_ATTR_SECRET]	= POL_BIN(RMBD_SECRET_MAX),
	[RMBD_TARGET_ATTR_EXPORT_AUTH_HOSTS] = POL_REJECT,
	[RMBD_TARGET_ATTR_EXPORT_SHARED] = POL_INT(P_FLAG, V_FLAG),
	[RMBD_TARGET_ATTR_EXPORT_READ_ONLY] = POL_INT(P_FLAG, V_FLAG),
	[RMBD_TARGET_ATTR_SESSION_UP]	= POL_REJECT,
	[RMBD_TARGET_ATTR_SESSION_AUTH]	= POL_REJECT,
	[RMBD_TARGET_ATTR_SESSION_READ_ONLY] = POL_REJECT,
	[RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS] =
		POL_RANGE(P_U32, 1, RMBD_MAX_SESSIONS, V_SESSIONS),
	[RMBD_TARGET_ATTR_LISTENER_SESSIONS] = POL_REJECT,
	[RMBD_TARGET_ATTR_SESSION_MAPPED] = POL_REJECT,
	[RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES] = POL_REJECT,
};

/* Mirrors rmbd_c_leg_policy: a leg of DEV_CONNECT's LEGS. */
static const struct apol client_leg_pol[RMBD_LEG_ATTR_MAX + 1] = {
	[RMBD_LEG_ATTR_INDEX]		= POL_REJECT,
	[RMBD_LEG_ATTR_STATE]		= POL_REJECT,
	[RMBD_LEG_ATTR_ADDR]		= POL_STR(RMBD_ADDR_MAX - 1, V_ADDR),
	[RMBD_LEG_ATTR_PORT]		= POL_MIN(P_U16, 1, V_PORT),
	[RMBD_LEG_ATTR_EXPORT_NAME]	=
		POL_STR(RMBD_EXPORT_NAME_MAX - 1, V_NAME),
	[RMBD_LEG_ATTR_SIZE]		= POL_REJECT,
	[RMBD_LEG_ATTR_SLAB_SIZE]	= POL_REJECT,
	[RMBD_LEG_ATTR_NR_SLABS]	= POL_REJECT,
	[RMBD_LEG_ATTR_NR_RECONNECTS]	= POL_REJECT,
	[RMBD_LEG_ATTR_PAD]		= POL_REJECT,
	[RMBD_LEG_ATTR_DIRTY]		= POL_REJECT,
};

/* Mirrors rmbd_c_policy in kmod/client/netlink.c. */
static const struct apol client_pol[RMBD_CLIENT_ATTR_MAX + 1] = {
	[RMBD_CLIENT_ATTR_DEV_INDEX]	= POL_INT(P_U32, V_INDEX),
	[RMBD_CLIENT_ATTR_DEV_NAME]	= POL_REJECT,
	[RMBD_CLIENT_ATTR_DEV_SIZE]	= POL_REJECT,
	[RMBD_CLIENT_ATTR_DEV_STATE]	= POL_REJECT,
	[RMBD_CLIENT_ATTR_ADDR]		=
		POL_STR(RMBD_ADDR_MAX - 1, V_ADDR),
	[RMBD_CLIENT_ATTR_PORT]		= POL_MIN(P_U16, 1, V_PORT),
	[RMBD_CLIENT_ATTR_EXPORT_NAME]	=
		POL_STR(RMBD_EXPORT_NAME_MAX - 1, V_NAME),
	[RMBD_CLIENT_ATTR_NR_IO_QUEUES]	=
		POL_RANGE(P_U32, 1, RMBD_MAX_IO_QUEUES, V_IOQ),
	[RMBD_CLIENT_ATTR_QUEUE_DEPTH]	=
		POL_RANGE(P_U32, 1, RMBD_MAX_QUEUE_DEPTH, V_DEPTH),
	[RMBD_CLIENT_ATTR_SLAB_SIZE]	= POL_REJECT,
	[RMBD_CLIENT_ATTR_PAD]		= POL_REJECT,
	[RMBD_CLIENT_ATTR_FORCE]	= POL_INT(P_FLAG, V_FLAG),
	[RMBD_CLIENT_ATTR_NR_POLL_QUEUES] =
		POL_MAX(P_U32, RMBD_MAX_IO_QUEUES, V_POLLQ),
	[RMBD_CLIENT_ATTR_RECONNECT_DELAY] =
		POL_RANGE(P_U32, 1, RMBD_MAX_RECONNECT_DELAY, V_DELAY),
	[RMBD_CLIENT_ATTR_LOSS_TIMEOUT]	=
		POL_RANGE(P_U32, 0, RMBD_MAX_LOSS_TIMEOUT, V_LOSS),
	[RMBD_CLIENT_ATTR_NR_RECONNECTS] = POL_REJECT,
	[RMBD_CLIENT_ATTR_EVENT]	= POL_REJECT,
	[RMBD_CLIENT_ATTR_SHARED]	= POL_INT(P_FLAG, V_FLAG),
	[RMBD_CLIENT_ATTR_HOST]		= POL_STR(RMBD_HOST_MAX - 1, V_HOST),
	[RMBD_CLIENT_ATTR_SECRET]	= POL_BIN(RMBD_SECRET_MAX),
	[RMBD_CLIENT_ATTR_AUTH]		= POL_REJECT,
	[RMBD_CLIENT_ATTR_READ_ONLY]	= POL_INT(P_FLAG, V_FLAG),
	[RMBD_CLIENT_ATTR_HOLDER]	= POL_REJECT,
	[RMBD_CLIENT_ATTR_LEGS]		=
		POL_NARRAY(client_leg_pol, RMBD_LEG_ATTR_MAX),
	[RMBD_CLIENT_ATTR_SPARES]	=
		POL_NARRAY(client_leg_pol, RMBD_LEG_ATTR_MAX),
	[RMBD_CLIENT_ATTR_LEG]		= POL_REJECT,
	[RMBD_CLIENT_ATTR_LAYOUT]	=
		POL_RANGE(P_U8, RMBD_LAYOUT_MIRROR, RMBD_LAYOUT_POOL, V_LAYOUT),
	[RMBD_CLIENT_ATTR_LEG_INDEX]	=
		POL_MAX(P_U32, RMBD_MAX_LEGS - 1, V_LEG),
	[RMBD_CLIENT_ATTR_COPIES]	=
		POL_RANGE(P_U8, 1, RMBD_MAX_LEGS, V_COPIES),
	[RMBD_CLIENT_ATTR_EXTENT_SIZE]	= POL_REJECT,
	[RMBD_CLIENT_ATTR_GET_STATS]	= POL_INT(P_FLAG, V_FLAG),
	[RMBD_CLIENT_ATTR_STATS]	= POL_REJECT,
};

enum effect { E_NONE, E_CREATE, E_DELETE };

/* One genl_ops entry, with what its doit needs and does. */
struct op {
	uint8_t cmd;
	bool doit, dumpit;
	bool reply;		/* a doit that succeeds replies */
	enum effect effect;
	uint16_t req[4];	/* required, in the order checked */
	uint16_t opt[14];
};

static const struct op target_ops[] = {
	{ RMBD_TARGET_CMD_EXPORT_ADD, true, false, true, E_CREATE,
	  { RMBD_TARGET_ATTR_EXPORT_NAME, RMBD_TARGET_ATTR_EXPORT_SIZE },
	  { RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE, RMBD_TARGET_ATTR_EXPORT_ANY_HOST,
	    RMBD_TARGET_ATTR_EXPORT_HOSTS, RMBD_TARGET_ATTR_EXPORT_SHARED,
	    RMBD_TARGET_ATTR_EXPORT_READ_ONLY } },
	{ RMBD_TARGET_CMD_EXPORT_HOST_ADD, true, false, false, E_NONE,
	  { RMBD_TARGET_ATTR_EXPORT_NAME, RMBD_TARGET_ATTR_HOST },
	  { RMBD_TARGET_ATTR_SECRET } },
	{ RMBD_TARGET_CMD_EXPORT_HOST_DEL, true, false, false, E_NONE,
	  { RMBD_TARGET_ATTR_EXPORT_NAME, RMBD_TARGET_ATTR_HOST } },
	{ RMBD_TARGET_CMD_EXPORT_DEL, true, false, false, E_DELETE,
	  { RMBD_TARGET_ATTR_EXPORT_NAME }, { RMBD_TARGET_ATTR_EXPORT_FORCE } },
	{ RMBD_TARGET_CMD_EXPORT_GET, true, true, true, E_NONE,
	  { RMBD_TARGET_ATTR_EXPORT_NAME } },
	{ RMBD_TARGET_CMD_LISTENER_ADD, true, false, true, E_CREATE,
	  { RMBD_TARGET_ATTR_LISTENER_ADDR },
	  { RMBD_TARGET_ATTR_LISTENER_PORT,
	    RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS } },
	{ RMBD_TARGET_CMD_LISTENER_DEL, true, false, false, E_DELETE,
	  { RMBD_TARGET_ATTR_LISTENER_ADDR },
	  { RMBD_TARGET_ATTR_LISTENER_PORT } },
	{ RMBD_TARGET_CMD_LISTENER_GET, false, true, false, E_NONE },
	{ RMBD_TARGET_CMD_SESSION_GET, false, true, false, E_NONE, { },
	  { RMBD_TARGET_ATTR_EXPORT_NAME } },
};

static const struct op client_ops[] = {
	{ RMBD_CLIENT_CMD_DEV_CONNECT, true, false, true, E_CREATE,
	  { RMBD_CLIENT_ATTR_ADDR, RMBD_CLIENT_ATTR_EXPORT_NAME },
	  { RMBD_CLIENT_ATTR_PORT, RMBD_CLIENT_ATTR_NR_IO_QUEUES,
	    RMBD_CLIENT_ATTR_NR_POLL_QUEUES, RMBD_CLIENT_ATTR_QUEUE_DEPTH,
	    RMBD_CLIENT_ATTR_RECONNECT_DELAY, RMBD_CLIENT_ATTR_LOSS_TIMEOUT,
	    RMBD_CLIENT_ATTR_SHARED, RMBD_CLIENT_ATTR_HOST,
	    RMBD_CLIENT_ATTR_SECRET, RMBD_CLIENT_ATTR_READ_ONLY,
	    RMBD_CLIENT_ATTR_LAYOUT, RMBD_CLIENT_ATTR_LEGS,
	    RMBD_CLIENT_ATTR_COPIES, RMBD_CLIENT_ATTR_SPARES } },
	{ RMBD_CLIENT_CMD_DEV_DISCONNECT, true, false, false, E_DELETE,
	  { RMBD_CLIENT_ATTR_DEV_INDEX }, { RMBD_CLIENT_ATTR_FORCE } },
	{ RMBD_CLIENT_CMD_DEV_GET, true, true, true, E_NONE,
	  { RMBD_CLIENT_ATTR_DEV_INDEX }, { RMBD_CLIENT_ATTR_GET_STATS } },
	{ RMBD_CLIENT_CMD_DEV_REPLACE, true, false, true, E_NONE,
	  { RMBD_CLIENT_ATTR_DEV_INDEX, RMBD_CLIENT_ATTR_LEG_INDEX,
	    RMBD_CLIENT_ATTR_ADDR, RMBD_CLIENT_ATTR_EXPORT_NAME },
	  { RMBD_CLIENT_ATTR_PORT } },
};

struct family {
	const char *name;
	int id;			/* -1 when not registered */
	int maxattr;
	int cmd_max;
	const struct apol *pol;
	const struct op *ops;
	int n_ops;
};

static struct family fams[] = {
	[TARGET] = { RMBD_TARGET_GENL_NAME, -1, RMBD_TARGET_ATTR_MAX,
		     RMBD_TARGET_CMD_MAX, target_pol, target_ops,
		     ARRAY_SIZE(target_ops) },
	[CLIENT] = { RMBD_CLIENT_GENL_NAME, -1, RMBD_CLIENT_ATTR_MAX,
		     RMBD_CLIENT_CMD_MAX, client_pol, client_ops,
		     ARRAY_SIZE(client_ops) },
};

#define NR_FAMS	((int)ARRAY_SIZE(fams))

static int fam_by_id(int id)
{
	int i;

	for (i = 0; i < NR_FAMS; i++)
		if (fams[i].id >= 0 && fams[i].id == id)
			return i;
	return -1;
}

static const struct op *find_op(int fam, int cmd)
{
	int i;

	for (i = 0; i < fams[fam].n_ops; i++)
		if (fams[fam].ops[i].cmd == cmd)
			return &fams[fam].ops[i];
	return NULL;
}

/* ---- helper requests: state, cleanup, sanity ------------------------ */

typedef void (*data_fn)(const unsigned char *h, uint32_t len, void *arg);

static uint32_t helper_seq = 0x80000000;

/* Start a request of FAM with NLM_F_ACK, so that every request ends. */
static void req_begin(struct mb *m, int fam, uint8_t cmd, uint16_t flags)
{
	m->len = 0;
	mb_msg(m, (uint16_t)fams[fam].id, NLM_F_REQUEST | NLM_F_ACK | flags,
	       helper_seq++, cmd);
}

static void req_str(struct mb *m, uint16_t type, const char *s)
{
	mb_attr(m, type, s, strlen(s) + 1);
}

static void req_u16(struct mb *m, uint16_t type, uint16_t v)
{
	mb_attr(m, type, &v, sizeof(v));
}

static void req_u32(struct mb *m, uint16_t type, uint32_t v)
{
	mb_attr(m, type, &v, sizeof(v));
}

static void req_u64(struct mb *m, uint16_t type, uint64_t v)
{
	mb_attr(m, type, &v, sizeof(v));
}

/*
 * Send the request in M and read until its ack, error or NLMSG_DONE,
 * passing data messages to FN.  Returns 0 or a negative errno; MSG gets
 * the extack message.
 */
static int req_run(int fd, struct mb *m, data_fn fn, void *arg, char *msg,
		   size_t msg_len)
{
	static unsigned char buf[65536];
	uint32_t seq = get32(m->b + 8);
	int64_t deadline;

	mb_msg_end(m, 0);
	if (msg)
		msg[0] = '\0';
	if (send(fd, m->b, m->len, 0) != (ssize_t)m->len)
		return errno ? -errno : -EIO;
	deadline = now_ms() + reply_timeout * 1000LL;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t len;
		size_t off;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		len = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		for (off = 0; off + NLMSG_HDRLEN <= (size_t)len;) {
			const unsigned char *h = buf + off;
			uint32_t hl = get32(h);
			uint16_t type = get16(h + 4);

			if (hl < NLMSG_HDRLEN || hl > (size_t)len - off)
				break;
			off += NLMSG_ALIGN(hl);
			if (get32(h + 8) != seq)
				continue;
			if (type == NLMSG_ERROR && hl >= NLMSG_HDRLEN + 4) {
				if (msg)
					parse_extack((const struct nlmsghdr *)h,
						     msg, msg_len, NULL, NULL);
				return (int)get32(h + NLMSG_HDRLEN);
			}
			if (type == NLMSG_DONE)
				return hl >= NLMSG_HDRLEN + 4 ?
				       (int)get32(h + NLMSG_HDRLEN) : 0;
			if (fn)
				fn(h, hl, arg);
		}
	}
}

/* The payload of attribute TYPE of a generic netlink message, or NULL. */
static const unsigned char *msg_attr(const unsigned char *h, uint32_t len,
				     uint16_t type, size_t *dlen)
{
	size_t off = NL_HDRS;

	while (off + NLA_HDRLEN <= len) {
		uint16_t alen = get16(h + off);

		if (alen < NLA_HDRLEN || alen > len - off)
			break;
		if ((get16(h + off + 2) & NLA_TYPE_MASK) == type) {
			*dlen = alen - NLA_HDRLEN;
			return h + off + NLA_HDRLEN;
		}
		off += NLA_ALIGN(alen);
	}
	return NULL;
}

static bool msg_str(const unsigned char *h, uint32_t len, uint16_t type,
		    char *out, size_t out_len)
{
	size_t n;
	const unsigned char *d = msg_attr(h, len, type, &n);

	if (!d)
		return false;
	snprintf(out, out_len, "%.*s", (int)strnlen((const char *)d, n), d);
	return true;
}

static uint64_t msg_uint(const unsigned char *h, uint32_t len, uint16_t type)
{
	size_t n;
	const unsigned char *d = msg_attr(h, len, type, &n);

	if (!d)
		return 0;
	if (n == 2)
		return get16(d);
	if (n == 4)
		return get32(d);
	if (n == 8)
		return get64(d);
	return 0;
}

/* What exists: exports, listeners, client devices. */
struct state {
	int n_exp, n_lis, n_dev;
	struct {
		char name[RMBD_EXPORT_NAME_MAX];
		uint64_t size, slab;
	} exp[MAX_OBJS];
	struct {
		char addr[RMBD_ADDR_MAX];
		uint16_t port;
	} lis[MAX_OBJS];
	uint32_t dev[MAX_OBJS];
};

static void state_exp(const unsigned char *h, uint32_t len, void *arg)
{
	struct state *s = arg;

	if (s->n_exp == MAX_OBJS ||
	    !msg_str(h, len, RMBD_TARGET_ATTR_EXPORT_NAME,
		     s->exp[s->n_exp].name, sizeof(s->exp[0].name)))
		return;
	s->exp[s->n_exp].size = msg_uint(h, len, RMBD_TARGET_ATTR_EXPORT_SIZE);
	s->exp[s->n_exp].slab = msg_uint(h, len,
					 RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE);
	s->n_exp++;
}

static void state_lis(const unsigned char *h, uint32_t len, void *arg)
{
	struct state *s = arg;

	if (s->n_lis == MAX_OBJS ||
	    !msg_str(h, len, RMBD_TARGET_ATTR_LISTENER_ADDR,
		     s->lis[s->n_lis].addr, sizeof(s->lis[0].addr)))
		return;
	s->lis[s->n_lis].port =
		(uint16_t)msg_uint(h, len, RMBD_TARGET_ATTR_LISTENER_PORT);
	s->n_lis++;
}

static void state_dev(const unsigned char *h, uint32_t len, void *arg)
{
	struct state *s = arg;
	size_t n;

	if (s->n_dev < MAX_OBJS &&
	    msg_attr(h, len, RMBD_CLIENT_ATTR_DEV_INDEX, &n) && n == 4)
		s->dev[s->n_dev++] =
			(uint32_t)msg_uint(h, len, RMBD_CLIENT_ATTR_DEV_INDEX);
}

static struct mb req_mb;

static int state_read(int fd, struct state *s)
{
	struct mb *m = &req_mb;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	if (fams[TARGET].id >= 0) {
		req_begin(m, TARGET, RMBD_TARGET_CMD_EXPORT_GET, NLM_F_DUMP);
		ret = req_run(fd, m, state_exp, s, NULL, 0);
		if (!ret) {
			req_begin(m, TARGET, RMBD_TARGET_CMD_LISTENER_GET,
				  NLM_F_DUMP);
			ret = req_run(fd, m, state_lis, s, NULL, 0);
		}
	}
	if (!ret && fams[CLIENT].id >= 0) {
		req_begin(m, CLIENT, RMBD_CLIENT_CMD_DEV_GET, NLM_F_DUMP);
		ret = req_run(fd, m, state_dev, s, NULL, 0);
	}
	return ret;
}

static bool has_exp(const struct state *s, const char *name)
{
	int i;

	for (i = 0; i < s->n_exp; i++)
		if (!strcmp(s->exp[i].name, name))
			return true;
	return false;
}

static bool has_lis(const struct state *s, const char *addr, uint16_t port)
{
	int i;

	for (i = 0; i < s->n_lis; i++)
		if (!strcmp(s->lis[i].addr, addr) && s->lis[i].port == port)
			return true;
	return false;
}

static bool has_dev(const struct state *s, uint32_t index)
{
	int i;

	for (i = 0; i < s->n_dev; i++)
		if (s->dev[i] == index)
			return true;
	return false;
}

static struct state start;		/* before the run */

/*
 * Delete what is not in START (with DEL_NEW) and put back what of START
 * went missing.  Returns the number of problems, each described in "# "
 * lines.
 */
static int state_restore(int fd, const char *when, bool del_new)
{
	static struct state now;
	struct mb *m = &req_mb;
	char msg[256];
	int i, try, ret, bad = 0;

	ret = state_read(fd, &now);
	if (ret) {
		printf("# %s: cannot list the objects: %s\n", when, errname(-ret));
		return 1;
	}
	for (i = 0; i < now.n_dev && del_new; i++) {
		if (has_dev(&start, now.dev[i]))
			continue;
		/* A device still connecting refuses with EBUSY for a while. */
		for (try = 0; try < 100; try++) {
			req_begin(m, CLIENT, RMBD_CLIENT_CMD_DEV_DISCONNECT,
				  0);
			req_u32(m, RMBD_CLIENT_ATTR_DEV_INDEX, now.dev[i]);
			mb_attr(m, RMBD_CLIENT_ATTR_FORCE, NULL, 0);
			ret = req_run(fd, m, NULL, NULL, msg, sizeof(msg));
			if (ret != -EBUSY)
				break;
			usleep(100000);
		}
		if (ret && ret != -ENODEV) {
			printf("# %s: dev disconnect %u: %s \"%s\"\n", when,
			       now.dev[i], errname(-ret), msg);
			bad++;
		}
	}
	for (i = 0; i < now.n_exp && del_new; i++) {
		if (has_exp(&start, now.exp[i].name))
			continue;
		req_begin(m, TARGET, RMBD_TARGET_CMD_EXPORT_DEL, 0);
		req_str(m, RMBD_TARGET_ATTR_EXPORT_NAME, now.exp[i].name);
		mb_attr(m, RMBD_TARGET_ATTR_EXPORT_FORCE, NULL, 0);
		ret = req_run(fd, m, NULL, NULL, msg, sizeof(msg));
		if (ret && ret != -ENOENT) {
			printf("# %s: export del %s: %s \"%s\"\n", when,
			       now.exp[i].name, errname(-ret), msg);
			bad++;
		}
	}
	for (i = 0; i < now.n_lis && del_new; i++) {
		if (has_lis(&start, now.lis[i].addr, now.lis[i].port))
			continue;
		req_begin(m, TARGET, RMBD_TARGET_CMD_LISTENER_DEL, 0);
		req_str(m, RMBD_TARGET_ATTR_LISTENER_ADDR, now.lis[i].addr);
		req_u16(m, RMBD_TARGET_ATTR_LISTENER_PORT, now.lis[i].port);
		ret = req_run(fd, m, NULL, NULL, msg, sizeof(msg));
		if (ret && ret != -ENOENT) {
			printf("# %s: listener del %s port %u: %s \"%s\"\n", when,
			       now.lis[i].addr, now.lis[i].port, errname(-ret),
			       msg);
			bad++;
		}
	}

	/* What was there before must still be: the fuzzer never deletes it. */
	for (i = 0; i < start.n_exp; i++) {
		if (has_exp(&now, start.exp[i].name))
			continue;
		printf("# %s: pre-existing export %s is gone; adding it again\n",
		       when, start.exp[i].name);
		bad++;
		req_begin(m, TARGET, RMBD_TARGET_CMD_EXPORT_ADD, 0);
		req_str(m, RMBD_TARGET_ATTR_EXPORT_NAME, start.exp[i].name);
		req_u64(m, RMBD_TARGET_ATTR_EXPORT_SIZE, start.exp[i].size);
		req_u64(m, RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE,
			start.exp[i].slab);
		req_run(fd, m, NULL, NULL, NULL, 0);
	}
	for (i = 0; i < start.n_lis; i++) {
		if (has_lis(&now, start.lis[i].addr, start.lis[i].port))
			continue;
		printf("# %s: pre-existing listener %s port %u is gone; adding it again\n",
		       when, start.lis[i].addr, start.lis[i].port);
		bad++;
		req_begin(m, TARGET, RMBD_TARGET_CMD_LISTENER_ADD, 0);
		req_str(m, RMBD_TARGET_ATTR_LISTENER_ADDR, start.lis[i].addr);
		req_u16(m, RMBD_TARGET_ATTR_LISTENER_PORT, start.lis[i].port);
		req_run(fd, m, NULL, NULL, NULL, 0);
	}
	for (i = 0; i < start.n_dev; i++) {
		if (!has_dev(&now, start.dev[i])) {
			printf("# %s: pre-existing device rmbd%u is gone\n",
			       when, start.dev[i]);
			bad++;
		}
	}
	return bad;
}

/* Do the objects of now and START match, as sets? */
static bool state_same(const struct state *now, char *why, size_t why_len)
{
	int i;

	if (now->n_exp != start.n_exp || now->n_lis != start.n_lis ||
	    now->n_dev != start.n_dev) {
		snprintf(why, why_len,
			 "%d exports, %d listeners, %d devices; before: %d, %d, %d",
			 now->n_exp, now->n_lis, now->n_dev,
			 start.n_exp, start.n_lis, start.n_dev);
		return false;
	}
	for (i = 0; i < now->n_exp; i++)
		if (!has_exp(&start, now->exp[i].name)) {
			snprintf(why, why_len, "export %s was not there before",
				 now->exp[i].name);
			return false;
		}
	for (i = 0; i < now->n_lis; i++)
		if (!has_lis(&start, now->lis[i].addr, now->lis[i].port)) {
			snprintf(why, why_len, "listener %s port %u was not there before",
				 now->lis[i].addr, now->lis[i].port);
			return false;
		}
	for (i = 0; i < now->n_dev; i++)
		if (!has_dev(&start, now->dev[i])) {
			snprintf(why, why_len, "device rmbd%u was not there before",
				 now->dev[i]);
			return false;
		}
	return true;
}

/* ---- the model: what the kernel must answer to a message ------------ */

/*
 * A message the kernel's netlink_rcv_skb() looks at gets one of these:
 * X_NONE nothing (not a request, or a control message, without
 * NLM_F_ACK), X_ACK0 an ack with error 0 (the same with NLM_F_ACK),
 * X_ERR an error the model names, X_DO (a well-formed request) any
 * answer, X_DUMP a dump that ends with NLMSG_DONE.
 */
enum xkind { X_NONE, X_ACK0, X_ERR, X_DO, X_DUMP };

struct expect {
	enum xkind kind;
	int err;		/* X_ERR */
	int offs;		/* X_ERR: NLMSGERR_ATTR_OFFS, or -1 */
	int miss;		/* X_ERR: NLMSGERR_ATTR_MISS_TYPE, or -1 */
	bool want_msg;		/* X_ERR: with an extack message */
	const char *why;	/* the check that refuses it */
	int known;		/* X_DO: invalid to the uapi, or -1 */
	bool dump_start;	/* reaches __netlink_dump_start() */
	int fam;		/* TARGET, CLIENT, or -1 */
	const struct op *op;
	uint8_t cmd;
	uint16_t flags;
	/* offset of the last of each type */
	int tb[((int)RMBD_CLIENT_ATTR_MAX > (int)RMBD_TARGET_ATTR_MAX ?
		RMBD_CLIENT_ATTR_MAX : RMBD_TARGET_ATTR_MAX) + 1];
	/* DEV_CONNECT's LEGS: each leg's offset, and of its attributes */
	int nr_legs, nr_spares;		/* the spares after the legs */
	int leg[RMBD_MAX_LEGS + RMBD_MAX_SPARES];
	int leg_tb[RMBD_MAX_LEGS + RMBD_MAX_SPARES][RMBD_LEG_ATTR_MAX + 1];
};

static char target_addr[RMBD_ADDR_MAX];	/* where connects may go */
static unsigned char target_in4[4];
static bool have_target;

/* in4_pton(src, strlen, ..., '\n', NULL) as inet4_pton() calls it. */
static bool kernel_in4(const char *s, unsigned char out[4])
{
	size_t n = strlen(s);
	unsigned int w = 0, i = 0;
	bool digit = false;

	if (n > 16)
		return false;
	for (;; s++, n--) {
		int c = n > 0 ? (unsigned char)*s : '\0';

		if (c >= '0' && c <= '9') {
			w = w * 10 + (unsigned int)(c - '0');
			digit = true;
			if (w > 255)
				return false;
			continue;
		}
		if (c != '.' && c != '\0' && c != '\n' && c != ':')
			return false;
		if (!digit)
			return false;
		out[i++] = (unsigned char)w;
		w = 0;
		digit = false;
		if (c != '.')
			return i == 4;
		if (i >= 4)
			return false;
	}
}

/*
 * How inet_pton_with_scope() takes S: 4 (IPv4), 6 (IPv6), 0 (neither), or
 * -1: it has a ':' and glibc does not take it; the kernel might.
 */
static int kernel_addr(const char *s, unsigned char out[16])
{
	char tmp[64];
	size_t n;

	if (kernel_in4(s, out))
		return 4;
	n = strcspn(s, "%");
	if (strlen(s) <= 48 && n < sizeof(tmp)) {
		memcpy(tmp, s, n);
		tmp[n] = '\0';
		if (inet_pton(AF_INET6, tmp, out) == 1)
			return 6;
	}
	return strchr(s, ':') ? -1 : 0;
}

static bool same_addr(const char *a, const char *b)
{
	unsigned char x[16], y[16];
	int fa = kernel_addr(a, x), fb = kernel_addr(b, y);

	if (fa == 4 && fb == 4)
		return !memcmp(x, y, 4);
	if (fa == 6 && fb == 6)
		return !memcmp(x, y, 16);
	return fa == -1 && fb == 6;
}

static bool strict_doc;		/* RMBD_FUZZ_STRICT */

/*
 * What the kernel takes although the uapi header says it is invalid;
 * counted, and failures with RMBD_FUZZ_STRICT=1.
 */
enum known { K_NAME, K_ADDR, NR_KNOWN };

static const char *const known_what[NR_KNOWN] = {
	[K_NAME] = "export names with Latin-1 letters",
	[K_ADDR] = "IPv4 addresses with leading zeros or a tail after ':' or a newline",
};

static void refuse(struct expect *x, int err, int offs, bool msg,
		   const char *why)
{
	x->kind = X_ERR;
	x->err = err;
	x->offs = offs;
	x->want_msg = msg;
	x->why = why;
}

static bool kernel_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
	       (c >= 'a' && c <= 'z');
}

/*
 * Export names as the uapi header has them: 1 to 63 characters of
 * [A-Za-z0-9._-], not starting with a dot.  0: valid, 1: invalid, 2:
 * invalid, but rmbd_valid_name() takes it: the kernel's isalnum() is
 * Latin-1 and lets bytes 0xc0-0xff (but 0xd7 and 0xf7) pass.
 */
static int name_check(const char *s)
{
	size_t i, n = strnlen(s, RMBD_EXPORT_NAME_MAX);
	int ret = 0;

	if (!n || n >= RMBD_EXPORT_NAME_MAX || s[0] == '.')
		return 1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (kernel_alnum(c) || c == '.' || c == '_' || c == '-')
			continue;
		if (c >= 0xc0 && c != 0xd7 && c != 0xf7) {
			ret = 2;
			continue;
		}
		return 1;
	}
	return ret;
}

/* rmbd_valid_host(): 1..127 of [A-Za-z0-9._:-], no leading '.' or '-'. */
static bool host_ok(const char *s)
{
	size_t i, n = strnlen(s, RMBD_HOST_MAX);

	if (!n || n >= RMBD_HOST_MAX || s[0] == '.' || s[0] == '-')
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!kernel_alnum(c) && !strchr("._:-", c))
			return false;
	}
	return true;
}

static int fixed_len(enum ptype t)
{
	switch (t) {
	case P_U8: return 1;
	case P_U16: return 2;
	case P_U32: return 4;
	case P_U64: return 8;
	default: return 0;
	}
}

static uint64_t get_uint(const unsigned char *d, int len)
{
	switch (len) {
	case 1: return d[0];
	case 2: return get16(d);
	case 4: return get32(d);
	case 8: return get64(d);
	}
	return 0;
}

static bool model_stream(const unsigned char *h, uint32_t off, int rem,
			 const struct apol *pol, int maxattr,
			 struct expect *x, int *tb);

/*
 * nla_validate_array() over the REM bytes of an NLA_NESTED_ARRAY's
 * entries at OFF: each entry's attributes against the policy of P, of
 * any entry type; an empty entry is passed over, one too short for an
 * attribute refused, and what nla_ok() stops at is not looked at.
 */
static bool model_array(const unsigned char *h, uint32_t off, int rem,
			const struct apol *p, struct expect *x)
{
	while (rem >= NLA_HDRLEN) {
		uint16_t alen = get16(h + off);

		if (alen < NLA_HDRLEN || alen > rem)
			break;
		if (alen > NLA_HDRLEN && alen < 2 * NLA_HDRLEN) {
			refuse(x, ERANGE, off, true, "array element too short");
			return false;
		}
		if (alen > NLA_HDRLEN &&
		    !model_stream(h, off + NLA_HDRLEN, alen - NLA_HDRLEN,
				  p->nest, p->nest_max, x, NULL))
			return false;
		off += NLA_ALIGN(alen);
		rem -= NLA_ALIGN(alen);
	}
	return true;
}

/*
 * __nla_validate_parse() with NL_VALIDATE_STRICT over the REM bytes of
 * attributes at OFF in message H, and validate_nla() for each, against
 * POL (maxtype MAXATTR): false (and X_ERR) at the first the kernel
 * refuses.  The offsets of the top level's attributes go to TB (NULL for
 * a nest's).
 */
static bool model_stream(const unsigned char *h, uint32_t off, int rem,
			 const struct apol *pol, int maxattr,
			 struct expect *x, int *tb)
{
	while (rem >= NLA_HDRLEN) {
		uint16_t alen = get16(h + off), raw = get16(h + off + 2);
		int type = raw & NLA_TYPE_MASK, dlen = alen - NLA_HDRLEN;
		const unsigned char *d = h + off + NLA_HDRLEN;
		const struct apol *p;
		uint64_t v;

		if (alen < NLA_HDRLEN || alen > rem)
			break;
		if (type == 0 || type > maxattr) {
			refuse(x, EINVAL, off, true, "unknown attribute type");
			return false;
		}
		p = &pol[type];
		if (fixed_len(p->type) && dlen != fixed_len(p->type)) {
			refuse(x, EINVAL, off, true, "attribute of the wrong length");
			return false;
		}
		if ((p->type == P_NEST || p->type == P_NARRAY) &&
		    !(raw & NLA_F_NESTED)) {
			refuse(x, EINVAL, off, true, "NLA_F_NESTED is missing");
			return false;
		}
		if ((raw & NLA_F_NESTED) && p->type != P_UNSPEC &&
		    p->type != P_NEST && p->type != P_NARRAY) {
			refuse(x, EINVAL, off, true, "NLA_F_NESTED not expected");
			return false;
		}
		switch (p->type) {
		case P_UNSPEC:
		case P_REJECT:
			refuse(x, EINVAL, off, true, "attribute not taken as input");
			return false;
		case P_FLAG:
			if (dlen) {
				refuse(x, ERANGE, off, true, "flag with a payload");
				return false;
			}
			break;
		case P_STR:
			if (!dlen || !memchr(d, '\0', dlen < p->len + 1 ?
						      dlen : p->len + 1)) {
				refuse(x, EINVAL, off, true, "string without a NUL");
				return false;
			}
			if (dlen - (d[dlen - 1] == '\0') > p->len) {
				refuse(x, ERANGE, off, true, "string too long");
				return false;
			}
			break;
		case P_BIN:
			if (dlen > p->len) {
				refuse(x, ERANGE, off, true, "binary too long");
				return false;
			}
			break;
		case P_NEST:
			if (!dlen)
				break;
			if (dlen < NLA_HDRLEN) {
				refuse(x, ERANGE, off, true, "nest too short");
				return false;
			}
			if (!model_stream(h, off + NLA_HDRLEN, dlen, p->nest,
					  maxattr, x, NULL))
				return false;
			break;
		case P_NARRAY:
			if (!dlen)
				break;
			if (dlen < NLA_HDRLEN) {
				refuse(x, ERANGE, off, true, "nest too short");
				return false;
			}
			if (!model_array(h, off + NLA_HDRLEN, dlen, p, x))
				return false;
			break;
		default:
			v = get_uint(d, dlen);
			if (((p->check & CK_MIN) && v < p->min) ||
			    ((p->check & CK_MAX) && v > p->max)) {
				refuse(x, ERANGE, off, true, "integer out of range");
				return false;
			}
		}
		if (tb)
			tb[type] = (int)off;
		off += NLA_ALIGN(alen);
		rem -= NLA_ALIGN(alen);
	}
	if (rem > 0) {
		refuse(x, EINVAL, -1, true, "bytes leftover after the attributes");
		return false;
	}
	return true;
}

/* The attributes of message H, as genl_family_rcv_msg() parses them. */
static bool model_attrs(const unsigned char *h, uint32_t nl,
			const struct family *f, struct expect *x)
{
	int i;

	for (i = 0; i <= f->maxattr; i++)
		x->tb[i] = -1;
	return model_stream(h, NL_HDRS, (int)nl - NL_HDRS, f->pol, f->maxattr,
			    x, x->tb);
}

static const char *tb_str(const unsigned char *h, const struct expect *x,
			  int type)
{
	return (const char *)h + x->tb[type] + NLA_HDRLEN;
}

static uint64_t tb_u64(const unsigned char *h, const struct expect *x,
		       int type)
{
	return get64(h + x->tb[type] + NLA_HDRLEN);
}

/*
 * rmbd_c_connect()'s layout checks, once the legs are parsed: a pool of
 * two legs or more, with no more copies than legs (default 2); a mirror
 * with as many copies as legs, if any are given.  True when it refuses.
 */
static bool model_layout(const unsigned char *h, struct expect *x)
{
	int lay = x->tb[RMBD_CLIENT_ATTR_LAYOUT];
	int cp = x->tb[RMBD_CLIENT_ATTR_COPIES];
	int legs = x->nr_legs ? x->nr_legs : 1;
	int copies = cp >= 0 ? h[cp + NLA_HDRLEN] : -1;

	if (lay >= 0 && h[lay + NLA_HDRLEN] == RMBD_LAYOUT_POOL) {
		if (legs < 2) {
			refuse(x, EINVAL, lay, true, "a pool of one leg");
			return true;
		}
		if (copies > legs) {
			refuse(x, EINVAL, cp, true, "more copies than legs");
			return true;
		}
		if (copies == 1 && x->tb[RMBD_CLIENT_ATTR_SPARES] >= 0) {
			refuse(x, EINVAL, x->tb[RMBD_CLIENT_ATTR_SPARES], true,
			       "spares of a pool of one copy");
			return true;
		}
		return false;
	}
	if (cp >= 0 && copies != legs) {
		refuse(x, EINVAL, cp, true, "a mirror's copies not its legs");
		return true;
	}
	return false;
}

/*
 * An address inet_pton_with_scope() takes, for the attribute at OFFS (the
 * extack's offset on a refusal): true when the model refuses.
 */
static bool model_one_addr(const char *s, int offs, struct expect *x,
			   unsigned char a[16], int *kind)
{
	*kind = kernel_addr(s, a);
	switch (*kind) {
	case 0:
		refuse(x, EINVAL, offs, true, "not an IPv4 or IPv6 address");
		return true;
	case 4:
		if (inet_pton(AF_INET, s, a) == 1)
			break;
		if (strict_doc) {
			refuse(x, EINVAL, offs, true,
			       "not an IPv4 address in dotted-decimal form");
			return true;
		}
		x->known = K_ADDR;
	}
	return false;
}

static const char *leg_str(const unsigned char *h, const struct expect *x,
			   int i, int type)
{
	return (const char *)h + x->leg_tb[i][type] + NLA_HDRLEN;
}

/*
 * rmbd_c_dev_connect() over the legs of LEGS, each refused at its nest:
 * its address (rmbd_c_leg_new()), then a second leg on the same address,
 * port and export.  True when the model refuses.
 */
static bool model_leg_addrs(const unsigned char *h, struct expect *x)
{
	unsigned char a[RMBD_MAX_LEGS + RMBD_MAX_SPARES][16];
	uint16_t port[RMBD_MAX_LEGS + RMBD_MAX_SPARES];
	int i, j, kind[RMBD_MAX_LEGS + RMBD_MAX_SPARES];

	/* The legs, then the spares (rmbd_c_spares_set()) */
	for (i = 0; i < x->nr_legs + x->nr_spares; i++) {
		memset(a[i], 0, sizeof(a[i]));
		if (model_one_addr(leg_str(h, x, i, RMBD_LEG_ATTR_ADDR),
				   x->leg[i], x, a[i], &kind[i]))
			return true;
		/* Not sure what the kernel makes of it: no more checks. */
		if (kind[i] < 0)
			return false;
		port[i] = x->leg_tb[i][RMBD_LEG_ATTR_PORT] >= 0 ?
			  get16(h + x->leg_tb[i][RMBD_LEG_ATTR_PORT] +
				NLA_HDRLEN) : RMBD_DEFAULT_PORT;
		for (j = 0; j < i; j++) {
			if (kind[i] == kind[j] && port[i] == port[j] &&
			    !memcmp(a[i], a[j], kind[i] == 4 ? 4 : 16) &&
			    !strcmp(leg_str(h, x, i, RMBD_LEG_ATTR_EXPORT_NAME),
				    leg_str(h, x, j, RMBD_LEG_ATTR_EXPORT_NAME))) {
				refuse(x, EINVAL, x->leg[i], true,
				       "two legs on the same export");
				return true;
			}
		}
	}
	return false;
}

/*
 * The address of a listener add or delete, or of a connect, goes through
 * inet_pton_with_scope(): a string neither in4_pton() nor in6_pton() can
 * take is refused with EINVAL.  Returns true when the model refuses.
 */
static bool model_addr(const unsigned char *h, struct expect *x)
{
	unsigned char a[16];
	int type = -1, offs, kind;

	if (x->fam == TARGET && (x->cmd == RMBD_TARGET_CMD_LISTENER_ADD ||
				 x->cmd == RMBD_TARGET_CMD_LISTENER_DEL))
		type = RMBD_TARGET_ATTR_LISTENER_ADDR;
	if (x->fam == CLIENT && x->cmd == RMBD_CLIENT_CMD_DEV_CONNECT) {
		if (x->nr_legs)
			return model_leg_addrs(h, x);
		type = RMBD_CLIENT_ATTR_ADDR;
	}
	if (type < 0)
		return false;
	/* The listener's extack points at the address, a connect's not. */
	offs = x->fam == TARGET ? x->tb[type] : -1;
	return model_one_addr(tb_str(h, x, type), offs, x, a, &kind);
}

/*
 * rmbd_c_parse_list() over the legs of nest @legs (LEGS or SPARES) the
 * policy took, at most @max: true when it refuses.  They go to x->leg
 * and x->leg_tb from @base on, *@nr of them.
 */
static bool model_leg_list(const unsigned char *h, struct expect *x, int legs,
			   int max, int *nr, int base)
{
	int rem = get16(h + legs) - NLA_HDRLEN, i, t;
	uint32_t off = (uint32_t)legs + NLA_HDRLEN;

	while (rem >= NLA_HDRLEN) {
		uint16_t alen = get16(h + off), raw = get16(h + off + 2);
		int *tb = x->leg_tb[base + *nr];
		int erem;
		uint32_t eoff;

		if (alen < NLA_HDRLEN || alen > rem)
			break;
		if ((raw & NLA_TYPE_MASK) != RMBD_CLIENT_ATTR_LEG) {
			refuse(x, EINVAL, off, true, "legs hold legs only");
			return true;
		}
		if (*nr == max) {
			refuse(x, EINVAL, off, true, "more legs or spares than the most");
			return true;
		}
		if (!(raw & NLA_F_NESTED)) {
			refuse(x, EINVAL, off, true, "a leg without NLA_F_NESTED");
			return true;
		}
		/* The policy took it: its attributes are well formed. */
		for (t = 0; t <= RMBD_LEG_ATTR_MAX; t++)
			tb[t] = -1;
		eoff = off + NLA_HDRLEN;
		erem = alen - NLA_HDRLEN;
		while (erem >= NLA_HDRLEN) {
			uint16_t elen = get16(h + eoff);

			if (elen < NLA_HDRLEN || elen > erem)
				break;
			tb[get16(h + eoff + 2) & NLA_TYPE_MASK] = (int)eoff;
			eoff += NLA_ALIGN(elen);
			erem -= NLA_ALIGN(elen);
		}
		for (t = RMBD_LEG_ATTR_ADDR; ; t = RMBD_LEG_ATTR_EXPORT_NAME) {
			if (tb[t] < 0) {
				refuse(x, EINVAL, -1, true, "a leg without address or export");
				x->miss = t;
				return true;
			}
			if (t == RMBD_LEG_ATTR_EXPORT_NAME)
				break;
		}
		i = name_check(leg_str(h, x, base + *nr,
				       RMBD_LEG_ATTR_EXPORT_NAME));
		if (i == 1 || (i == 2 && strict_doc)) {
			refuse(x, EINVAL, tb[RMBD_LEG_ATTR_EXPORT_NAME], true,
			       "invalid export name in a leg");
			return true;
		}
		if (i == 2)
			x->known = K_NAME;
		x->leg[base + (*nr)++] = (int)off;
		off += NLA_ALIGN(alen);
		rem -= NLA_ALIGN(alen);
	}
	return false;
}

/*
 * rmbd_c_parse_legs() over the LEGS nest, and the SPARES after them:
 * true when it refuses.
 */
static bool model_legs(const unsigned char *h, struct expect *x)
{
	int legs = x->tb[RMBD_CLIENT_ATTR_LEGS];

	if (x->tb[RMBD_CLIENT_ATTR_ADDR] >= 0 ||
	    x->tb[RMBD_CLIENT_ATTR_PORT] >= 0 ||
	    x->tb[RMBD_CLIENT_ATTR_EXPORT_NAME] >= 0) {
		refuse(x, EINVAL, legs, true, "legs and a top-level leg");
		return true;
	}
	if (model_leg_list(h, x, legs, RMBD_MAX_LEGS, &x->nr_legs, 0))
		return true;
	if (!x->nr_legs) {
		refuse(x, EINVAL, legs, true, "no legs");
		return true;
	}
	if (x->tb[RMBD_CLIENT_ATTR_SPARES] >= 0 &&
	    model_leg_list(h, x, x->tb[RMBD_CLIENT_ATTR_SPARES],
			   RMBD_MAX_SPARES, &x->nr_spares, x->nr_legs))
		return true;
	return false;
}

static int host_attr(const struct expect *x)
{
	return x->fam == CLIENT ? RMBD_CLIENT_ATTR_HOST : RMBD_TARGET_ATTR_HOST;
}

/*
 * rmbd_t_parse_hosts() over an EXPORT_HOSTS nest the policy took (only
 * HOST attributes, NUL-terminated): true when it refuses.
 */
static bool model_hosts(const unsigned char *h, struct expect *x)
{
	uint32_t off = (uint32_t)x->tb[RMBD_TARGET_ATTR_EXPORT_HOSTS];
	int rem = get16(h + off) - NLA_HDRLEN, n = 0, i;
	uint32_t seen[RMBD_MAX_EXPORT_HOSTS];
	const char *s;

	off += NLA_HDRLEN;
	while (rem >= NLA_HDRLEN) {
		uint16_t alen = get16(h + off);

		if (alen < NLA_HDRLEN || alen > rem)
			break;
		s = (const char *)h + off + NLA_HDRLEN;
		if (n >= RMBD_MAX_EXPORT_HOSTS) {
			refuse(x, ENOSPC, off, true, "more than 16 hosts");
			return true;
		}
		if (!host_ok(s)) {
			refuse(x, EINVAL, off, true, "invalid host identity");
			return true;
		}
		for (i = 0; i < n; i++) {
			if (!strcmp((const char *)h + seen[i] + NLA_HDRLEN, s)) {
				refuse(x, EINVAL, off, true, "a host named twice");
				return true;
			}
		}
		seen[n++] = off;
		off += NLA_ALIGN(alen);
		rem -= NLA_ALIGN(alen);
	}
	return false;
}

/* The checks a doit makes before it touches anything. */
static void model_doit(const unsigned char *h, struct expect *x)
{
	const struct op *op = x->op;
	int i, name = -1, rc;
	uint64_t size, slab = RMBD_DEFAULT_SLAB_SIZE;

	/* A connect's legs, or its one leg at the top level. */
	if (x->fam == CLIENT && x->cmd == RMBD_CLIENT_CMD_DEV_CONNECT &&
	    x->tb[RMBD_CLIENT_ATTR_LEGS] >= 0) {
		if (model_legs(h, x))
			return;
	} else {
		for (i = 0; i < 4 && op->req[i]; i++) {
			if (x->tb[op->req[i]] < 0) {
				refuse(x, EINVAL, -1, false,
				       "required attribute missing");
				x->miss = op->req[i];
				return;
			}
		}
		if (x->fam == CLIENT &&
		    (x->cmd == RMBD_CLIENT_CMD_DEV_CONNECT ||
		     x->cmd == RMBD_CLIENT_CMD_DEV_REPLACE))
			name = RMBD_CLIENT_ATTR_EXPORT_NAME;
	}
	if (x->fam == TARGET && x->cmd == RMBD_TARGET_CMD_EXPORT_ADD)
		name = RMBD_TARGET_ATTR_EXPORT_NAME;
	if (name >= 0) {
		rc = name_check(tb_str(h, x, name));
		if (rc == 1 || (rc == 2 && strict_doc)) {
			refuse(x, EINVAL, x->tb[name], true, "invalid export name");
			return;
		}
		if (rc == 2)
			x->known = K_NAME;
	}
	if (x->fam == TARGET &&
	    (x->cmd == RMBD_TARGET_CMD_EXPORT_HOST_ADD ||
	     x->cmd == RMBD_TARGET_CMD_EXPORT_HOST_DEL) &&
	    (x->tb[RMBD_TARGET_ATTR_EXPORT_HOSTS] >= 0 ||
	     x->tb[RMBD_TARGET_ATTR_EXPORT_ANY_HOST] >= 0 ||
	     x->tb[RMBD_TARGET_ATTR_EXPORT_SHARED] >= 0 ||
	     x->tb[RMBD_TARGET_ATTR_EXPORT_READ_ONLY] >= 0)) {
		refuse(x, EINVAL, -1, true,
		       "hosts, any_host, shared or read_only on a host command");
		return;
	}
	if (x->fam == TARGET && x->tb[RMBD_TARGET_ATTR_SECRET] >= 0 &&
	    (x->cmd == RMBD_TARGET_CMD_EXPORT_HOST_ADD ||
	     x->cmd == RMBD_TARGET_CMD_EXPORT_HOST_DEL) &&
	    (x->cmd == RMBD_TARGET_CMD_EXPORT_HOST_DEL ||
	     get16(h + x->tb[RMBD_TARGET_ATTR_SECRET]) - NLA_HDRLEN <
	     RMBD_SECRET_MIN)) {
		refuse(x, EINVAL, x->tb[RMBD_TARGET_ATTR_SECRET], true,
		       "a secret on host del, or a short one");
		return;
	}
	/* rmbd_c_connect(): a spare is rebuilt from another leg. */
	if (x->fam == CLIENT && x->cmd == RMBD_CLIENT_CMD_DEV_CONNECT &&
	    x->tb[RMBD_CLIENT_ATTR_SPARES] >= 0 && x->nr_legs < 2) {
		refuse(x, EINVAL, x->tb[RMBD_CLIENT_ATTR_SPARES], true,
		       "spares of a device of one leg");
		return;
	}
	if (x->fam == CLIENT && x->cmd == RMBD_CLIENT_CMD_DEV_CONNECT &&
	    model_layout(h, x))
		return;
	if (x->fam == CLIENT && x->cmd == RMBD_CLIENT_CMD_DEV_CONNECT &&
	    x->tb[RMBD_CLIENT_ATTR_SECRET] >= 0 &&
	    (get16(h + x->tb[RMBD_CLIENT_ATTR_SECRET]) - NLA_HDRLEN <
	     RMBD_SECRET_MIN || x->tb[RMBD_CLIENT_ATTR_HOST] < 0)) {
		refuse(x, EINVAL, x->tb[RMBD_CLIENT_ATTR_SECRET], true,
		       "a short secret, or one without a host");
		return;
	}
	/* rmbd_c_connect() and rmbd_t_export_host(): before anything else. */
	if (((x->fam == CLIENT && x->cmd == RMBD_CLIENT_CMD_DEV_CONNECT) ||
	     (x->fam == TARGET && x->cmd == RMBD_TARGET_CMD_EXPORT_HOST_ADD)) &&
	    x->tb[host_attr(x)] >= 0 && !host_ok(tb_str(h, x, host_attr(x)))) {
		refuse(x, EINVAL, x->tb[host_attr(x)], true, "invalid host identity");
		return;
	}
	if (model_addr(h, x))
		return;
	if (x->fam == TARGET && x->cmd == RMBD_TARGET_CMD_EXPORT_ADD) {
		size = tb_u64(h, x, RMBD_TARGET_ATTR_EXPORT_SIZE);
		if (!size || size % 4096 || size > (1ULL << 50)) {
			refuse(x, EINVAL, x->tb[RMBD_TARGET_ATTR_EXPORT_SIZE],
			       true, "invalid export size");
			return;
		}
		if (x->tb[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE] >= 0) {
			slab = tb_u64(h, x, RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE);
			if ((slab & (slab - 1)) || slab < RMBD_MIN_SLAB_SIZE ||
			    slab > RMBD_MAX_SLAB_SIZE) {
				refuse(x, EINVAL,
				       x->tb[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE],
				       true, "invalid slab size");
				return;
			}
		}
		if (size / slab + !!(size % slab) > (1U << 20)) {
			refuse(x, E2BIG, -1, true, "too many slabs");
			return;
		}
		if (x->tb[RMBD_TARGET_ATTR_HOST] >= 0) {
			refuse(x, EINVAL, x->tb[RMBD_TARGET_ATTR_HOST], true,
			       "a top-level host on export add");
			return;
		}
		if (x->tb[RMBD_TARGET_ATTR_SECRET] >= 0) {
			refuse(x, EINVAL, x->tb[RMBD_TARGET_ATTR_SECRET], true,
			       "a secret on export add");
			return;
		}
		if (x->tb[RMBD_TARGET_ATTR_EXPORT_HOSTS] >= 0 &&
		    model_hosts(h, x))
			return;
	}
	x->kind = X_DO;
}

/*
 * What netlink_rcv_skb(), genl_rcv_msg() and genl_family_rcv_msg() do
 * with message H of NL bytes (NL >= NLMSG_HDRLEN, all of it in the send).
 */
static void model(const unsigned char *h, uint32_t nl, struct expect *x)
{
	uint16_t type = get16(h + 4), flags = get16(h + 6), fl;
	const struct family *f;
	bool dump;

	memset(x, 0, sizeof(*x));
	x->offs = x->miss = x->fam = x->known = -1;
	x->flags = flags;
	if (!(flags & NLM_F_REQUEST) || type < NLMSG_MIN_TYPE) {
		x->kind = flags & NLM_F_ACK ? X_ACK0 : X_NONE;
		x->why = flags & NLM_F_REQUEST ? "control message" :
			 "not a request";
		return;
	}
	x->fam = fam_by_id(type);
	if (x->fam < 0) {
		refuse(x, ENOENT, -1, false, "no such family");
		return;
	}
	f = &fams[x->fam];
	if (nl < NL_HDRS) {
		refuse(x, EINVAL, -1, false, "generic netlink header cut short");
		return;
	}
	x->cmd = h[NLMSG_HDRLEN];
	if (get16(h + NLMSG_HDRLEN + 2)) {
		refuse(x, EINVAL, -1, true, "genlmsghdr.reserved not 0");
		return;
	}
	fl = flags;
	if ((fl & NLM_F_DUMP) == NLM_F_DUMP)
		fl &= ~NLM_F_DUMP;
	if (fl & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO)) {
		refuse(x, EINVAL, -1, true, "reserved nlmsg_flags");
		return;
	}
	x->op = find_op(x->fam, x->cmd);
	if (!x->op) {
		refuse(x, EOPNOTSUPP, -1, false, "unknown command");
		return;
	}
	dump = (flags & NLM_F_DUMP) == NLM_F_DUMP;
	if (dump ? !x->op->dumpit : !x->op->doit) {
		refuse(x, EOPNOTSUPP, -1, false,
		       dump ? "dump of a do-only command" :
		       "do of a dump-only command");
		return;
	}
	/*
	 * A dump in progress on the socket refuses the next with EBUSY
	 * before genl_start() parses its attributes.
	 */
	x->dump_start = dump;
	if (!model_attrs(h, nl, f, x))
		return;
	if (dump)
		x->kind = X_DUMP;
	else
		model_doit(h, x);
}

static const char *expect_str(const struct expect *x, char *buf, size_t len)
{
	switch (x->kind) {
	case X_NONE:
		return "no answer";
	case X_ACK0:
		return "an ack";
	case X_DO:
		return "any answer (a well-formed request)";
	case X_DUMP:
		return "a dump";
	case X_ERR:
		break;
	}
	snprintf(buf, len, "%s (%s)", errname(x->err), x->why);
	if (x->offs >= 0)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 " at offset %d", x->offs);
	if (x->miss >= 0)
		snprintf(buf + strlen(buf), len - strlen(buf),
			 ", missing attribute %d", x->miss);
	return buf;
}

/* ---- the guard: what a random request must not do ------------------- */

/* Guard changes: deletes, connects, export sizes. */
static unsigned int guarded[3];

/* The C string in attribute payload D, or NULL when it has no NUL. */
static const char *cstr(const unsigned char *d, size_t n)
{
	return n && memchr(d, '\0', n) ? (const char *)d : NULL;
}

/*
 * A connect's address, payload D of N bytes: only to the target's
 * address (with NO_CONNECT, nowhere), else made one the kernel refuses.
 */
static void guard_addr(unsigned char *d, size_t n, bool no_connect)
{
	const char *s = cstr(d, n);
	unsigned char a[16];
	int k;

	if (!s || !s[0])
		return;
	k = kernel_addr(s, a);
	if (k == 4 && have_target && !no_connect && !memcmp(a, target_in4, 4))
		return;
	if (k) {
		d[0] = 'x';
		guarded[1]++;
	}
}

/* The address of every leg in LEGS, payload D of N bytes, as above. */
static void guard_legs(unsigned char *d, size_t n, bool no_connect)
{
	const size_t hdr = NLA_HDRLEN;
	size_t off = 0, eoff, end;
	uint16_t alen, elen;

	for (; n - off >= hdr; off += NLA_ALIGN(alen)) {
		alen = get16(d + off);
		if (alen < hdr || alen > n - off)
			return;
		end = off + alen;
		for (eoff = off + hdr; end - eoff >= hdr; eoff += NLA_ALIGN(elen)) {
			elen = get16(d + eoff);
			if (elen < hdr || elen > end - eoff)
				break;
			if ((get16(d + eoff + 2) & NLA_TYPE_MASK) ==
			    RMBD_LEG_ATTR_ADDR)
				guard_addr(d + eoff + hdr, elen - hdr, no_connect);
			if ((size_t)NLA_ALIGN(elen) >= end - eoff)
				break;
		}
		if ((size_t)NLA_ALIGN(alen) >= n - off)
			return;
	}
}

/*
 * Change attribute payloads in place, never lengths, so that no message
 * deletes what was there before, connects anywhere but to the target's
 * address (or, with NO_CONNECT, anywhere), or allocates much memory.
 */
static void guard(unsigned char *h, uint32_t nl, bool no_connect)
{
	int fam = fam_by_id(get16(h + 4));
	uint32_t off = NL_HDRS;
	int rem = (int)nl - NL_HDRS;
	uint8_t cmd;

	if (fam < 0 || nl < NL_HDRS)
		return;
	cmd = h[NLMSG_HDRLEN];
	while (rem >= NLA_HDRLEN) {
		uint16_t alen = get16(h + off);
		int type = get16(h + off + 2) & NLA_TYPE_MASK, i;
		unsigned char *d = h + off + NLA_HDRLEN;
		size_t n = alen - NLA_HDRLEN;
		const char *s = cstr(d, n);
		uint64_t v;

		if (alen < NLA_HDRLEN || alen > rem)
			break;
		off += NLA_ALIGN(alen);
		rem -= NLA_ALIGN(alen);
		if (fam == TARGET && cmd == RMBD_TARGET_CMD_EXPORT_DEL &&
		    type == RMBD_TARGET_ATTR_EXPORT_NAME && s &&
		    has_exp(&start, s)) {
			d[0] = '~';
			guarded[0]++;
		}
		if (fam == TARGET && cmd == RMBD_TARGET_CMD_LISTENER_DEL &&
		    type == RMBD_TARGET_ATTR_LISTENER_ADDR && s && s[0]) {
			for (i = 0; i < start.n_lis; i++) {
				if (same_addr(s, start.lis[i].addr)) {
					d[0] = 'x';
					guarded[0]++;
					break;
				}
			}
		}
		if (fam == TARGET && cmd == RMBD_TARGET_CMD_EXPORT_ADD &&
		    type == RMBD_TARGET_ATTR_EXPORT_SIZE && n == 8) {
			v = get64(d);
			if (!(v % 4096) && v > 64 * MIB && v < 64 * GIB) {
				put64(d, 4 * MIB);
				guarded[2]++;
			}
		}
		if (fam == CLIENT && (cmd == RMBD_CLIENT_CMD_DEV_DISCONNECT ||
				      cmd == RMBD_CLIENT_CMD_DEV_REPLACE) &&
		    type == RMBD_CLIENT_ATTR_DEV_INDEX && n == 4 &&
		    has_dev(&start, get32(d))) {
			put32(d, 0x7ffffff0);
			guarded[0]++;
		}
		if (fam == CLIENT && (cmd == RMBD_CLIENT_CMD_DEV_CONNECT ||
				      cmd == RMBD_CLIENT_CMD_DEV_REPLACE) &&
		    type == RMBD_CLIENT_ATTR_ADDR)
			guard_addr(d, n, no_connect);
		if (fam == CLIENT && cmd == RMBD_CLIENT_CMD_DEV_CONNECT &&
		    (type == RMBD_CLIENT_ATTR_LEGS ||
		     type == RMBD_CLIENT_ATTR_SPARES))
			guard_legs(d, n, no_connect);
	}
}

/* ---- the generator -------------------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static bool chance(unsigned int pct)
{
	return below(100) < pct;
}

static void rnd_bytes(unsigned char *p, size_t n)
{
	while (n--)
		*p++ = (unsigned char)rnd();
}

/* Each send has a stream of its own: seed and send number make its bytes. */
static void rnd_seed(uint64_t seed, unsigned int iter)
{
	rng = seed ^ ((uint64_t)iter * 0xd1b54a32d192ed03ULL);
	rnd();
}

/*
 * Export names: a few the fuzzer reuses, so that adds, connects, gets and
 * deletes meet; the pre-existing ones (never for a delete); and invalid
 * ones.  S has room for 80 bytes; may hold NULs; returns the length.
 */
static size_t gen_name(char *s, bool del)
{
	static const char *const bad[] = {
		"", ".x", "..", ".", "a/b", "a b", "a\tb", "fz*", "fz:0", "fz\n",
		"fz\x7f", "fz%s", "\x01",
	};
	static const char *const latin1[] = {
		"caf\xe9", "\xc0", "fz\xff", "\xd7", "fz\xf7", "\xa0",
	};
	unsigned int r = below(100);
	size_t i, n;

	if (r < 38 || (r < 48 && (del || !start.n_exp)))
		return (size_t)sprintf(s, "fz%u", below(6));
	if (r < 48)
		return (size_t)sprintf(s, "%s", start.exp[below(start.n_exp)].name);
	if (r < 53) {
		n = 62 + below(4);
		memset(s, 'n', n);
		return n;
	}
	if (r < 62)
		return (size_t)sprintf(s, "%s", PICK(bad));
	if (r < 67)
		return (size_t)sprintf(s, "%s", PICK(latin1));
	if (r < 72) {
		/* A NUL inside: the kernel sees "fzN". */
		n = (size_t)sprintf(s, "fz%u", below(6));
		memcpy(s + n, "\0junk", 5);
		return n + 5;
	}
	if (r < 82) {
		n = 1 + below(70);
		for (i = 0; i < n; i++)
			s[i] = (char)(33 + below(94));
		return n;
	}
	if (r < 90) {
		n = below(40);
		rnd_bytes((unsigned char *)s, n);
		return n;
	}
	return (size_t)sprintf(s, "Fz-%u._%c", below(100), 'a' + below(26));
}

/* Addresses: the target's, spellings of it, others, and junk. */
static size_t gen_addr(char *s)
{
	static const char *const pool[] = {
		"127.0.0.1", "0.0.0.0", "10.200.0.2", "::1", "::", "fe80::1%d0",
		"fe80::1%nosuchdev", "::ffff:10.200.0.1", "1.2.3", "1.2.3.4.5",
		"256.1.1.1", "", "10.200.0.1/24", "x", "-1", "0x0a.0.0.1",
		"1.2.3.4%d0", "[::1]", "::1%1",
	};
	unsigned int r = below(100);
	size_t i, n;

	if (r < 40 && have_target)
		return (size_t)sprintf(s, "%s", target_addr);
	if (r < 50 && have_target) {
		switch (below(3)) {
		case 0:
			return (size_t)sprintf(s, "%03u.%03u.%03u.%03u",
					       target_in4[0], target_in4[1],
					       target_in4[2], target_in4[3]);
		case 1:
			return (size_t)sprintf(s, "%s:%u", target_addr, below(70000));
		default:
			return (size_t)sprintf(s, "%s\n", target_addr);
		}
	}
	if (r < 80)
		return (size_t)sprintf(s, "%s", PICK(pool));
	if (r < 85) {
		n = 62 + below(4);
		for (i = 0; i < n; i++)
			s[i] = i % 2 ? '.' : '1';
		return n;
	}
	if (r < 93) {
		n = 1 + below(70);
		for (i = 0; i < n; i++)
			s[i] = (char)(33 + below(94));
		return n;
	}
	n = below(40);
	rnd_bytes((unsigned char *)s, n);
	return n;
}

static uint64_t gen_int(enum vclass v)
{
	static const uint64_t ok_sizes[] = {
		4096, 8192, 65536, MIB, 2 * MIB + 4096, 4 * MIB, 4 * MIB,
		4 * MIB, 16 * MIB,
	};
	static const uint64_t bad_sizes[] = {
		0, 1, 4095, 4097, 12345, 3 * 4096 + 1, MIB + 1, 1ULL << 63,
		UINT64_MAX, UINT64_MAX & ~4095ULL, (1ULL << 50) + 4096,
		1ULL << 50, 1ULL << 40, 4ULL << 40, 64 * GIB,
	};
	static const uint64_t slabs[] = {
		2 * MIB, 4 * MIB, 64 * MIB, GIB, 0, 1, MIB, 3 * MIB, 2 * GIB,
		1ULL << 63, 4096,
	};
	static const uint64_t ports[] = {
		0, 1, RMBD_DEFAULT_PORT, 7471, 7472, 7475, 65535,
	};
	static const uint64_t ioq[] = { 0, 1, 2, 3, 256, 257, UINT32_MAX };
	static const uint64_t depth[] = {
		0, 1, 2, 16, 128, 1024, 1025, UINT32_MAX,
	};
	static const uint64_t delay[] = { 0, 1, 2, 3600, 3601, UINT32_MAX };
	static const uint64_t loss[] = { 0, 1, 60, 86400, 86401, UINT32_MAX };
	static const uint64_t sessions[] = {
		0, 1, 2, RMBD_LISTENER_SESSIONS, RMBD_MAX_SESSIONS,
		RMBD_MAX_SESSIONS + 1, UINT32_MAX,
	};
	unsigned int r = below(100);

	switch (v) {
	case V_SIZE:
		if (r < 2)
			return 64 * MIB;
		if (r < 45)
			return PICK(ok_sizes);
		return r < 90 ? PICK(bad_sizes) : rnd();
	case V_SLAB:
		return r < 90 ? PICK(slabs) : rnd();
	case V_PORT:
		return r < 90 ? PICK(ports) : (uint16_t)rnd();
	case V_INDEX:
		if (r < 60)
			return below(4);
		return r < 80 ? 99 : (uint32_t)rnd();
	case V_IOQ:
	case V_POLLQ:
		return r < 90 ? PICK(ioq) : (uint32_t)rnd();
	case V_DEPTH:
		return r < 90 ? PICK(depth) : (uint32_t)rnd();
	case V_DELAY:
		return r < 90 ? PICK(delay) : (uint32_t)rnd();
	case V_LOSS:
		return r < 90 ? PICK(loss) : (uint32_t)rnd();
	case V_SESSIONS:
		return r < 90 ? PICK(sessions) : (uint32_t)rnd();
	case V_LEG:
		return r < 90 ? below(RMBD_MAX_LEGS + 1) : (uint32_t)rnd();
	case V_LAYOUT:
		if (r < 80)
			return r < 50 ? RMBD_LAYOUT_MIRROR : RMBD_LAYOUT_POOL;
		return r < 90 ? 0 : (uint8_t)rnd();
	case V_COPIES:
		return r < 90 ? below(RMBD_MAX_LEGS + 2) : (uint8_t)rnd();
	default:
		return rnd();
	}
}

static void gen_attr_pol(struct mb *m, const struct apol *pol, int maxattr,
			 uint16_t type, bool del);

/*
 * An NLA_NESTED_ARRAY of TYPE (the connect's legs): a few entries, mostly
 * of the right type with the attributes a leg takes.
 */
static void gen_array(struct mb *m, uint16_t type, const struct apol *p)
{
	static const uint16_t leg_types[] = {
		RMBD_LEG_ATTR_ADDR, RMBD_LEG_ATTR_EXPORT_NAME,
		RMBD_LEG_ATTR_PORT,
	};
	static const unsigned int pct[] = { 92, 92, 30 };
	size_t off, e, len;
	int i, j, n = (int)below(6);

	off = mb_attr(m, type | (chance(95) ? NLA_F_NESTED : 0), NULL, 0);
	for (i = 0; i < n; i++) {
		e = mb_attr(m, (chance(95) ? RMBD_CLIENT_ATTR_LEG :
				(uint16_t)below(RMBD_CLIENT_ATTR_MAX + 2)) |
			    (chance(95) ? NLA_F_NESTED : 0), NULL, 0);
		for (j = 0; j < (int)ARRAY_SIZE(leg_types); j++) {
			if (chance(5))
				gen_attr_pol(m, p->nest, p->nest_max,
					     (uint16_t)below(p->nest_max + 2),
					     false);
			if (chance(pct[j]))
				gen_attr_pol(m, p->nest, p->nest_max,
					     leg_types[j], false);
		}
		len = m->len - e;
		if (chance(3))
			len = below((uint32_t)len + 1);
		put16(m->b + e, (uint16_t)len);
	}
	len = m->len - off;
	if (chance(4))
		len = below((uint32_t)len + 1);
	put16(m->b + off, len > 0xffff ? 0xffff : (uint16_t)len);
}

/* An attribute of TYPE, mostly of its policy's type, sometimes not. */
static void gen_attr(struct mb *m, int fam, uint16_t type, bool del)
{
	gen_attr_pol(m, fams[fam].pol, fams[fam].maxattr, type, del);
}

/* The same, with the policy POL of highest type MAXATTR. */
static void gen_attr_pol(struct mb *m, const struct apol *pol, int maxattr,
			 uint16_t type, bool del)
{
	static const int widths[] = { 0, 1, 2, 3, 4, 5, 8, 16 };
	const struct apol *p = type <= maxattr ? &pol[type] : NULL;
	unsigned char buf[BIG_LEN + 64];
	uint16_t t = type;
	size_t n = 0, k;
	uint64_t v;

	if (chance(4))
		t |= NLA_F_NESTED;
	if (chance(3))
		t |= NLA_F_NET_BYTEORDER;
	if (p && p->type == P_NARRAY && chance(90)) {
		gen_array(m, type, p);
		return;
	}
	switch (p ? p->type : P_UNSPEC) {
	case P_STR:
		if (chance(3)) {
			n = BIG_LEN;
			memset(buf, 'x', n - 1);
			buf[n - 1] = '\0';
			break;
		}
		n = p->v == V_ADDR ? gen_addr((char *)buf) :
		    gen_name((char *)buf, del);
		k = below(100);
		if (k < 85) {
			buf[n++] = '\0';
		} else if (k >= 92) {
			buf[n++] = '\0';
			k = 1 + below(8);
			rnd_bytes(buf + n, k);
			n += k;
		}
		break;
	case P_FLAG:
		n = chance(90) ? 0 : 1 + below(8);
		rnd_bytes(buf, n);
		break;
	case P_U8:
	case P_U16:
	case P_U32:
	case P_U64:
		n = (size_t)(chance(12) ? PICK(widths) : fixed_len(p->type));
		v = gen_int(p->v);
		memset(buf, 0, sizeof(v) * 2);
		memcpy(buf, &v, sizeof(v));
		break;
	default:
		n = (size_t)PICK(widths);
		rnd_bytes(buf, n);
	}
	mb_attr(m, t, buf, n);
}

/* Any type, any payload. */
static void gen_soup(struct mb *m, int fam)
{
	static const size_t lens[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 63, 64, 65, 300,
	};
	unsigned char buf[512];
	uint16_t type;
	size_t n;

	type = chance(90) ? (uint16_t)below(fams[fam].maxattr + 3) :
	       (uint16_t)rnd();
	if ((type & NLA_TYPE_MASK) <= fams[fam].maxattr && chance(50)) {
		gen_attr(m, fam, type & NLA_TYPE_MASK, false);
		return;
	}
	if (chance(1)) {
		/* Near the largest nla_len, zeros mostly. */
		n = 0xffff - NLA_HDRLEN - below(64);
		mb_attr(m, type, NULL, n);
		return;
	}
	n = PICK(lens);
	rnd_bytes(buf, n);
	mb_attr(m, type, buf, n);
}

/* A nest, often with nests inside, sometimes with a wrong length. */
static void gen_nest(struct mb *m, int fam, int depth)
{
	size_t off, len;
	int i, n = (int)below(4);
	uint16_t type = (uint16_t)below(fams[fam].maxattr + 2);

	off = mb_attr(m, type | (chance(90) ? NLA_F_NESTED : 0), NULL, 0);
	for (i = 0; i < n; i++) {
		if (depth < 12 && chance(40))
			gen_nest(m, fam, depth + 1);
		else
			gen_soup(m, fam);
	}
	len = m->len - off;
	if (chance(15))
		len = NLA_HDRLEN + below((uint32_t)(len - NLA_HDRLEN + 1));
	else if (chance(5))
		len += 1 + below(16);
	put16(m->b + off, len > 0xffff ? 0xffff : (uint16_t)len);
}

/* The attributes a command takes, in random order, some left out. */
static void gen_plausible(struct mb *m, int fam, const struct op *op)
{
	uint16_t types[16];
	int i, j, n = 0;

	for (i = 0; i < 4 && op->req[i]; i++)
		if (chance(92))
			types[n++] = op->req[i];
	for (i = 0; i < (int)ARRAY_SIZE(op->opt) && op->opt[i]; i++)
		if (chance(35))
			types[n++] = op->opt[i];
	for (i = 0; i < n; i++) {
		/* A connect's legs: mostly without the top-level leg. */
		if (fam == CLIENT && types[i] == RMBD_CLIENT_ATTR_LEGS &&
		    chance(85)) {
			for (j = 0; j < n; j++) {
				if (types[j] != RMBD_CLIENT_ATTR_ADDR &&
				    types[j] != RMBD_CLIENT_ATTR_PORT &&
				    types[j] != RMBD_CLIENT_ATTR_EXPORT_NAME)
					continue;
				types[j--] = types[--n];
			}
			break;
		}
	}
	if (n && chance(5)) {
		/* Twice: the last one counts. */
		types[n] = types[below(n)];
		n++;
	}
	for (i = n - 1; i > 0; i--) {
		uint16_t t;

		j = (int)below(i + 1);
		t = types[i];
		types[i] = types[j];
		types[j] = t;
	}
	for (i = 0; i < n; i++) {
		if (chance(10))
			gen_soup(m, fam);
		gen_attr(m, fam, types[i], op->effect == E_DELETE);
	}
}

/* Break the message at OFF: its length, or an attribute's. */
static void gen_damage(struct mb *m, size_t off)
{
	size_t len = m->len - off, alen = len - NL_HDRS, a, rem;
	unsigned int r = below(100);
	uint32_t nl;
	uint16_t v;

	if (r < 3) {
		/* Shorter than a header: the kernel stops reading the send. */
		put32(m->b + off, below(NLMSG_HDRLEN));
	} else if (r < 6) {
		/* The generic netlink header cut short. */
		nl = NLMSG_HDRLEN + below(GENL_HDRLEN);
		put32(m->b + off, nl);
		if (chance(50))
			m->len = off + nl;
	} else if (r < 11 && alen) {
		/* The attributes cut; what follows is read as a message. */
		nl = NL_HDRS + below((uint32_t)alen);
		put32(m->b + off, nl);
		if (chance(50))
			m->len = off + nl;
	} else if (r < 14) {
		/* Longer than the send, or swallowing the next message. */
		put32(m->b + off, (uint32_t)len + 1 + below(64));
	} else if (r < 20 && alen >= NLA_HDRLEN) {
		/* An attribute's length: zero, short, odd, past the end. */
		a = off + NL_HDRS;
		rem = alen;
		while (chance(50)) {
			size_t step = NLA_ALIGN(get16(m->b + a));

			if (step < NLA_HDRLEN || step + NLA_HDRLEN > rem)
				break;
			a += step;
			rem -= step;
		}
		switch (below(6)) {
		case 0:
			v = 0;
			break;
		case 1:
			v = (uint16_t)(1 + below(3));
			break;
		case 2:
			v = (uint16_t)(rem + 1 + below(8));
			break;
		case 3:
			v = 0xffff;
			break;
		case 4:
			v = get16(m->b + a) + 1;
			break;
		default:
			v = get16(m->b + a) - 1;
		}
		put16(m->b + a, v);
	}
}

/* One message; SEQ is its sequence number. */
static void gen_msg(struct mb *m, uint32_t seq)
{
	static const uint16_t odd_flags[] = {
		NLM_F_MULTI, NLM_F_DUMP_INTR, NLM_F_DUMP_FILTERED, NLM_F_ATOMIC,
		NLM_F_APPEND, 0x1000, 0x8000,
	};
	int fam = fams[TARGET].id < 0 ? CLIENT :
		  fams[CLIENT].id < 0 ? TARGET : (int)below(2);
	const struct family *f = &fams[fam];
	uint16_t type = (uint16_t)f->id, flags = NLM_F_REQUEST;
	const struct op *op;
	unsigned int r;
	size_t off;
	uint8_t cmd;
	int i, n;

	r = below(100);
	if (r < 2)
		type = (uint16_t)(GENL_MAX_ID + 1 +
				  below(0xffff - GENL_MAX_ID));
	else if (r < 4)
		type = (uint16_t)below(NLMSG_MIN_TYPE);

	r = below(100);
	if (r < 86)
		cmd = f->ops[below(f->n_ops)].cmd;
	else if (r < 90)
		cmd = 0;
	else if (r < 94)
		cmd = (uint8_t)(f->cmd_max + below(2));
	else
		cmd = (uint8_t)rnd();
	op = find_op(fam, cmd);

	if (chance(3))
		flags = 0;
	if (op && op->dumpit && !op->doit)
		r = 85;
	else if (op && op->dumpit)
		r = 40;
	else
		r = op ? 8 : 20;
	if (chance(r)) {
		r = below(100);
		flags |= r < 90 ? NLM_F_DUMP :
			 r < 95 ? NLM_F_ROOT : NLM_F_MATCH;
	}
	if (chance(50))
		flags |= NLM_F_ACK;
	if (chance(4))
		flags |= NLM_F_ECHO;
	if (chance(4))
		flags |= PICK(odd_flags);

	off = mb_msg(m, type, flags, seq, cmd);
	if (chance(3))
		m->b[off + NLMSG_HDRLEN + 1] = (unsigned char)rnd();
	if (chance(2))
		put16(m->b + off + NLMSG_HDRLEN + 2,
		      (uint16_t)(1 + below(0xffff)));
	if (chance(3))
		put32(m->b + off + 12, (uint32_t)rnd());

	r = below(100);
	if (r < 70 && op) {
		gen_plausible(m, fam, op);
	} else if (r < 85) {
		n = (int)below(7);
		for (i = 0; i < n; i++)
			gen_soup(m, fam);
	} else if (r < 95) {
		gen_nest(m, fam, 0);
		if (op && chance(50))
			gen_plausible(m, fam, op);
	}
	mb_msg_end(m, off);
	gen_damage(m, off);
}

/* One send: mostly one message, sometimes several, sometimes junk. */
static void gen_send(struct mb *m, uint32_t seq)
{
	unsigned int r = below(100);
	int i, n;

	m->len = 0;
	if (r < 2)
		return;
	if (r < 4) {
		m->len = 1 + below(NLMSG_HDRLEN - 1);
		rnd_bytes(m->b, m->len);
		return;
	}
	if (r < 5) {
		m->len = NLMSG_HDRLEN + below(240);
		rnd_bytes(m->b, m->len);
		if (chance(50)) {
			put32(m->b, (uint32_t)m->len);
			put16(m->b + 4, (uint16_t)fams[below(2)].id);
			put16(m->b + 6, NLM_F_REQUEST | NLM_F_ACK);
			put32(m->b + 8, seq);
		}
		return;
	}
	n = chance(75) ? 1 : 2 + (int)below(2);
	for (i = 0; i < n; i++)
		gen_msg(m, seq + (uint32_t)i);
	if (chance(2)) {
		unsigned char junk[NLMSG_HDRLEN];
		size_t k = 1 + below(NLMSG_HDRLEN - 1);

		rnd_bytes(junk, k);
		mb_put(m, junk, k);
	}
}

/* ---- the fuzz loop -------------------------------------------------- */

#define MAX_REQS	64
#define MAX_REPORTS	10	/* failures printed in full */
#define MAX_CREATED	4	/* clean up after this many accepted adds */
#define MAX_CONNECTS	30	/* connects that may reach the target */

/* A message of a send, as the kernel reads it, and what came back. */
struct req {
	size_t off;
	uint32_t len, seq;
	struct expect x;
	bool busy_ok;		/* a dump before it may still run */
	int n_data, n_multi, n_err, n_done, n_late;
	bool bad_data;		/* data of another family or command */
	int err, done_err, offs, miss;
	char msg[128];
};

struct fuzz {
	uint64_t seed;
	unsigned int first, iters, sends, seconds;
	bool verbose;
	unsigned int msgs, refused, accepted, dumps, ignored, busy;
	unsigned int known[NR_KNOWN];
	unsigned int errs[256];
	unsigned int failures, strays, cut, connects, cleanups, created;
	unsigned int legs;		/* connects with legs the model took */
	bool stop;
	int64_t t0;
};

static struct fuzz fz;
static struct mb fz_mb;
static struct req reqs[MAX_REQS];
static unsigned char rbuf[65536];

/* The watchdog: a send the kernel sits on is reported from here. */
static struct {
	int active;		/* __atomic */
	int64_t since;
	unsigned int iter;
	int ktap_no;
} wd;

static void wd_arm(unsigned int iter)
{
	wd.iter = iter;
	__atomic_store_n(&wd.since, now_ms(), __ATOMIC_RELAXED);
	__atomic_store_n(&wd.active, 1, __ATOMIC_RELEASE);
}

static void wd_disarm(void)
{
	__atomic_store_n(&wd.active, 0, __ATOMIC_RELEASE);
}

static void *wd_thread(void *arg)
{
	(void)arg;
	for (;;) {
		sleep(1);
		if (!__atomic_load_n(&wd.active, __ATOMIC_ACQUIRE) ||
		    now_ms() - __atomic_load_n(&wd.since, __ATOMIC_RELAXED) <
		    (reply_timeout + 5) * 1000LL)
			continue;
		printf("# fuzz: FAIL seed %" PRIu64 " send %u: no answer for %d s, the kernel still holds the request\n",
		       fz.seed, wd.iter, reply_timeout + 5);
		hexdump(fz_mb.b, fz_mb.len, 512);
		printf("not ok %d fuzz: random requests # a request hung in the kernel\n",
		       wd.ktap_no);
		printf("Bail out! reproduce with RMBD_FUZZ_SEED=%" PRIu64 " RMBD_FUZZ_FIRST=%u RMBD_FUZZ_ITERS=1\n",
		       fz.seed, wd.iter);
		fflush(stdout);
		_exit(1);
	}
	return NULL;
}

/* Whether a connect the model takes may reach the target: an IPv4 address */
static bool connects(const unsigned char *h, const struct expect *x,
		     unsigned char a[4])
{
	int i;

	if (!x->nr_legs)
		return kernel_in4(tb_str(h, x, RMBD_CLIENT_ATTR_ADDR), a);
	for (i = 0; i < x->nr_legs; i++)
		if (kernel_in4(leg_str(h, x, i, RMBD_LEG_ATTR_ADDR), a))
			return true;
	return false;
}

/*
 * Walk the send as netlink_rcv_skb() does, guard each message and ask the
 * model about it.  The send is cut before a message that would reach a
 * family other than ours, a sequence number that would make answers
 * ambiguous, or more messages than we track.  Returns the messages.
 */
static int prepare(struct mb *m, uint32_t probe_seq)
{
	size_t pos = 0;
	int i, n = 0, dumps = 0;

	while (m->len - pos >= NLMSG_HDRLEN) {
		unsigned char *h = m->b + pos;
		uint32_t nl = get32(h);
		uint16_t type = get16(h + 4), flags = get16(h + 6);
		struct req *r = &reqs[n];
		unsigned char a[4];
		bool dup = false;

		if (nl < NLMSG_HDRLEN || nl > m->len - pos)
			break;
		if (n == MAX_REQS ||
		    ((flags & NLM_F_REQUEST) && type >= NLMSG_MIN_TYPE &&
		     type <= GENL_MAX_ID && fam_by_id(type) < 0)) {
			m->len = pos;
			fz.cut++;
			break;
		}
		memset(r, 0, sizeof(*r));
		r->offs = r->miss = -1;
		r->off = pos;
		r->len = nl;
		r->seq = get32(h + 8);
		guard(h, nl, false);
		model(h, nl, &r->x);
		fz.legs += r->x.nr_legs > 0;
		if (r->x.kind == X_DO && r->x.fam == CLIENT &&
		    (r->x.cmd == RMBD_CLIENT_CMD_DEV_CONNECT ||
		     r->x.cmd == RMBD_CLIENT_CMD_DEV_REPLACE) &&
		    connects(h, &r->x, a)) {
			if (fz.connects < MAX_CONNECTS) {
				fz.connects++;
			} else {
				guard(h, nl, true);
				model(h, nl, &r->x);
			}
		}
		for (i = 0; i < n; i++)
			dup |= reqs[i].x.kind != X_NONE &&
			       reqs[i].seq == r->seq;
		if (r->x.kind != X_NONE && (dup || r->seq == probe_seq)) {
			m->len = pos;
			fz.cut++;
			break;
		}
		r->busy_ok = dumps > 0;
		if (r->x.kind == X_DUMP)
			dumps++;
		n++;
		pos += NLMSG_ALIGN(nl) < m->len - pos ? NLMSG_ALIGN(nl) :
		       m->len - pos;
	}
	return n;
}

static void account(struct req *r, const unsigned char *h, uint32_t hl)
{
	uint16_t type = get16(h + 4);

	if (type == NLMSG_ERROR) {
		if (!r->n_err++) {
			r->err = hl >= NLMSG_HDRLEN + 4 ?
				 -(int)get32(h + NLMSG_HDRLEN) : -1;
			parse_extack((const struct nlmsghdr *)h, r->msg,
				     sizeof(r->msg), &r->miss, &r->offs);
		}
		return;
	}
	if (type == NLMSG_DONE) {
		if (!r->n_done++)
			r->done_err = hl >= NLMSG_HDRLEN + 4 ?
				      -(int)get32(h + NLMSG_HDRLEN) : 0;
		return;
	}
	if (r->n_err || r->n_done)
		r->n_late++;
	r->n_data++;
	if (get16(h + 6) & NLM_F_MULTI)
		r->n_multi++;
	if (r->x.fam < 0 || type != fams[r->x.fam].id || hl < NL_HDRS ||
	    h[NLMSG_HDRLEN] != r->x.cmd)
		r->bad_data = true;
}

static bool dumps_done(int n)
{
	int i;

	for (i = 0; i < n; i++)
		if ((reqs[i].x.kind == X_DUMP || reqs[i].n_multi) &&
		    !reqs[i].n_done && !reqs[i].n_err)
			return false;
	return true;
}

/*
 * Read until the probe's ack (every answer to a do has come by then) and
 * the end of every dump.  Returns 0, -ETIMEDOUT or another -errno.
 */
static int collect(int fd, int n, uint32_t probe_seq, int *probe_err)
{
	int64_t deadline = now_ms() + reply_timeout * 1000LL;
	bool probed = false;
	int i;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t len;
		size_t off;

		if (probed && dumps_done(n))
			return 0;
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		len = recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		for (off = 0; off + NLMSG_HDRLEN <= (size_t)len;) {
			const unsigned char *h = rbuf + off;
			uint32_t hl = get32(h), seq;
			struct req *r = NULL;

			if (hl < NLMSG_HDRLEN || hl > (size_t)len - off)
				break;
			off += NLMSG_ALIGN(hl);
			seq = get32(h + 8);
			if (seq == probe_seq && get16(h + 4) == NLMSG_ERROR) {
				probed = true;
				*probe_err = -(int)get32(h + NLMSG_HDRLEN);
				continue;
			}
			for (i = 0; i < n && !r; i++)
				if (reqs[i].seq == seq &&
				    reqs[i].x.kind != X_NONE)
					r = &reqs[i];
			for (i = 0; i < n && !r; i++)
				if (reqs[i].seq == seq)
					r = &reqs[i];
			if (r) {
				account(r, h, hl);
			} else {
				fz.strays++;
				printf("# fuzz: an answer (type %u, error %d) to sequence number %#x, of no message of send %u\n",
				       get16(h + 4), hl >= NLMSG_HDRLEN + 4 ?
				       -(int)get32(h + NLMSG_HDRLEN) : 0,
				       seq, wd.iter);
			}
		}
	}
}

static void fail(unsigned int iter, int k, const char *fmt, ...)
{
	const struct req *r = k >= 0 ? &reqs[k] : NULL;
	va_list ap;

	if (++fz.failures > MAX_REPORTS * 10)
		return;
	printf("# fuzz: FAIL seed %" PRIu64 " send %u", fz.seed, iter);
	if (r)
		printf(" message %d at offset %zu (%s %s, flags %#x, %u bytes)",
		       k, r->off, r->x.fam >= 0 ? fams[r->x.fam].name : "-",
		       r->x.fam >= 0 ? cmd_name(r->x.fam, r->x.cmd) : "-",
		       r->x.flags, r->len);
	printf(": ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (fz.failures > MAX_REPORTS)
		return;
	printf("# fuzz: the send, %zu bytes:\n", fz_mb.len);
	hexdump(fz_mb.b, fz_mb.len, 512);
	printf("# fuzz: reproduce with RMBD_FUZZ_SEED=%" PRIu64 " RMBD_FUZZ_FIRST=%u RMBD_FUZZ_ITERS=1\n",
	       fz.seed, iter);
}

static void got_str(const struct req *r, char *buf, size_t len)
{
	snprintf(buf, len, "%d data, %d errors%s%s, %d done", r->n_data,
		 r->n_err, r->n_err ? ": " : "", r->n_err ? errname(r->err) : "",
		 r->n_done);
	if (r->offs >= 0)
		snprintf(buf + strlen(buf), len - strlen(buf), " [offset %d]",
			 r->offs);
	if (r->miss >= 0)
		snprintf(buf + strlen(buf), len - strlen(buf), " [missing %d]",
			 r->miss);
	if (r->msg[0])
		snprintf(buf + strlen(buf), len - strlen(buf), " \"%s\"",
			 r->msg);
}

static void refused(int err)
{
	fz.refused++;
	fz.errs[err > 0 && err < 256 ? err : 0]++;
}

/* Compare what came back for message K with what the model says. */
static void check(unsigned int iter, int k)
{
	struct req *r = &reqs[k];
	const struct expect *x = &r->x;
	char want[160], got[256];
	int answers = r->n_data + r->n_err + r->n_done;

	expect_str(x, want, sizeof(want));
	got_str(r, got, sizeof(got));
	if (fz.verbose)
		printf("# fz %u.%d %s %s flags %#x len %u: want %s; got %s\n",
		       iter, k, x->fam >= 0 ? fams[x->fam].name : "-",
		       x->fam >= 0 ? cmd_name(x->fam, x->cmd) : "-", x->flags,
		       r->len, want, got);
	fz.msgs++;
	if (x->dump_start && r->busy_ok && r->n_err == 1 && r->err == EBUSY &&
	    !r->n_data && !r->n_done) {
		fz.busy++;
		refused(EBUSY);
		return;
	}
	switch (x->kind) {
	case X_NONE:
		fz.ignored++;
		if (answers)
			fail(iter, k, "answered (%s), but the kernel should ignore it (%s)",
			     got, x->why);
		return;
	case X_ACK0:
		fz.ignored++;
		if (r->n_err != 1 || r->err || r->n_data || r->n_done)
			fail(iter, k, "expected just an ack (%s), got %s",
			     x->why, got);
		return;
	case X_ERR:
		if (r->n_data || r->n_done || (r->n_err && !r->err)) {
			fail(iter, k, "ACCEPTED a malformed request: expected %s; got %s",
			     want, got);
			return;
		}
		if (r->n_err != 1) {
			fail(iter, k, "expected %s; got %s", want, got);
			return;
		}
		refused(r->err);
		if (r->err != x->err)
			fail(iter, k, "refused with %s; expected %s", got, want);
		else if (r->offs != x->offs)
			fail(iter, k, "the extack points at offset %d; expected %s",
			     r->offs, want);
		else if (x->miss >= 0 && r->miss != x->miss)
			fail(iter, k, "the extack names missing attribute %d; expected %s",
			     r->miss, want);
		else if (x->want_msg && !r->msg[0])
			fail(iter, k, "no extack message; expected %s", want);
		return;
	case X_DO:
		if (r->n_err && r->err) {
			refused(r->err);
			if (r->n_err > 1 || r->n_data || r->n_done) {
				fail(iter, k, "a refusal with more: %s", got);
			} else if (!r->msg[0]) {
				/* The uapi headers promise one for each. */
				fail(iter, k, "refused without an extack message: %s",
				     got);
			}
			return;
		}
		fz.accepted++;
		if (x->known >= 0 && !fz.known[x->known]++) {
			printf("# fuzz: accepted although the uapi header says it is invalid (%s), send %u message %d:\n",
			       known_what[x->known], iter, k);
			hexdump(fz_mb.b + r->off, r->len, 256);
		}
		if (x->op->effect == E_CREATE)
			fz.created++;
		if (r->n_done || r->n_multi || r->bad_data || r->n_late ||
		    r->n_err != ((x->flags & NLM_F_ACK) ? 1 : 0) ||
		    r->n_data > (x->op->reply ? 1 : 0) ||
		    (r->n_data < (x->op->reply ? 1 : 0) &&
		     x->cmd != RMBD_CLIENT_CMD_DEV_CONNECT))
			fail(iter, k, "accepted, but answered with %s", got);
		return;
	case X_DUMP:
		fz.dumps++;
		if (r->n_err || r->n_done != 1 || r->done_err ||
		    r->bad_data || r->n_data != r->n_multi)
			fail(iter, k, "a dump that did not end well: %s", got);
		return;
	}
}

/*
 * The random sends go to FD; HELPER_FD, a socket of its own, lists and
 * cleans up in between.
 */
static void fuzz_run(int fd, int helper_fd)
{
	int64_t budget = fz.seconds * 1000LL;
	unsigned int it;

	fz.t0 = now_ms();
	for (it = fz.first; it < fz.first + fz.iters && !fz.stop; it++) {
		uint32_t seq = it * 8 + 1, probe_seq = it * 8 + 7;
		struct nlmsghdr probe = {
			.nlmsg_len = NLMSG_HDRLEN, .nlmsg_type = NLMSG_NOOP,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
			.nlmsg_seq = probe_seq,
		};
		int i, n, ret, probe_err = 0;
		bool deleted = false;

		if (budget && now_ms() - fz.t0 > budget)
			break;
		rnd_seed(fz.seed, it);
		gen_send(&fz_mb, seq);
		n = prepare(&fz_mb, probe_seq);

		wd_arm(it);
		ret = send(fd, fz_mb.b, fz_mb.len, 0);
		if (!fz_mb.len) {
			/* netlink_sendmsg() refuses an empty send itself. */
			fz.msgs++;
			if (ret < 0 && errno == ENODATA)
				refused(ENODATA);
			else
				fail(it, -1, "an empty send: send() returned %d (%s), expected ENODATA",
				     ret, ret < 0 ? strerror(errno) : "no error");
		} else if (ret != (int)fz_mb.len) {
			wd_disarm();
			fail(it, -1, "send() returned %d: %s", ret, strerror(errno));
			continue;
		}
		if (send(fd, &probe, sizeof(probe), 0) != sizeof(probe)) {
			wd_disarm();
			fail(it, -1, "cannot send the probe: %s", strerror(errno));
			fz.stop = true;
			break;
		}
		ret = collect(fd, n, probe_seq, &probe_err);
		wd_disarm();
		fz.sends++;
		if (ret) {
			fail(it, -1, ret == -ETIMEDOUT ?
			     "no complete answer within %d s" :
			     "receiving the answers: %s (%d s)",
			     ret == -ETIMEDOUT ? reply_timeout : 0,
			     ret == -ETIMEDOUT ? "" : strerror(-ret));
			for (i = 0; i < n; i++) {
				char got[256];

				got_str(&reqs[i], got, sizeof(got));
				printf("# fuzz:   message %d: so far %s\n", i, got);
			}
			fz.stop = true;
			break;
		}
		if (probe_err)
			fail(it, -1, "the probe got %s", errname(probe_err));
		for (i = 0; i < n; i++) {
			unsigned int accepted = fz.accepted;

			check(it, i);
			if (fz.accepted != accepted &&
			    reqs[i].x.op->effect == E_DELETE)
				deleted = true;
		}
		/*
		 * Undo what was created now and then; after a delete, make
		 * sure that what was there before still is.
		 */
		if (deleted || fz.created >= MAX_CREATED) {
			char when[48];

			snprintf(when, sizeof(when), "fuzz: after send %u", it);
			fz.cleanups += fz.created >= MAX_CREATED;
			if (state_restore(helper_fd, when,
					  fz.created >= MAX_CREATED))
				fail(it, -1, "the cleanup after this send found problems (above)");
			if (fz.created >= MAX_CREATED)
				fz.created = 0;
		}
	}
}

/* ---- an unprivileged caller ----------------------------------------- */

struct upoint {
	char status;		/* 'o' ok, 'n' not ok, 's' skip */
	char desc[96];
	char note[160];
};

static int unpriv_points(void)
{
	int fam, n = 1;

	for (fam = 0; fam < NR_FAMS; fam++)
		n += fams[fam].n_ops * 2;
	return n;
}

/* Attributes that would make the command succeed, or fail harmlessly. */
static void unpriv_attrs(struct mb *m, int fam, uint8_t cmd)
{
	const char *addr = have_target ? target_addr : "10.200.0.1";

	if (fam == TARGET) {
		switch (cmd) {
		case RMBD_TARGET_CMD_EXPORT_ADD:
			req_str(m, RMBD_TARGET_ATTR_EXPORT_NAME, "fzu");
			req_u64(m, RMBD_TARGET_ATTR_EXPORT_SIZE, 4 * MIB);
			break;
		case RMBD_TARGET_CMD_EXPORT_DEL:
			req_str(m, RMBD_TARGET_ATTR_EXPORT_NAME, "fzu-none");
			break;
		case RMBD_TARGET_CMD_EXPORT_GET:
			req_str(m, RMBD_TARGET_ATTR_EXPORT_NAME,
				start.n_exp ? start.exp[0].name : "fzu-none");
			break;
		case RMBD_TARGET_CMD_LISTENER_ADD:
			req_str(m, RMBD_TARGET_ATTR_LISTENER_ADDR, addr);
			req_u16(m, RMBD_TARGET_ATTR_LISTENER_PORT, 7499);
			break;
		case RMBD_TARGET_CMD_LISTENER_DEL:
			req_str(m, RMBD_TARGET_ATTR_LISTENER_ADDR, "10.200.0.254");
			req_u16(m, RMBD_TARGET_ATTR_LISTENER_PORT, 7499);
			break;
		}
		return;
	}
	switch (cmd) {
	case RMBD_CLIENT_CMD_DEV_CONNECT:
		req_str(m, RMBD_CLIENT_ATTR_ADDR, addr);
		req_str(m, RMBD_CLIENT_ATTR_EXPORT_NAME, "fzu-none");
		break;
	case RMBD_CLIENT_CMD_DEV_DISCONNECT:
		req_u32(m, RMBD_CLIENT_ATTR_DEV_INDEX, 999);
		break;
	case RMBD_CLIENT_CMD_DEV_GET:
		req_u32(m, RMBD_CLIENT_ATTR_DEV_INDEX, 0);
		break;
	}
}

static void unpriv_put(int wfd, char status, const char *desc,
		       const char *note)
{
	struct upoint p = { .status = status };

	snprintf(p.desc, sizeof(p.desc), "%s", desc);
	snprintf(p.note, sizeof(p.note), "%s", note);
	if (write(wfd, &p, sizeof(p)) != sizeof(p))
		_exit(2);
}

/* One command of the unprivileged caller, on its own and on root's socket. */
static void unpriv_one(int wfd, int fd, int root_fd, int fam, uint8_t cmd,
		       bool dump)
{
	uint16_t flags = dump ? NLM_F_DUMP : 0;
	char desc[96], note[160];
	int e1, e2;

	snprintf(desc, sizeof(desc), "unprivileged: %s %s %s refused with EPERM",
		 fams[fam].name, cmd_name(fam, cmd), dump ? "dump" : "do");
	if (fams[fam].id < 0) {
		unpriv_put(wfd, 's', desc, "family not registered");
		return;
	}
	if (fd < 0) {
		unpriv_put(wfd, 'n', desc, "cannot open a socket");
		return;
	}
	req_begin(&req_mb, fam, cmd, flags);
	if (!dump)
		unpriv_attrs(&req_mb, fam, cmd);
	e1 = req_run(fd, &req_mb, NULL, NULL, NULL, 0);
	req_begin(&req_mb, fam, cmd, flags);
	if (!dump)
		unpriv_attrs(&req_mb, fam, cmd);
	e2 = req_run(root_fd, &req_mb, NULL, NULL, NULL, 0);
	snprintf(note, sizeof(note), "own socket: %s, root's socket: %s",
		 errname(-e1), errname(-e2));
	unpriv_put(wfd, e1 == -EPERM && e2 == -EPERM ? 'o' : 'n', desc, note);
}

/*
 * In a child: drop to uid and gid 65534 with no groups, check that no
 * capability is left, and send every command of both families, do and
 * dump, on a socket of its own and on one root opened (ROOT_FD): each
 * must be refused with EPERM.
 */
static void unpriv_child(int wfd, int root_fd)
{
	static const char what[] =
		"unprivileged: uid and gid 65534, no groups, no capabilities";
	struct __user_cap_header_struct ch = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct cd[2] = { 0 };
	int fam, i, fd;
	char note[160];
	bool dropped;

	dropped = !setgroups(0, NULL) && !setresgid(65534, 65534, 65534) &&
		  !setresuid(65534, 65534, 65534);
	if (!dropped || syscall(SYS_capget, &ch, cd) ||
	    cd[0].effective || cd[1].effective || cd[0].permitted ||
	    cd[1].permitted || getuid() != 65534 || getgid() != 65534 ||
	    getgroups(0, NULL) != 0) {
		snprintf(note, sizeof(note),
			 "uid %u gid %u, effective capabilities %#x %#x",
			 getuid(), getgid(), cd[0].effective, cd[1].effective);
		unpriv_put(wfd, 'n', what, note);
		_exit(1);
	}
	unpriv_put(wfd, 'o', what, "");
	fd = nl_open();
	for (fam = 0; fam < NR_FAMS; fam++) {
		for (i = 0; i < fams[fam].n_ops; i++) {
			unpriv_one(wfd, fd, root_fd, fam, fams[fam].ops[i].cmd,
				   false);
			unpriv_one(wfd, fd, root_fd, fam, fams[fam].ops[i].cmd,
				   true);
		}
	}
	_exit(0);
}

/* Runs the child and prints its points from NO on; returns the failures. */
static int unpriv_run(int root_fd, int no)
{
	int n = unpriv_points(), i, pfd[2], failed = 0, status;
	struct upoint p;
	pid_t pid;

	fflush(stdout);
	pid = pipe(pfd) ? -1 : fork();
	if (pid < 0) {
		for (i = 0; i < n; i++)
			printf("not ok %d unprivileged # cannot fork\n", no + i);
		return n;
	}
	if (!pid) {
		close(pfd[0]);
		unpriv_child(pfd[1], root_fd);
	}
	close(pfd[1]);
	for (i = 0; i < n; i++) {
		if (read(pfd[0], &p, sizeof(p)) != sizeof(p))
			break;
		p.desc[sizeof(p.desc) - 1] = p.note[sizeof(p.note) - 1] = '\0';
		if (p.status == 's') {
			printf("ok %d %s # SKIP %s\n", no + i, p.desc, p.note);
		} else {
			printf("%sok %d %s%s%s\n", p.status == 'o' ? "" : "not ",
			       no + i, p.desc, p.note[0] ? " # " : "", p.note);
			failed += p.status != 'o';
		}
	}
	for (; i < n; i++, failed++)
		printf("not ok %d unprivileged: check %d # the child stopped early\n",
		       no + i, i);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return failed;
}

/* ---- after the run: the families still answer ----------------------- */

static bool found_name;

static void sanity_exp(const unsigned char *h, uint32_t len, void *arg)
{
	char name[RMBD_EXPORT_NAME_MAX];

	found_name |= msg_str(h, len, RMBD_TARGET_ATTR_EXPORT_NAME, name,
			      sizeof(name)) && !strcmp(name, arg);
}

static bool sanity_target(int fd, char *what, size_t what_len, char *note,
			  size_t note_len)
{
	char msg[256];
	int ret;

	if (start.n_exp) {
		snprintf(what, what_len, "rmbd_target still answers: export get %s",
			 start.exp[0].name);
		found_name = false;
		req_begin(&req_mb, TARGET, RMBD_TARGET_CMD_EXPORT_GET, 0);
		req_str(&req_mb, RMBD_TARGET_ATTR_EXPORT_NAME,
			start.exp[0].name);
		ret = req_run(fd, &req_mb, sanity_exp, start.exp[0].name, msg,
			      sizeof(msg));
		snprintf(note, note_len, "%s%s%s", errname(-ret),
			 found_name ? "" : ", no reply with the export",
			 msg);
		return !ret && found_name;
	}
	snprintf(what, what_len, "rmbd_target still answers: listener dump");
	req_begin(&req_mb, TARGET, RMBD_TARGET_CMD_LISTENER_GET, NLM_F_DUMP);
	ret = req_run(fd, &req_mb, NULL, NULL, msg, sizeof(msg));
	snprintf(note, note_len, "%s %s", errname(-ret), msg);
	return !ret;
}

static bool sanity_client(int fd, char *note, size_t note_len)
{
	char msg[256];
	int ret;

	req_begin(&req_mb, CLIENT, RMBD_CLIENT_CMD_DEV_GET, NLM_F_DUMP);
	ret = req_run(fd, &req_mb, NULL, NULL, msg, sizeof(msg));
	snprintf(note, note_len, "%s %s", errname(-ret), msg);
	return !ret;
}

static void fuzz_summary(void)
{
	char buf[1024];
	size_t len = 0;
	int e;

	for (e = 0; e < 256; e++)
		if (fz.errs[e])
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s %u",
						len ? ", " : "", e ? errname(e) : "other",
						fz.errs[e]);
	buf[len] = '\0';
	printf("# fuzz: %u messages, %u refused (by errno: %s), %u accepted, %u dumps, %u ignored, seed %" PRIu64 "\n",
	       fz.msgs, fz.refused, len ? buf : "none", fz.accepted, fz.dumps,
	       fz.ignored, fz.seed);
	printf("# fuzz: %u sends (%u-%u) in %.1f s, %u cut short, %u connects to the target, %u cleanups, %u EBUSY dumps\n",
	       fz.sends, fz.first, fz.first + (fz.sends ? fz.sends - 1 : 0),
	       (now_ms() - fz.t0) / 1000.0, fz.cut, fz.connects, fz.cleanups,
	       fz.busy);
	printf("# fuzz: guarded %u deletes of what was there before, %u connects elsewhere, %u large exports; %u connects with legs\n",
	       guarded[0], guarded[1], guarded[2], fz.legs);
	for (e = 0; e < NR_KNOWN; e++)
		if (fz.known[e])
			printf("# fuzz: %u accepted although the uapi header says they are invalid: %s (RMBD_FUZZ_STRICT=1 fails them)\n",
			       fz.known[e], known_what[e]);
}

static unsigned long long env_num(const char *name, unsigned long long def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end) {
		printf("Bail out! %s=%s is not a number\n", name, s);
		exit(1);
	}
	return v;
}

/* ---- main ----------------------------------------------------------- */

static int run_table(struct nl_sock *sk)
{
	const size_t n = ARRAY_SIZE(cases);
	int failed = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct fcase *c = &cases[i];
		struct result r;
		char what[160];
		int ret;

		snprintf(what, sizeof(what), "%s %s: %s", fams[c->fam].name,
			 cmd_name(c->fam, c->cmd), c->desc);
		if (fams[c->fam].id < 0) {
			printf("ok %zu %s # SKIP family not registered\n", i + 1, what);
			continue;
		}
		ret = send_case(sk, fams[c->fam].id, c, &r);
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
	return failed;
}

static void point(int no, bool ok, const char *what, const char *note)
{
	printf("%sok %d %s%s%s\n", ok ? "" : "not ", no, what,
	       note && note[0] ? " # " : "", note ? note : "");
	fflush(stdout);
}

int main(void)
{
	const int n = (int)ARRAY_SIZE(cases);
	struct timeval tv = { .tv_sec = REPLY_TIMEOUT };
	static struct state now;
	char what[160], note[512];
	int i, fd, fuzz_fd, ret, no, plan, failed = 0;
	int64_t t_start = now_ms();
	struct nl_sock *sk;
	pthread_t wd_tid;
	int one = 1;
	bool ok;

	fz.seed = env_num("RMBD_FUZZ_SEED",
			  (unsigned long long)time(NULL) * 1000003ULL ^
			  (unsigned long long)getpid());
	fz.first = (unsigned int)env_num("RMBD_FUZZ_FIRST", 0);
	fz.iters = (unsigned int)env_num("RMBD_FUZZ_ITERS", 30000);
	fz.seconds = (unsigned int)env_num("RMBD_FUZZ_SECONDS", 20);
	fz.verbose = env_num("RMBD_FUZZ_VERBOSE", 0);
	strict_doc = env_num("RMBD_FUZZ_STRICT", 1);
	reply_timeout = (int)env_num("RMBD_FUZZ_TIMEOUT", REPLY_TIMEOUT);
	if (reply_timeout < 1)
		reply_timeout = 1;

	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk)) {
		printf("Bail out! cannot open a generic netlink socket\n");
		return 1;
	}
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(nl_socket_get_fd(sk), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	nl_socket_enable_msg_peek(sk);

	for (i = 0; i < NR_FAMS; i++) {
		fams[i].id = genl_ctrl_resolve(sk, fams[i].name);
		if (fams[i].id < 0)
			fams[i].id = -1;
	}
	if (fams[TARGET].id < 0 && fams[CLIENT].id < 0) {
		printf("1..0 # SKIP rmbd families not registered\n");
		return 4;
	}
	fd = nl_open();
	if (fd < 0) {
		printf("Bail out! cannot open a generic netlink socket: %s\n",
		       strerror(errno));
		return 1;
	}
	ret = state_read(fd, &start);
	if (ret) {
		printf("Bail out! cannot list exports, listeners and devices: %s\n",
		       errname(-ret));
		return 1;
	}
	for (i = 0; i < start.n_lis && !have_target; i++) {
		unsigned char a[16];

		if (kernel_addr(start.lis[i].addr, a) == 4) {
			snprintf(target_addr, sizeof(target_addr), "%s",
				 start.lis[i].addr);
			memcpy(target_in4, a, 4);
			have_target = true;
		}
	}

	plan = n + 1 + unpriv_points() + 3;
	printf("KTAP version 1\n1..%d\n", plan);
	printf("# before: %d exports, %d listeners, %d devices\n",
	       start.n_exp, start.n_lis, start.n_dev);
	failed += run_table(sk);
	no = n + 1;

	/* Random requests. */
	printf("# fuzz: seed %" PRIu64 ", sends %u to %u, at most %u s, connects to %s\n",
	       fz.seed, fz.first, fz.first + fz.iters - (fz.iters > 0),
	       fz.seconds, have_target ? target_addr : "nowhere");
	fflush(stdout);
	if (!fz.iters) {
		printf("ok %d fuzz: random requests # SKIP RMBD_FUZZ_ITERS=0\n", no);
	} else {
		wd.ktap_no = no;
		if (pthread_create(&wd_tid, NULL, wd_thread, NULL))
			printf("# fuzz: no watchdog thread: a hung request hangs the run\n");
		/* Closed afterwards: that ends a dump that did not end. */
		fuzz_fd = nl_open();
		if (fuzz_fd < 0) {
			printf("# fuzz: cannot open a socket: %s\n",
			       strerror(errno));
			fz.failures++;
		} else {
			fuzz_run(fuzz_fd, fd);
			close(fuzz_fd);
		}
		fuzz_summary();
		if (fz.failures > MAX_REPORTS * 10)
			printf("# fuzz: %u more failures not shown\n",
			       fz.failures - MAX_REPORTS * 10);
		snprintf(note, sizeof(note), "%u failures", fz.failures);
		point(no, !fz.failures, "fuzz: random requests",
		      fz.failures ? note : NULL);
		failed += !!fz.failures;
	}
	no++;

	/* An unprivileged caller. */
	if (geteuid()) {
		for (i = 0; i < unpriv_points(); i++)
			printf("ok %d unprivileged: check %d # SKIP not root\n",
			       no + i, i);
	} else {
		failed += unpriv_run(fd, no);
	}
	no += unpriv_points();

	/* What the fuzz (or a broken permission check) created goes again. */
	ret = state_restore(fd, "cleanup", true);
	ok = !ret && !state_read(fd, &now) &&
	     state_same(&now, note, sizeof(note));
	if (!ret && ok)
		snprintf(note, sizeof(note), "%d exports, %d listeners, %d devices",
			 now.n_exp, now.n_lis, now.n_dev);
	else if (ret)
		snprintf(note, sizeof(note), "%d problems (above)", ret);
	point(no++, ok, "cleanup: the exports, listeners and devices of before, no others",
	      note);
	failed += !ok;

	/* Both families still work. */
	if (fams[TARGET].id < 0) {
		printf("ok %d rmbd_target still answers # SKIP family not registered\n",
		       no++);
	} else {
		ok = sanity_target(fd, what, sizeof(what), note, sizeof(note));
		point(no++, ok, what, note);
		failed += !ok;
	}
	if (fams[CLIENT].id < 0) {
		printf("ok %d rmbd_client still answers # SKIP family not registered\n",
		       no++);
	} else {
		ok = sanity_client(fd, note, sizeof(note));
		point(no++, ok, "rmbd_client still answers: dev dump", note);
		failed += !ok;
	}

	printf("# %d cases, %d failed, in %.1f s\n", plan, failed,
	       (now_ms() - t_start) / 1000.0);
	close(fd);
	nl_socket_free(sk);
	return failed ? 1 : 0;
}
