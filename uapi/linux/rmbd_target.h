/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rmbd target: generic netlink interface.
 *
 * The target module exports its RAM as named exports and listens for
 * clients on rdma_cm listeners.  Every command needs CAP_NET_ADMIN; every
 * refusal carries an extended-ack message.
 */
#ifndef _UAPI_LINUX_RMBD_TARGET_H
#define _UAPI_LINUX_RMBD_TARGET_H

#define RMBD_TARGET_GENL_NAME		"rmbd_target"
#define RMBD_TARGET_GENL_VERSION	1

/* rdma_cm port a listener uses when none is given. */
#ifndef RMBD_DEFAULT_PORT
#define RMBD_DEFAULT_PORT		7470
#endif

#ifndef RMBD_EXPORT_NAME_MAX
#define RMBD_EXPORT_NAME_MAX		64	/* including the NUL */
#define RMBD_ADDR_MAX			64	/* including the NUL */
#define RMBD_HOST_MAX			128	/* including the NUL */
#define RMBD_SECRET_MIN			32	/* bytes of a host's secret */
#define RMBD_SECRET_MAX			64
#endif

/*
 * Hosts an export may name: few enough that an export with all of them
 * at their longest fits one netlink message of the default size.
 */
#define RMBD_MAX_EXPORT_HOSTS		16

/* Sessions up on one export at once (then OPEN or AUTH gets EUSERS). */
#define RMBD_MAX_EXPORT_SESSIONS	64

/*
 * Sessions one listener holds at once, opened or not, by default and at
 * most: by default no listener can take all of the target's sessions
 * (module parameter max_sessions, 256 by default), so that peers on one
 * network cannot lock out the clients of another.
 */
#define RMBD_LISTENER_SESSIONS		128
#define RMBD_MAX_SESSIONS		65536

/* Default and bounds of the slab size, in bytes. */
#define RMBD_DEFAULT_SLAB_SIZE		(64ULL << 20)
#define RMBD_MIN_SLAB_SIZE		(2ULL << 20)
#define RMBD_MAX_SLAB_SIZE		(1ULL << 30)

/**
 * enum rmbd_target_cmd - commands of the rmbd_target family
 * @RMBD_TARGET_CMD_EXPORT_ADD: allocate an export: NAME, SIZE, [SLAB_SIZE],
 *	[EXPORT_ANY_HOST], [EXPORT_HOSTS], [EXPORT_SHARED],
 *	[EXPORT_READ_ONLY].  Replies with the new export.
 * @RMBD_TARGET_CMD_EXPORT_DEL: delete an export: NAME, [FORCE].  An export
 *	with sessions is refused (-EBUSY) unless FORCE is set, in which case
 *	its sessions are torn down first.
 * @RMBD_TARGET_CMD_EXPORT_GET: dump exports, or get one by NAME.
 * @RMBD_TARGET_CMD_LISTENER_ADD: listen on ADDR, [PORT],
 *	[LISTENER_MAX_SESSIONS].  Replies with it.
 * @RMBD_TARGET_CMD_LISTENER_DEL: stop listening on ADDR, [PORT].
 * @RMBD_TARGET_CMD_LISTENER_GET: dump listeners.
 * @RMBD_TARGET_CMD_SESSION_EVENT: notification only, to the
 *	RMBD_TARGET_MCGRP_EVENTS group: EVENT, SESSION_ID, SESSION_PEER,
 *	SESSION_HOST, EXPORT_NAME, [SESSION_AUTH] and [SESSION_READ_ONLY]
 *	of a client session that came up or went down.
 * @RMBD_TARGET_CMD_EXPORT_HOST_ADD: allow host HOST to open export NAME;
 *	with [SECRET], only once it proved it has the secret.
 * @RMBD_TARGET_CMD_EXPORT_HOST_DEL: no longer allow host HOST to open
 *	export NAME; its sessions on the export end.
 * @RMBD_TARGET_CMD_SESSION_GET: dump the sessions that opened an export,
 *	or those of export NAME: SESSION_ID, SESSION_PEER, SESSION_HOST,
 *	EXPORT_NAME, [SESSION_UP], [SESSION_AUTH], [SESSION_READ_ONLY].
 */
enum rmbd_target_cmd {
	RMBD_TARGET_CMD_UNSPEC,
	RMBD_TARGET_CMD_EXPORT_ADD,
	RMBD_TARGET_CMD_EXPORT_DEL,
	RMBD_TARGET_CMD_EXPORT_GET,
	RMBD_TARGET_CMD_LISTENER_ADD,
	RMBD_TARGET_CMD_LISTENER_DEL,
	RMBD_TARGET_CMD_LISTENER_GET,
	RMBD_TARGET_CMD_SESSION_EVENT,
	RMBD_TARGET_CMD_EXPORT_HOST_ADD,
	RMBD_TARGET_CMD_EXPORT_HOST_DEL,
	RMBD_TARGET_CMD_SESSION_GET,

	__RMBD_TARGET_CMD_MAX,
	RMBD_TARGET_CMD_MAX = __RMBD_TARGET_CMD_MAX - 1
};

/*
 * Multicast group of RMBD_TARGET_CMD_SESSION_EVENT notifications; joining
 * it needs CAP_NET_ADMIN (-EPERM otherwise).
 */
#define RMBD_TARGET_MCGRP_EVENTS	"events"

/**
 * enum rmbd_session_event - what a RMBD_TARGET_CMD_SESSION_EVENT announces
 * @RMBD_SESSION_EVENT_UP: a client opened an export (and answered the
 *	target's challenge if its host has a secret)
 * @RMBD_SESSION_EVENT_DOWN: that session ended (the client disconnected or
 *	went silent, the export was deleted with force, or EXPORT_HOST_DEL
 *	removed the client's host); module unload sends none: the family
 *	goes first
 */
enum rmbd_session_event {
	RMBD_SESSION_EVENT_UP = 1,
	RMBD_SESSION_EVENT_DOWN,
};

/**
 * enum rmbd_target_attr - attributes of the rmbd_target family
 * @RMBD_TARGET_ATTR_EXPORT_NAME: string, 1..63 bytes of [A-Za-z0-9._-], not
 *	starting with a dot
 * @RMBD_TARGET_ATTR_EXPORT_SIZE: u64, bytes, a non-zero multiple of 4096,
 *	at most 1 PiB
 * @RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE: u64, bytes, a power of two between
 *	RMBD_MIN_SLAB_SIZE and RMBD_MAX_SLAB_SIZE
 * @RMBD_TARGET_ATTR_EXPORT_FORCE: flag, EXPORT_DEL tears sessions down
 * @RMBD_TARGET_ATTR_EXPORT_NR_SLABS: u32, output
 * @RMBD_TARGET_ATTR_EXPORT_SESSIONS: u32, output: open client sessions
 * @RMBD_TARGET_ATTR_EXPORT_MAPPED: u32, output: live slab registrations
 * @RMBD_TARGET_ATTR_EXPORT_MEM: u64, output: bytes of RAM the export holds
 * @RMBD_TARGET_ATTR_LISTENER_ADDR: string, an IPv4 or IPv6 address
 * @RMBD_TARGET_ATTR_LISTENER_PORT: u16, default RMBD_DEFAULT_PORT
 * @RMBD_TARGET_ATTR_PAD: padding for 64-bit attributes
 * @RMBD_TARGET_ATTR_TOTAL_MEM: u64, output: the bytes all exports hold
 *	together, in every export message (EXPORT_ADD and EXPORT_GET replies,
 *	each message of an EXPORT_GET dump)
 * @RMBD_TARGET_ATTR_EVENT: u8, output of SESSION_EVENT: enum
 *	rmbd_session_event
 * @RMBD_TARGET_ATTR_SESSION_ID: u64, output: the session's id
 * @RMBD_TARGET_ATTR_SESSION_PEER: string, output: the client's address and
 *	port, e.g. "10.0.0.2:41234" or "[fe80::1]:41234"
 * @RMBD_TARGET_ATTR_EXPORT_ANY_HOST: flag, EXPORT_ADD: any host may open
 *	the export, even one without identity; output: it was created so.
 *	An export without it takes only the hosts it names.
 * @RMBD_TARGET_ATTR_HOST: string, a host identity: 1..127 bytes of
 *	[A-Za-z0-9._:-], not starting with a dot or a dash
 * @RMBD_TARGET_ATTR_EXPORT_HOSTS: nested, HOST attributes: the hosts that
 *	may open the export (at most RMBD_MAX_EXPORT_HOSTS); EXPORT_ADD
 *	input, and output
 * @RMBD_TARGET_ATTR_SESSION_HOST: string, output of SESSION_GET and
 *	SESSION_EVENT: the host identity the client gave, "" for none
 * @RMBD_TARGET_ATTR_EXPORT_AUTH_HOSTS: nested, HOST attributes, output:
 *	the export's hosts that have a secret (a subset of EXPORT_HOSTS)
 * @RMBD_TARGET_ATTR_SECRET: binary, RMBD_SECRET_MIN..RMBD_SECRET_MAX
 *	bytes, EXPORT_HOST_ADD only: the host must prove it has it before it
 *	maps any slab (HMAC-SHA-256 challenge-response both ways).  Input
 *	only: never in a reply, a dump or the log.
 * @RMBD_TARGET_ATTR_EXPORT_SHARED: flag, EXPORT_ADD: several hosts may
 *	hold the export at once (a cluster file system); output: it was
 *	created so.  Without it one host holds the export at a time: another
 *	is refused (EBUSY, naming the holder), and the holder's host coming
 *	back takes its stale session over.
 * @RMBD_TARGET_ATTR_EXPORT_READ_ONLY: flag, EXPORT_ADD: every session is
 *	read-only (slabs registered without remote write); output: so.
 * @RMBD_TARGET_ATTR_SESSION_UP: flag, output of SESSION_GET: the session
 *	holds its export (opened, and authenticated if it must be); without
 *	it the session still has to answer the target's challenge
 * @RMBD_TARGET_ATTR_SESSION_AUTH: flag, output: the session's host proved
 *	it has its secret
 * @RMBD_TARGET_ATTR_SESSION_READ_ONLY: flag, output: the session is
 *	read-only
 * @RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS: u32, LISTENER_ADD: sessions
 *	the listener holds at once, opened or not (1..RMBD_MAX_SESSIONS,
 *	default RMBD_LISTENER_SESSIONS); output: so
 * @RMBD_TARGET_ATTR_LISTENER_SESSIONS: u32, output: the sessions it
 *	holds
 * @RMBD_TARGET_ATTR_SESSION_MAPPED: u32, output of SESSION_GET: the
 *	session's live slab registrations (memory regions)
 * @RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES: u64, output of SESSION_GET:
 *	bytes of the export those registrations expose to the peer
 */
enum rmbd_target_attr {
	RMBD_TARGET_ATTR_UNSPEC,
	RMBD_TARGET_ATTR_EXPORT_NAME,
	RMBD_TARGET_ATTR_EXPORT_SIZE,
	RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE,
	RMBD_TARGET_ATTR_EXPORT_FORCE,
	RMBD_TARGET_ATTR_EXPORT_NR_SLABS,
	RMBD_TARGET_ATTR_EXPORT_SESSIONS,
	RMBD_TARGET_ATTR_EXPORT_MAPPED,
	RMBD_TARGET_ATTR_EXPORT_MEM,
	RMBD_TARGET_ATTR_LISTENER_ADDR,
	RMBD_TARGET_ATTR_LISTENER_PORT,
	RMBD_TARGET_ATTR_PAD,
	RMBD_TARGET_ATTR_TOTAL_MEM,
	RMBD_TARGET_ATTR_EVENT,
	RMBD_TARGET_ATTR_SESSION_ID,
	RMBD_TARGET_ATTR_SESSION_PEER,
	RMBD_TARGET_ATTR_EXPORT_ANY_HOST,
	RMBD_TARGET_ATTR_HOST,
	RMBD_TARGET_ATTR_EXPORT_HOSTS,
	RMBD_TARGET_ATTR_SESSION_HOST,
	RMBD_TARGET_ATTR_SECRET,
	RMBD_TARGET_ATTR_EXPORT_AUTH_HOSTS,
	RMBD_TARGET_ATTR_EXPORT_SHARED,
	RMBD_TARGET_ATTR_EXPORT_READ_ONLY,
	RMBD_TARGET_ATTR_SESSION_UP,
	RMBD_TARGET_ATTR_SESSION_AUTH,
	RMBD_TARGET_ATTR_SESSION_READ_ONLY,
	RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS,
	RMBD_TARGET_ATTR_LISTENER_SESSIONS,
	RMBD_TARGET_ATTR_SESSION_MAPPED,
	RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES,

	__RMBD_TARGET_ATTR_MAX,
	RMBD_TARGET_ATTR_MAX = __RMBD_TARGET_ATTR_MAX - 1
};

#endif /* _UAPI_LINUX_RMBD_TARGET_H */
