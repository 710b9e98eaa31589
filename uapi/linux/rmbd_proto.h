/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rmbd wire protocol, version 2.
 *
 * A session is one admin queue and N I/O queues, each an RC queue pair set
 * up through rdma_cm.  The CM private data identifies the queue; the admin
 * queue carries the small messages below as SEND/RECV; I/O queues carry only
 * one-sided RDMA READ and WRITE from the client into memory the target
 * registered for this session.  All fields are little endian; every
 * structure has a fixed size with explicit reserved bytes, which senders zero
 * and receivers ignore.
 */
#ifndef _UAPI_LINUX_RMBD_PROTO_H
#define _UAPI_LINUX_RMBD_PROTO_H

#include <linux/types.h>

#define RMBD_PROTO_MAGIC	0x44424d52	/* "RMBD" on the wire */
#define RMBD_PROTO_VERSION	2

/* Every admin message fits in a buffer of this size. */
#define RMBD_MSG_SIZE		256

/* Bounds of struct rmbd_cm_req: qid and queue_depth. */
#define RMBD_MAX_IO_QUEUES_WIRE		256
#define RMBD_MAX_QUEUE_DEPTH_WIRE	1024

/* Bytes of the key that lets an I/O queue join its session. */
#define RMBD_JOIN_KEY_LEN		16

enum rmbd_queue_type {
	RMBD_QUEUE_ADMIN	= 0,
	RMBD_QUEUE_IO		= 1,
};

/**
 * struct rmbd_cm_req - private data of an rdma_cm connect request
 * @magic: RMBD_PROTO_MAGIC
 * @version: RMBD_PROTO_VERSION
 * @qtype: enum rmbd_queue_type
 * @qid: I/O queue index, 0..nr_io_queues-1; 0 for the admin queue
 * @queue_depth: work requests the client keeps in flight on this queue
 * @reserved: zero
 * @session_id: for I/O queues, the id the admin queue's accept returned;
 *	zero for the admin queue
 * @join_key: for I/O queues, the key of the session's OPEN reply; zero
 *	for the admin queue.  The session id alone is no secret: the target
 *	logs it and shows it to its administrator.
 */
struct rmbd_cm_req {
	__le32	magic;
	__le16	version;
	__le16	qtype;
	__le16	qid;
	__le16	queue_depth;
	__le32	reserved;
	__le64	session_id;
	__u8	join_key[RMBD_JOIN_KEY_LEN];
};

/**
 * struct rmbd_cm_rep - private data of an rdma_cm accept
 * @magic: RMBD_PROTO_MAGIC
 * @version: version the target speaks on this session
 * @reserved: zero
 * @session_id: the session this queue belongs to
 */
struct rmbd_cm_rep {
	__le32	magic;
	__le16	version;
	__le16	reserved;
	__le64	session_id;
};

/**
 * enum rmbd_cm_rej_reason - why a target refused a connection
 * @RMBD_REJ_INVALID: private data too short or with a bad magic
 * @RMBD_REJ_VERSION: protocol version not supported
 * @RMBD_REJ_QTYPE: unknown queue type or bad queue index
 * @RMBD_REJ_SESSION: I/O queue for an unknown or unopened session
 * @RMBD_REJ_DEVICE: I/O queue arrived on another RDMA device than its admin
 *	queue
 * @RMBD_REJ_BUSY: queue index already connected
 * @RMBD_REJ_NOMEM: out of resources
 * @RMBD_REJ_LIMIT: the target holds as many sessions as it allows
 */
enum rmbd_cm_rej_reason {
	RMBD_REJ_INVALID	= 1,
	RMBD_REJ_VERSION	= 2,
	RMBD_REJ_QTYPE		= 3,
	RMBD_REJ_SESSION	= 4,
	RMBD_REJ_DEVICE		= 5,
	RMBD_REJ_BUSY		= 6,
	RMBD_REJ_NOMEM		= 7,
	RMBD_REJ_LIMIT		= 8,
};

/**
 * struct rmbd_cm_rej - private data of an rdma_cm reject
 * @magic: RMBD_PROTO_MAGIC
 * @version: highest version the target speaks
 * @reason: enum rmbd_cm_rej_reason
 */
struct rmbd_cm_rej {
	__le32	magic;
	__le16	version;
	__le16	reason;
};

/**
 * enum rmbd_opcode - admin queue operations
 * @RMBD_OP_OPEN: bind the session to an export (struct rmbd_open_req)
 * @RMBD_OP_MAP: register one slab for this session (struct rmbd_map_req)
 * @RMBD_OP_CLOSE: the client is leaving; the target releases the session
 * @RMBD_OP_KEEPALIVE: the client is alive (a bare header both ways); any
 *	admin message restarts the target's session timeout
 * @RMBD_OP_AUTH: the client's answer to the target's challenge; the
 *	reply carries the target's answer to the client's (struct
 *	rmbd_auth_msg both ways)
 * @RMBD_OP_MAP_RANGE: register up to RMBD_MAP_RANGE_MAX slabs in a row
 *	(struct rmbd_map_range_req); only to a target whose OPEN reply had
 *	RMBD_OPEN_MAP_RANGE
 *
 * A reply carries the request's opcode with RMBD_OP_REPLY set, its tag and
 * a status.
 */
enum rmbd_opcode {
	RMBD_OP_OPEN		= 1,
	RMBD_OP_MAP		= 2,
	RMBD_OP_CLOSE		= 3,
	RMBD_OP_KEEPALIVE	= 4,
	RMBD_OP_AUTH		= 5,
	RMBD_OP_MAP_RANGE	= 6,
};

#define RMBD_OP_REPLY		0x8000

/**
 * struct rmbd_msg_hdr - header of every admin message
 * @opcode: enum rmbd_opcode, with RMBD_OP_REPLY in replies
 * @status: 0, or a positive Linux errno in replies
 * @tag: chosen by the requester, echoed in the reply
 */
struct rmbd_msg_hdr {
	__le16	opcode;
	__le16	status;
	__le32	tag;
};

#define RMBD_NAME_LEN		64
#define RMBD_HOST_LEN		128

/* Authentication: random challenges, HMAC-SHA-256 answers. */
#define RMBD_CHALLENGE_LEN	32
#define RMBD_RESPONSE_LEN	32
#define RMBD_SECRET_MIN			32	/* bytes of a host's secret */
#define RMBD_SECRET_MAX			64

/*
 * Flags of struct rmbd_open_req and struct rmbd_open_rsp.  A request
 * with any other bit set, or with RMBD_OPEN_AUTH, is refused (EINVAL).
 */
#define RMBD_OPEN_AUTH		(1U << 0)	/* reply: answer the challenge */
#define RMBD_OPEN_SHARED	(1U << 1)	/* request: shared on purpose */
#define RMBD_OPEN_RDONLY	(1U << 2)	/* both: no RDMA WRITE */
#define RMBD_OPEN_BLANK		(1U << 3)	/* reply: never written */
#define RMBD_OPEN_MAP_RANGE	(1U << 4)	/* reply: takes MAP_RANGE */
#define RMBD_OPEN_REQ_FLAGS	(RMBD_OPEN_SHARED | RMBD_OPEN_RDONLY)

/**
 * struct rmbd_open_req - open an export
 * @hdr: header, opcode RMBD_OP_OPEN
 * @name: export name, NUL padded; must contain a NUL
 * @host: the client's host identity, NUL padded; must contain a NUL; 1 to
 *	127 characters of [A-Za-z0-9._:-], or empty for none (only an
 *	export that allows any host takes a host without identity)
 * @flags: RMBD_OPEN_SHARED: the client means to share the export with
 *	other sessions (refused, EPERM, unless the export is shared);
 *	RMBD_OPEN_RDONLY: the session only reads
 * @reserved: zero
 * @challenge: the client's random challenge, which the target answers in
 *	the reply to RMBD_OP_AUTH (when it authenticates this host)
 */
struct rmbd_open_req {
	struct rmbd_msg_hdr	hdr;
	char			name[RMBD_NAME_LEN];
	char			host[RMBD_HOST_LEN];
	__le32			flags;
	__u8			reserved[4];
	__u8			challenge[RMBD_CHALLENGE_LEN];
};

/**
 * struct rmbd_open_rsp - reply to RMBD_OP_OPEN
 * @hdr: header
 * @size: export size in bytes, a multiple of 4096
 * @slab_size: slab size in bytes, a power of two; the last slab may be
 *	shorter
 * @nr_slabs: DIV_ROUND_UP(size, slab_size)
 * @session_timeout_ms: the target releases a session whose admin queue
 *	carried no message for this long; the client sends
 *	RMBD_OP_KEEPALIVE well within it.  0: the target never does.
 * @export_id: random, fixed for the export's life: a client that
 *	reconnects and finds another id knows the contents it had are gone
 *	(the export was deleted and created again, or the target restarted)
 * @flags: RMBD_OPEN_AUTH: the target holds a secret for this host and
 *	takes no MAP before RMBD_OP_AUTH answered @challenge;
 *	RMBD_OPEN_RDONLY: the session is read-only (the client asked, or
 *	the export is): its slabs are registered without remote write;
 *	RMBD_OPEN_BLANK: no session mapped a slab of the export for writing
 *	yet: it holds the zeroes it was created with, the same as every
 *	other blank export;
 *	RMBD_OPEN_MAP_RANGE: the target takes RMBD_OP_MAP_RANGE (a client
 *	ignores the flags it does not know, and a target that does not set
 *	this one is asked with RMBD_OP_MAP, slab by slab)
 * @reserved: zero
 * @challenge: with RMBD_OPEN_AUTH, the target's random challenge; zero
 * @holder: in a refusal with status EBUSY (the export is not shared and
 *	another host holds it), that host's identity, NUL padded; the other
 *	fields are zero then.  Zero otherwise.  A host with a secret is told
 *	in the reply to RMBD_OP_AUTH instead, once it proved itself.
 * @join_key: in a successful reply, random, the session's own: each I/O
 *	queue's connect request must carry it (struct rmbd_cm_req), so that
 *	knowing a session's id is not enough to add a queue pair to it.
 *	Zero in a refusal.
 */
struct rmbd_open_rsp {
	struct rmbd_msg_hdr	hdr;
	__le64			size;
	__le64			slab_size;
	__le32			nr_slabs;
	__le32			session_timeout_ms;
	__le64			export_id;
	__le32			flags;
	__le32			reserved;
	__u8			challenge[RMBD_CHALLENGE_LEN];
	char			holder[RMBD_HOST_LEN];
	__u8			join_key[RMBD_JOIN_KEY_LEN];
};

/**
 * struct rmbd_auth_msg - RMBD_OP_AUTH request and reply
 * @hdr: header
 * @response: HMAC-SHA-256, keyed with the host's secret, of the label
 *	"rmbd v2 client\0\0" (request) or "rmbd v2 target\0\0" (reply),
 *	the session id (le64), the other side's challenge, then one's own,
 *	the host identity (RMBD_HOST_LEN bytes, NUL padded) and the export
 *	name (RMBD_NAME_LEN bytes, NUL padded)
 * @holder: in a reply with status EBUSY (the host proved itself, but the
 *	export is not shared and another host holds it), that host's
 *	identity, NUL padded; zero otherwise and in the request
 */
struct rmbd_auth_msg {
	struct rmbd_msg_hdr	hdr;
	__u8			response[RMBD_RESPONSE_LEN];
	char			holder[RMBD_HOST_LEN];
};

/**
 * struct rmbd_map_req - ask for access to one slab
 * @hdr: header, opcode RMBD_OP_MAP
 * @slab: slab index, below nr_slabs
 * @reserved: zero
 */
struct rmbd_map_req {
	struct rmbd_msg_hdr	hdr;
	__le32			slab;
	__le32			reserved;
};

/**
 * struct rmbd_map_rsp - reply to RMBD_OP_MAP
 * @hdr: header
 * @addr: remote address of the slab's first byte
 * @len: slab length in bytes
 * @rkey: key for RDMA READ/WRITE into [addr, addr + len), valid until the
 *	session ends
 * @slab: slab index, as asked
 */
struct rmbd_map_rsp {
	struct rmbd_msg_hdr	hdr;
	__le64			addr;
	__le64			len;
	__le32			rkey;
	__le32			slab;
};

/* Slabs of one RMBD_OP_MAP_RANGE: as many keys as fill a message */
#define RMBD_MAP_RANGE_MAX	58

/**
 * struct rmbd_map_range_req - ask for access to several slabs at once
 * @hdr: header, opcode RMBD_OP_MAP_RANGE
 * @first: index of the first slab, below nr_slabs
 * @count: slabs from @first on, 1 to RMBD_MAP_RANGE_MAX, the last of them
 *	below nr_slabs
 */
struct rmbd_map_range_req {
	struct rmbd_msg_hdr	hdr;
	__le32			first;
	__le32			count;
};

/**
 * struct rmbd_map_range_rsp - reply to RMBD_OP_MAP_RANGE
 * @hdr: header
 * @addr: remote address of slab @first's first byte.  Slab @first + i
 *	starts at @addr + i * slab_size and is as long as RMBD_OP_MAP would
 *	say (the last slab of the export may be shorter).
 * @first: as asked
 * @count: slabs mapped, from @first on: 1 to the count asked.  Fewer
 *	than asked when the target could map no more of them in a row this
 *	way (a registration failed, or a slab's address would not follow);
 *	the client asks again from the first one missing.  A target that
 *	cannot map slab @first replies with an error status instead.
 * @rkeys: slab @first + i's key for RDMA READ/WRITE into its bytes, for
 *	i below @count, valid until the session ends; zero beyond
 */
struct rmbd_map_range_rsp {
	struct rmbd_msg_hdr	hdr;
	__le64			addr;
	__le32			first;
	__le32			count;
	__le32			rkeys[RMBD_MAP_RANGE_MAX];
};

#endif /* _UAPI_LINUX_RMBD_PROTO_H */
