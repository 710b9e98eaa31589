/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rmbd client: generic netlink interface.
 *
 * The client module connects to an export on a target and creates a
 * block device /dev/rmbdN for it.  Every command needs CAP_NET_ADMIN; every
 * refusal carries an extended-ack message.
 */
#ifndef _UAPI_LINUX_RMBD_CLIENT_H
#define _UAPI_LINUX_RMBD_CLIENT_H

#define RMBD_CLIENT_GENL_NAME		"rmbd_client"
#define RMBD_CLIENT_GENL_VERSION	1

/* rdma_cm port of the target when none is given (same as rmbd_target.h). */
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

#define RMBD_MAX_IO_QUEUES		256
#define RMBD_MAX_QUEUE_DEPTH		1024
#define RMBD_DEFAULT_QUEUE_DEPTH	128
/* Legs of a device; a mirror's legs are its copies. */
#define RMBD_MAX_LEGS			4
/* Spare legs a device may name at connect */
#define RMBD_MAX_SPARES			2

/**
 * enum rmbd_client_cmd - commands of the rmbd_client family
 * @RMBD_CLIENT_CMD_DEV_CONNECT: connect to ADDR, [PORT], EXPORT_NAME (one
 *	leg), or to the legs of LEGS, [LAYOUT], [COPIES], [SPARES];
 *	[NR_IO_QUEUES], [NR_POLL_QUEUES], [QUEUE_DEPTH], [RECONNECT_DELAY],
 *	[LOSS_TIMEOUT], [SHARED], [HOST], [SECRET], [READ_ONLY].  Replies
 *	with the new device.  When a leg of LEGS fails, the error's extack
 *	points at its LEG; when an export is another host's (-EBUSY), a
 *	message with HOLDER comes before the error.
 * @RMBD_CLIENT_CMD_DEV_DISCONNECT: remove device DEV_INDEX, [FORCE].  A
 *	device open for two seconds (mounted, swap, a stacked device, a
 *	process) is refused with -EBUSY unless FORCE is set; its I/O then fails.
 * @RMBD_CLIENT_CMD_DEV_GET: dump devices, or get one by DEV_INDEX;
 *	[GET_STATS] adds their counters.
 * @RMBD_CLIENT_CMD_DEV_REPLACE: replace leg LEG_INDEX of device DEV_INDEX
 *	with a new leg to ADDR, [PORT], EXPORT_NAME: the new leg connects
 *	(with the device's host, secret, shared and read-only settings), the
 *	old one's session goes, and a resync copies the whole device to the
 *	new leg from a leg in sync, in the background.  Another leg must
 *	hold every write (-ENODATA otherwise); the new export must be as
 *	large as the device and its slabs and RDMA device fit the device's
 *	request layout (-EXDEV otherwise).  Replies with the device.
 * @RMBD_CLIENT_CMD_DEV_EVENT: notification only, to the
 *	RMBD_CLIENT_MCGRP_EVENTS group: a device message (as DEV_GET's) with
 *	EVENT, sent when something happens to a device.
 */
enum rmbd_client_cmd {
	RMBD_CLIENT_CMD_UNSPEC,
	RMBD_CLIENT_CMD_DEV_CONNECT,
	RMBD_CLIENT_CMD_DEV_DISCONNECT,
	RMBD_CLIENT_CMD_DEV_GET,
	RMBD_CLIENT_CMD_DEV_EVENT,
	RMBD_CLIENT_CMD_DEV_REPLACE,

	__RMBD_CLIENT_CMD_MAX,
	RMBD_CLIENT_CMD_MAX = __RMBD_CLIENT_CMD_MAX - 1
};

/**
 * enum rmbd_dev_state - state of a client device
 * @RMBD_DEV_STATE_CONNECTING: the session is being set up
 * @RMBD_DEV_STATE_LIVE: I/O flows
 * @RMBD_DEV_STATE_FAILED: the connection was lost and not restored within
 *	the loss timeout; I/O fails with EIO until the device is disconnected
 * @RMBD_DEV_STATE_DELETING: being disconnected
 * @RMBD_DEV_STATE_RECONNECTING: the connection was lost; I/O waits while
 *	the client reconnects, every RECONNECT_DELAY seconds, for up to
 *	LOSS_TIMEOUT seconds
 */
enum rmbd_dev_state {
	RMBD_DEV_STATE_CONNECTING,
	RMBD_DEV_STATE_LIVE,
	RMBD_DEV_STATE_FAILED,
	RMBD_DEV_STATE_DELETING,
	RMBD_DEV_STATE_RECONNECTING,
};

/*
 * Multicast group of RMBD_CLIENT_CMD_DEV_EVENT notifications; joining it
 * needs CAP_NET_ADMIN (-EPERM otherwise).
 */
#define RMBD_CLIENT_MCGRP_EVENTS	"events"

/**
 * enum rmbd_dev_event - what a RMBD_CLIENT_CMD_DEV_EVENT announces
 * @RMBD_DEV_EVENT_CONNECTED: the device was created; it is live
 * @RMBD_DEV_EVENT_LINK_DOWN: its connection to the target was lost
 * @RMBD_DEV_EVENT_RECONNECTING: a reconnect attempt starts
 * @RMBD_DEV_EVENT_LIVE: the connection is back; parked I/O resumes
 * @RMBD_DEV_EVENT_FAILED: I/O fails with EIO from now on (no reconnect,
 *	or the loss timeout passed)
 * @RMBD_DEV_EVENT_DISCONNECTED: the device was removed
 * @RMBD_DEV_EVENT_DEGRADED: one of its legs was lost, or failed for good;
 *	I/O goes on over the others (enum rmbd_leg_state tells which)
 * @RMBD_DEV_EVENT_LEG_BACK: a lost leg's session is back; it takes writes
 *	again, and reads once it holds what it missed (after its resync)
 * @RMBD_DEV_EVENT_RESYNC: a resync starts: the regions a leg missed are
 *	copied to it from a leg that holds every write; sent again every
 *	few seconds while it runs, the legs' DIRTY telling how far it is
 * @RMBD_DEV_EVENT_HEALTHY: the resync of a leg ended: it holds every write
 *	again and takes reads
 * @RMBD_DEV_EVENT_REPLACED: a leg was replaced (DEV_REPLACE); its resync
 *	follows
 */
enum rmbd_dev_event {
	RMBD_DEV_EVENT_CONNECTED = 1,
	RMBD_DEV_EVENT_LINK_DOWN,
	RMBD_DEV_EVENT_RECONNECTING,
	RMBD_DEV_EVENT_LIVE,
	RMBD_DEV_EVENT_FAILED,
	RMBD_DEV_EVENT_DISCONNECTED,
	RMBD_DEV_EVENT_DEGRADED,
	RMBD_DEV_EVENT_LEG_BACK,
	RMBD_DEV_EVENT_RESYNC,
	RMBD_DEV_EVENT_HEALTHY,
	RMBD_DEV_EVENT_REPLACED,
};

#define RMBD_DEFAULT_RECONNECT_DELAY	2	/* seconds */
#define RMBD_MAX_RECONNECT_DELAY	3600
#define RMBD_DEFAULT_LOSS_TIMEOUT	60	/* seconds */
#define RMBD_MAX_LOSS_TIMEOUT		86400

/**
 * enum rmbd_client_attr - attributes of the rmbd_client family
 * @RMBD_CLIENT_ATTR_DEV_INDEX: u32, N of /dev/rmbdN
 * @RMBD_CLIENT_ATTR_DEV_NAME: string, output: "rmbdN"
 * @RMBD_CLIENT_ATTR_DEV_SIZE: u64, output: bytes
 * @RMBD_CLIENT_ATTR_DEV_STATE: u8, output: enum rmbd_dev_state
 * @RMBD_CLIENT_ATTR_ADDR: string, the target's IPv4 or IPv6 address
 * @RMBD_CLIENT_ATTR_PORT: u16, default RMBD_DEFAULT_PORT
 * @RMBD_CLIENT_ATTR_EXPORT_NAME: string, the export to open
 * @RMBD_CLIENT_ATTR_NR_IO_QUEUES: u32, 1..RMBD_MAX_IO_QUEUES, default one
 *	per online CPU; capped to the number of CPUs
 * @RMBD_CLIENT_ATTR_QUEUE_DEPTH: u32, 1..RMBD_MAX_QUEUE_DEPTH, default
 *	RMBD_DEFAULT_QUEUE_DEPTH
 * @RMBD_CLIENT_ATTR_SLAB_SIZE: u64, output: the export's slab size
 * @RMBD_CLIENT_ATTR_PAD: padding for 64-bit attributes
 * @RMBD_CLIENT_ATTR_FORCE: flag, DEV_DISCONNECT even when in use
 * @RMBD_CLIENT_ATTR_NR_POLL_QUEUES: u32, 0..RMBD_MAX_IO_QUEUES, default 0:
 *	extra I/O queues whose completions are polled (io_uring hipri);
 *	capped to the number of CPUs.  NR_IO_QUEUES plus NR_POLL_QUEUES, each
 *	capped first, is at most RMBD_MAX_IO_QUEUES (-EINVAL otherwise)
 * @RMBD_CLIENT_ATTR_RECONNECT_DELAY: u32, seconds between reconnect
 *	attempts, 1..RMBD_MAX_RECONNECT_DELAY, default
 *	RMBD_DEFAULT_RECONNECT_DELAY
 * @RMBD_CLIENT_ATTR_LOSS_TIMEOUT: u32, seconds I/O waits for a lost
 *	connection to come back before it fails with EIO,
 *	0..RMBD_MAX_LOSS_TIMEOUT (0: fail at once, no reconnect), default
 *	RMBD_DEFAULT_LOSS_TIMEOUT
 * @RMBD_CLIENT_ATTR_NR_RECONNECTS: u32, output: times the connection was
 *	restored
 * @RMBD_CLIENT_ATTR_EVENT: u8, output of DEV_EVENT: enum rmbd_dev_event
 * @RMBD_CLIENT_ATTR_HOST: string, DEV_CONNECT: the host identity to give
 *	the target (1..127 bytes of [A-Za-z0-9._:-], not starting with a dot
 *	or a dash); without it, none, which only an export that allows any
 *	host takes.  Output: the identity given, "" for none.
 * @RMBD_CLIENT_ATTR_SECRET: binary, 32..64 bytes, DEV_CONNECT only, with
 *	HOST: the host's secret; the device then proves it has it, and
 *	requires the target to prove it too, at every connect.  Input only.
 * @RMBD_CLIENT_ATTR_AUTH: flag, output: the device authenticates.
 * @RMBD_CLIENT_ATTR_SHARED: flag, DEV_CONNECT even when another device of
 *	this host (with the same host identity) is connected, connecting or
 *	reconnecting to the same export of the same target (address and
 *	port); without it such a connect is refused (-EEXIST).  Output: the device was connected so.
 *	The target refuses it (-EPERM) unless its export is shared.
 * @RMBD_CLIENT_ATTR_READ_ONLY: flag, DEV_CONNECT: the device only reads,
 *	and the target registers its memory without remote write.  Output:
 *	the device is read-only (asked for, or the export is read-only).
 * @RMBD_CLIENT_ATTR_HOLDER: string, output only: in a message that comes
 *	before the error of a DEV_CONNECT the target refused because
 *	another host holds the export (-EBUSY), that host's identity.
 * @RMBD_CLIENT_ATTR_LEGS: nest, the device's legs (its sessions, one per
 *	export of a target it uses), one RMBD_CLIENT_ATTR_LEG nest each (enum
 *	rmbd_leg_attr), in the order of their index.  ADDR, PORT,
 *	EXPORT_NAME, SLAB_SIZE and NR_RECONNECTS of the device message are
 *	its first leg's.  DEV_CONNECT: 1..RMBD_MAX_LEGS legs, each with
 *	ADDR, EXPORT_NAME and [PORT] (nothing else), on distinct exports;
 *	not with the device's own ADDR, PORT and EXPORT_NAME.
 * @RMBD_CLIENT_ATTR_LEG: nest, one leg inside RMBD_CLIENT_ATTR_LEGS
 * @RMBD_CLIENT_ATTR_LAYOUT: u8, enum rmbd_layout, how the device's data
 *	lies on its legs; DEV_CONNECT: default RMBD_LAYOUT_MIRROR
 * @RMBD_CLIENT_ATTR_LEG_INDEX: u32, DEV_REPLACE: the leg replaced, below
 *	RMBD_MAX_LEGS
 * @RMBD_CLIENT_ATTR_COPIES: u8, legs that hold each extent of the device
 *	(R).  DEV_CONNECT: of RMBD_LAYOUT_POOL, 1..number of legs, default
 *	2; of a mirror, if given, its number of legs.
 * @RMBD_CLIENT_ATTR_EXTENT_SIZE: u64, output: bytes of an extent, the unit
 *	of placement (the smallest slab size among the legs), 0 before the
 *	legs' first sessions
 * @RMBD_CLIENT_ATTR_SPARES: nest, spare legs, one RMBD_CLIENT_ATTR_LEG
 *	nest each, as in LEGS.  DEV_CONNECT (with LEGS): 0..RMBD_MAX_SPARES
 *	spares, each with ADDR, EXPORT_NAME and [PORT], on exports that no
 *	leg uses, of a device of two legs or more (of a pool: of COPIES 2 or
 *	more); a leg that fails for good, or stays down for the device's
 *	loss timeout, is replaced by the first of them (as DEV_REPLACE).
 *	Output: the spares not used yet, INDEX their number among them.
 * @RMBD_CLIENT_ATTR_GET_STATS: flag, DEV_GET (do and dump): add STATS
 * @RMBD_CLIENT_ATTR_STATS: nest, output of DEV_GET with GET_STATS: the
 *	device's counters (enum rmbd_stats_attr), totals of its hardware
 *	queues', then one RMBD_STATS_ATTR_QUEUE nest per hardware queue.
 *	Absent while the device connects or is being disconnected.
 */
enum rmbd_client_attr {
	RMBD_CLIENT_ATTR_UNSPEC,
	RMBD_CLIENT_ATTR_DEV_INDEX,
	RMBD_CLIENT_ATTR_DEV_NAME,
	RMBD_CLIENT_ATTR_DEV_SIZE,
	RMBD_CLIENT_ATTR_DEV_STATE,
	RMBD_CLIENT_ATTR_ADDR,
	RMBD_CLIENT_ATTR_PORT,
	RMBD_CLIENT_ATTR_EXPORT_NAME,
	RMBD_CLIENT_ATTR_NR_IO_QUEUES,
	RMBD_CLIENT_ATTR_QUEUE_DEPTH,
	RMBD_CLIENT_ATTR_SLAB_SIZE,
	RMBD_CLIENT_ATTR_PAD,
	RMBD_CLIENT_ATTR_FORCE,
	RMBD_CLIENT_ATTR_NR_POLL_QUEUES,
	RMBD_CLIENT_ATTR_RECONNECT_DELAY,
	RMBD_CLIENT_ATTR_LOSS_TIMEOUT,
	RMBD_CLIENT_ATTR_NR_RECONNECTS,
	RMBD_CLIENT_ATTR_EVENT,
	RMBD_CLIENT_ATTR_SHARED,
	RMBD_CLIENT_ATTR_HOST,
	RMBD_CLIENT_ATTR_SECRET,
	RMBD_CLIENT_ATTR_AUTH,
	RMBD_CLIENT_ATTR_READ_ONLY,
	RMBD_CLIENT_ATTR_HOLDER,
	RMBD_CLIENT_ATTR_LEGS,
	RMBD_CLIENT_ATTR_LEG,
	RMBD_CLIENT_ATTR_LAYOUT,
	RMBD_CLIENT_ATTR_LEG_INDEX,
	RMBD_CLIENT_ATTR_COPIES,
	RMBD_CLIENT_ATTR_EXTENT_SIZE,
	RMBD_CLIENT_ATTR_SPARES,
	RMBD_CLIENT_ATTR_GET_STATS,
	RMBD_CLIENT_ATTR_STATS,

	__RMBD_CLIENT_ATTR_MAX,
	RMBD_CLIENT_ATTR_MAX = __RMBD_CLIENT_ATTR_MAX - 1
};

/**
 * enum rmbd_layout - how a device's data lies on its legs
 * @RMBD_LAYOUT_MIRROR: every leg holds the whole device (as many copies
 *	as legs; the device is as large as the smallest export).  A write
 *	goes to every leg that is up and completes once all of them have
 *	it; a read goes to one leg that holds every write.
 * @RMBD_LAYOUT_POOL: the device is cut into extents (EXTENT_SIZE), each
 *	held by COPIES (R) of the N legs, placed as RAID-10's near layout:
 *	copy k (0 <= k < R) of extent e lies on leg (e * R + k) mod N, in
 *	that leg's extent slot (e * R + k) / N, at byte offset
 *	slot * EXTENT_SIZE.  The device holds floor(N * S / R) extents, S
 *	being the slots of the smallest export.  Writes go to the extent's
 *	legs that are up, reads to one of them that holds every write, as
 *	in a mirror.  A pool takes neither discards nor write zeroes (the
 *	block layer does not split them at extents).
 */
enum rmbd_layout {
	RMBD_LAYOUT_MIRROR = 1,
	RMBD_LAYOUT_POOL,
};

/**
 * enum rmbd_leg_state - state of one leg of a device
 * @RMBD_LEG_STATE_DOWN: no session: connecting, lost, reconnecting or
 *	given up (the device's state tells which)
 * @RMBD_LEG_STATE_UP: its session is set up, and it holds every write
 *	the device completed: I/O flows on it
 * @RMBD_LEG_STATE_STALE: its session is set up and takes writes, but it
 *	missed some while it was down (RMBD_LEG_ATTR_DIRTY): no reads
 * @RMBD_LEG_STATE_FAILED: its target refused it for good (the export is
 *	gone, another one, or no longer this host's): no more reconnects
 */
enum rmbd_leg_state {
	RMBD_LEG_STATE_DOWN,
	RMBD_LEG_STATE_UP,
	RMBD_LEG_STATE_STALE,
	RMBD_LEG_STATE_FAILED,
};

/**
 * enum rmbd_leg_attr - attributes of a leg (RMBD_CLIENT_ATTR_LEG); output
 *	but for ADDR, PORT and EXPORT_NAME, which DEV_CONNECT takes
 * @RMBD_LEG_ATTR_INDEX: u32, the leg's number in its device, from 0
 * @RMBD_LEG_ATTR_STATE: u8, enum rmbd_leg_state
 * @RMBD_LEG_ATTR_ADDR: string, the target's address as given
 * @RMBD_LEG_ATTR_PORT: u16, the target's port
 * @RMBD_LEG_ATTR_EXPORT_NAME: string, the export on that target
 * @RMBD_LEG_ATTR_SIZE: u64, bytes of the export (0 before its first OPEN)
 * @RMBD_LEG_ATTR_SLAB_SIZE: u64, the export's slab size (0 likewise)
 * @RMBD_LEG_ATTR_NR_SLABS: u32, the export's slabs (0 likewise)
 * @RMBD_LEG_ATTR_NR_RECONNECTS: u32, times its session was restored
 * @RMBD_LEG_ATTR_PAD: padding for 64-bit attributes
 * @RMBD_LEG_ATTR_DIRTY: u64, bytes of the device that the leg missed
 *	while the device completed writes without it (whole regions of the
 *	device's dirty map)
 */
enum rmbd_leg_attr {
	RMBD_LEG_ATTR_UNSPEC,
	RMBD_LEG_ATTR_INDEX,
	RMBD_LEG_ATTR_STATE,
	RMBD_LEG_ATTR_ADDR,
	RMBD_LEG_ATTR_PORT,
	RMBD_LEG_ATTR_EXPORT_NAME,
	RMBD_LEG_ATTR_SIZE,
	RMBD_LEG_ATTR_SLAB_SIZE,
	RMBD_LEG_ATTR_NR_SLABS,
	RMBD_LEG_ATTR_NR_RECONNECTS,
	RMBD_LEG_ATTR_PAD,
	RMBD_LEG_ATTR_DIRTY,

	__RMBD_LEG_ATTR_MAX,
	RMBD_LEG_ATTR_MAX = __RMBD_LEG_ATTR_MAX - 1
};

/**
 * enum rmbd_stats_attr - counters of a device (RMBD_CLIENT_ATTR_STATS) or
 *	of one of its blk-mq hardware queues (RMBD_STATS_ATTR_QUEUE), since
 *	the device was connected; output only.  Requests are counted when
 *	they end, once each whatever the legs they went to.
 * @RMBD_STATS_ATTR_PAD: padding for 64-bit attributes
 * @RMBD_STATS_ATTR_INDEX: u32, in a QUEUE nest: the hardware queue's
 *	number (I/O queues first, then poll queues)
 * @RMBD_STATS_ATTR_POLL: flag, in a QUEUE nest: a poll queue
 * @RMBD_STATS_ATTR_READS: u64, reads that succeeded
 * @RMBD_STATS_ATTR_READ_BYTES: u64, their bytes
 * @RMBD_STATS_ATTR_WRITES: u64, writes that succeeded
 * @RMBD_STATS_ATTR_WRITE_BYTES: u64, their bytes
 * @RMBD_STATS_ATTR_DISCARDS: u64, discards and write-zeroes that succeeded
 * @RMBD_STATS_ATTR_DISCARD_BYTES: u64, their bytes
 * @RMBD_STATS_ATTR_ERRORS: u64, requests that ended with an error
 * @RMBD_STATS_ATTR_REQUEUES: u64, times a request went back to wait: for
 *	the session while the device recovered, for a resync, for room on a
 *	queue, or to be read from another leg
 * @RMBD_STATS_ATTR_TIMEOUTS: u64, times a request timed out
 * @RMBD_STATS_ATTR_IN_FLIGHT: u32, requests started and not ended now
 * @RMBD_STATS_ATTR_RECONNECTS: u32, the device only: sessions restored,
 *	all legs together
 * @RMBD_STATS_ATTR_QUEUE: nest, the device only: one hardware queue's
 *	counters, with INDEX (and POLL)
 */
enum rmbd_stats_attr {
	RMBD_STATS_ATTR_UNSPEC,
	RMBD_STATS_ATTR_PAD,
	RMBD_STATS_ATTR_INDEX,
	RMBD_STATS_ATTR_POLL,
	RMBD_STATS_ATTR_READS,
	RMBD_STATS_ATTR_READ_BYTES,
	RMBD_STATS_ATTR_WRITES,
	RMBD_STATS_ATTR_WRITE_BYTES,
	RMBD_STATS_ATTR_DISCARDS,
	RMBD_STATS_ATTR_DISCARD_BYTES,
	RMBD_STATS_ATTR_ERRORS,
	RMBD_STATS_ATTR_REQUEUES,
	RMBD_STATS_ATTR_TIMEOUTS,
	RMBD_STATS_ATTR_IN_FLIGHT,
	RMBD_STATS_ATTR_RECONNECTS,
	RMBD_STATS_ATTR_QUEUE,

	__RMBD_STATS_ATTR_MAX,
	RMBD_STATS_ATTR_MAX = __RMBD_STATS_ATTR_MAX - 1
};

#endif /* _UAPI_LINUX_RMBD_CLIENT_H */
