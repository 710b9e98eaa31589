// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd wire protocol: validation of everything that comes from the peer.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <linux/ctype.h>
#include <linux/inet.h>
#include <linux/rmbd_target.h>
#include "proto.h"

/* The wire layout is fixed: any change here is a protocol change. */
static_assert(sizeof(struct rmbd_cm_req) == 40);
/* IB and RoCE carry 56 bytes of private data in a connect request. */
static_assert(sizeof(struct rmbd_cm_req) <= 56);
static_assert(sizeof(struct rmbd_cm_rep) == 16);
static_assert(sizeof(struct rmbd_cm_rej) == 8);
static_assert(sizeof(struct rmbd_msg_hdr) == 8);
static_assert(sizeof(struct rmbd_open_req) == 240);
static_assert(sizeof(struct rmbd_open_rsp) == 224);
static_assert(sizeof(struct rmbd_map_req) == 16);
static_assert(sizeof(struct rmbd_map_rsp) == 32);
static_assert(sizeof(struct rmbd_map_range_req) == 16);
static_assert(sizeof(struct rmbd_map_range_rsp) == RMBD_MSG_SIZE);
static_assert(sizeof(struct rmbd_auth_msg) == 168);
static_assert(sizeof(struct rmbd_auth_msg) <= RMBD_MSG_SIZE);
static_assert(sizeof(struct rmbd_open_req) <= RMBD_MSG_SIZE);
static_assert(sizeof(struct rmbd_open_rsp) <= RMBD_MSG_SIZE);
static_assert(RMBD_NAME_LEN == RMBD_EXPORT_NAME_MAX);
static_assert(RMBD_HOST_LEN == RMBD_HOST_MAX);

/**
 * rmbd_check_cm_req() - validate the private data of a connect request
 * @data: private data as received
 * @len: its length; transports may pad it
 * @out: the request, copied out once checked
 *
 * Return: 0, or a negative enum rmbd_cm_rej_reason to send back.
 */
int rmbd_check_cm_req(const void *data, u8 len, struct rmbd_cm_req *out)
{
	if (!data || len < sizeof(*out))
		return -RMBD_REJ_INVALID;
	memcpy(out, data, sizeof(*out));
	if (le32_to_cpu(out->magic) != RMBD_PROTO_MAGIC)
		return -RMBD_REJ_INVALID;
	if (le16_to_cpu(out->version) != RMBD_PROTO_VERSION)
		return -RMBD_REJ_VERSION;
	switch (le16_to_cpu(out->qtype)) {
	case RMBD_QUEUE_ADMIN:
		if (out->qid || out->session_id)
			return -RMBD_REJ_QTYPE;
		break;
	case RMBD_QUEUE_IO:
		if (le16_to_cpu(out->qid) >= RMBD_MAX_IO_QUEUES_WIRE)
			return -RMBD_REJ_QTYPE;
		break;
	default:
		return -RMBD_REJ_QTYPE;
	}
	if (!out->queue_depth ||
	    le16_to_cpu(out->queue_depth) > RMBD_MAX_QUEUE_DEPTH_WIRE)
		return -RMBD_REJ_QTYPE;
	return 0;
}

/**
 * rmbd_check_cm_rep() - validate the private data of an accept
 * @data: private data as received
 * @len: its length
 * @session_id: the session id it carries
 *
 * Return: 0 or -EPROTO.
 */
int rmbd_check_cm_rep(const void *data, u8 len, u64 *session_id)
{
	struct rmbd_cm_rep rep;

	if (!data || len < sizeof(rep))
		return -EPROTO;
	memcpy(&rep, data, sizeof(rep));
	if (le32_to_cpu(rep.magic) != RMBD_PROTO_MAGIC ||
	    le16_to_cpu(rep.version) != RMBD_PROTO_VERSION || !rep.session_id)
		return -EPROTO;
	*session_id = le64_to_cpu(rep.session_id);
	return 0;
}

void rmbd_fill_cm_rej(struct rmbd_cm_rej *rej, enum rmbd_cm_rej_reason r)
{
	memset(rej, 0, sizeof(*rej));
	rej->magic = cpu_to_le32(RMBD_PROTO_MAGIC);
	rej->version = cpu_to_le16(RMBD_PROTO_VERSION);
	rej->reason = cpu_to_le16(r);
}

/**
 * rmbd_cm_rej_errno() - decode a reject from the target
 * @data: consumer private data of the reject, may be NULL
 * @len: its length
 * @why: a short reason for messages
 *
 * Return: the negative errno that best describes the reject.
 */
int rmbd_cm_rej_errno(const void *data, u8 len, const char **why)
{
	struct rmbd_cm_rej rej;

	if (!data || len < sizeof(rej)) {
		*why = "connection refused (nothing listening on that port?)";
		return -ECONNREFUSED;
	}
	memcpy(&rej, data, sizeof(rej));
	if (le32_to_cpu(rej.magic) != RMBD_PROTO_MAGIC) {
		*why = "connection refused by a peer that is not an rmbd target";
		return -ECONNREFUSED;
	}
	switch (le16_to_cpu(rej.reason)) {
	case RMBD_REJ_VERSION:
		*why = "target speaks another protocol version";
		return -EPROTONOSUPPORT;
	case RMBD_REJ_SESSION:
		/*
		 * Not ENOENT, which stands for "no such export": a session
		 * the target released meanwhile (its link flapped) is worth
		 * another try.
		 */
		*why = "target does not know this session";
		return -ECONNRESET;
	case RMBD_REJ_DEVICE:
		*why = "queues reached the target on different RDMA devices";
		return -EXDEV;
	case RMBD_REJ_BUSY:
		*why = "queue already connected";
		return -EBUSY;
	case RMBD_REJ_NOMEM:
		*why = "target out of resources";
		return -ENOMEM;
	case RMBD_REJ_LIMIT:
		*why = "target holds as many sessions as it allows";
		return -EUSERS;
	default:
		*why = "target refused the connection as invalid";
		return -EPROTO;
	}
}

static u32 rmbd_msg_min_len(u16 opcode)
{
	switch (opcode) {
	case RMBD_OP_OPEN:
		return sizeof(struct rmbd_open_req);
	case RMBD_OP_MAP:
		return sizeof(struct rmbd_map_req);
	case RMBD_OP_MAP_RANGE:
		return sizeof(struct rmbd_map_range_req);
	case RMBD_OP_CLOSE:
	case RMBD_OP_KEEPALIVE:
		return sizeof(struct rmbd_msg_hdr);
	case RMBD_OP_AUTH:
	case RMBD_OP_AUTH | RMBD_OP_REPLY:
		return sizeof(struct rmbd_auth_msg);
	case RMBD_OP_OPEN | RMBD_OP_REPLY:
		return sizeof(struct rmbd_open_rsp);
	case RMBD_OP_MAP | RMBD_OP_REPLY:
		return sizeof(struct rmbd_map_rsp);
	case RMBD_OP_MAP_RANGE | RMBD_OP_REPLY:
		return sizeof(struct rmbd_map_range_rsp);
	case RMBD_OP_CLOSE | RMBD_OP_REPLY:
	case RMBD_OP_KEEPALIVE | RMBD_OP_REPLY:
		return sizeof(struct rmbd_msg_hdr);
	default:
		return 0;
	}
}

/**
 * rmbd_check_msg() - validate an admin message as received
 * @buf: message
 * @len: bytes received
 * @opcode: its opcode, when the header could be read
 *
 * Return: 0; -EPROTO for a runt; -EOPNOTSUPP for an unknown opcode;
 * -EINVAL for a message too short for its opcode, a name or host without
 * NUL or not valid, or an OPEN with flags it may not have.
 */
int rmbd_check_msg(const void *buf, u32 len, u16 *opcode)
{
	const struct rmbd_msg_hdr *hdr = buf;
	u32 min;

	if (len < sizeof(*hdr) || len > RMBD_MSG_SIZE)
		return -EPROTO;
	*opcode = le16_to_cpu(hdr->opcode);
	min = rmbd_msg_min_len(*opcode);
	if (!min)
		return -EOPNOTSUPP;
	if (len < min)
		return -EINVAL;
	if (*opcode == RMBD_OP_OPEN) {
		const struct rmbd_open_req *req = buf;

		if (!memchr(req->name, 0, sizeof(req->name)) ||
		    !rmbd_valid_name(req->name) ||
		    !memchr(req->host, 0, sizeof(req->host)) ||
		    (req->host[0] && !rmbd_valid_host(req->host)) ||
		    (le32_to_cpu(req->flags) & ~RMBD_OPEN_REQ_FLAGS))
			return -EINVAL;
	}
	return 0;
}

/**
 * rmbd_check_reply() - validate a reply to a request we sent
 * @buf: message
 * @len: bytes received
 * @opcode: opcode of the request
 * @tag: tag of the request
 *
 * Return: 0; a negative errno for a malformed reply (-EPROTO) or the
 * negated status the peer returned.
 */
int rmbd_check_reply(const void *buf, u32 len, u16 opcode, u32 tag)
{
	const struct rmbd_msg_hdr *hdr = buf;
	u16 op, status;
	int ret;

	ret = rmbd_check_msg(buf, len, &op);
	/* A refusal may come as a bare header. */
	if (ret == -EINVAL && len >= sizeof(*hdr) && hdr->status)
		ret = 0;
	if (ret || op != (opcode | RMBD_OP_REPLY) ||
	    le32_to_cpu(hdr->tag) != tag)
		return -EPROTO;
	status = le16_to_cpu(hdr->status);
	if (status)
		return status <= RMBD_MAX_WIRE_ERRNO ? -(int)status :
						       -EREMOTEIO;
	if (len < rmbd_msg_min_len(op))
		return -EPROTO;
	return 0;
}

/**
 * rmbd_check_geometry() - validate an export's geometry from the peer
 * @size: bytes
 * @slab_size: bytes
 * @nr_slabs: count
 *
 * Return: 0 or -EPROTO.
 */
int rmbd_check_geometry(u64 size, u64 slab_size, u32 nr_slabs)
{
	if (!size || size > RMBD_MAX_EXPORT_SIZE || !IS_ALIGNED(size, 4096))
		return -EPROTO;
	if (!is_power_of_2(slab_size) || slab_size < RMBD_MIN_SLAB_SIZE ||
	    slab_size > RMBD_MAX_SLAB_SIZE)
		return -EPROTO;
	if (nr_slabs != DIV_ROUND_UP_ULL(size, slab_size) ||
	    nr_slabs > RMBD_MAX_SLABS)
		return -EPROTO;
	return 0;
}

/* Length of slab @slab of an export; the last one may be short. */
u64 rmbd_slab_len(u64 size, u64 slab_size, u32 slab)
{
	u64 start = (u64)slab * slab_size;

	return min(slab_size, size - start);
}

/* [A-Za-z0-9._-]; isalnum() alone takes Latin-1 letters too. */
static bool rmbd_name_char(char c)
{
	return isascii(c) && (isalnum(c) || strchr("._-", c));
}

/**
 * rmbd_valid_name() - is @name a valid export name
 * @name: NUL-terminated string
 *
 * Names are 1..63 characters of [A-Za-z0-9._-] and do not start with a dot.
 */
bool rmbd_valid_name(const char *name)
{
	size_t i, len = strnlen(name, RMBD_EXPORT_NAME_MAX);

	if (!len || len >= RMBD_EXPORT_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!rmbd_name_char(name[i]))
			return false;
	return true;
}

/**
 * rmbd_valid_host() - is @host a valid host identity
 * @host: NUL-terminated string
 *
 * Host identities are 1..127 characters of [A-Za-z0-9._:-], as NVMe's
 * host NQNs ("nqn.2014-08.org.nvmexpress:uuid:...") and rmbd's default
 * ("rmbd:uuid:...") are, and do not start with a dot or a dash.
 */
bool rmbd_valid_host(const char *host)
{
	size_t i, len = strnlen(host, RMBD_HOST_LEN);

	if (!len || len >= RMBD_HOST_LEN || host[0] == '.' || host[0] == '-')
		return false;
	for (i = 0; i < len; i++)
		if (!rmbd_name_char(host[i]) && host[i] != ':')
			return false;
	return true;
}

/**
 * rmbd_valid_addr() - is @addr an address as the CLI writes one
 * @addr: NUL-terminated string
 *
 * A dotted IPv4 address in its plain form (no leading zeros), or an IPv6
 * address with an optional %scope of [A-Za-z0-9._-].  The kernel's
 * parsers stop at a newline or a colon and take the rest for a port or
 * nothing: "10.0.0.1\n" and "10.0.0.1:x" would pass them, and be shown
 * back as given.
 */
bool rmbd_valid_addr(const char *addr)
{
	const char *scope = strchr(addr, '%');
	size_t i, len = scope ? scope - addr : strlen(addr);
	char plain[sizeof("255.255.255.255")];
	const char *end;
	u8 buf[16];

	if (!len)
		return false;
	if (!memchr(addr, ':', len)) {
		if (scope || !in4_pton(addr, len, buf, -1, &end) ||
		    end != addr + len)
			return false;
		snprintf(plain, sizeof(plain), "%pI4", buf);
		return !strcmp(plain, addr);
	}
	if (!in6_pton(addr, len, buf, -1, &end) || end != addr + len)
		return false;
	if (!scope)
		return true;
	if (!scope[1])
		return false;
	for (i = 1; scope[i]; i++)
		if (!rmbd_name_char(scope[i]))
			return false;
	return true;
}
