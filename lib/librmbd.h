/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * librmbd: configure the rmbd target and client kernel modules over their
 * generic netlink families.
 *
 * Every function that returns int returns 0 (or a non-negative value) on
 * success and a negative errno on failure.  After a failure, rmbd_errmsg()
 * returns the kernel's extended-ack message, or a message of the library
 * (e.g. "kernel module rmbd-target is not loaded"), or "" if there is none.
 *
 * A context is not thread-safe: use one per thread.
 *
 * Installed as $(includedir)/rmbd/librmbd.h, with the uapi headers it
 * includes in $(includedir)/rmbd/linux/; `pkg-config --cflags librmbd`
 * adds -I$(includedir)/rmbd, so: #include <librmbd.h>.
 */
#ifndef _LIBRMBD_H
#define _LIBRMBD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/rmbd_target.h>
#include <linux/rmbd_client.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rmbd_ctx;

/* The version of the library loaded, as "MAJOR.MINOR.PATCH". */
const char *rmbd_version(void);

int rmbd_open(struct rmbd_ctx **ctx);
void rmbd_close(struct rmbd_ctx *ctx);
const char *rmbd_errmsg(const struct rmbd_ctx *ctx);

/* Target side: exports and listeners (module rmbd-target). */

struct rmbd_export_info {
	char name[RMBD_EXPORT_NAME_MAX];
	uint64_t size;			/* bytes */
	uint64_t slab_size;		/* bytes */
	uint64_t mem;			/* bytes of RAM the export holds */
	uint32_t nr_slabs;
	uint32_t sessions;		/* open client sessions */
	uint32_t mapped;		/* live slab registrations */
	bool any_host;			/* any host may open it */
	uint32_t nr_hosts;		/* the hosts that may */
	char hosts[RMBD_MAX_EXPORT_HOSTS][RMBD_HOST_MAX];
	uint32_t nr_auth_hosts;		/* those of them with a secret */
	char auth_hosts[RMBD_MAX_EXPORT_HOSTS][RMBD_HOST_MAX];
	bool shared;			/* several hosts may hold it */
	bool read_only;			/* no session writes */
};

struct rmbd_export_opts {
	const char *name;
	uint64_t size;			/* bytes */
	uint64_t slab_size;		/* 0: the kernel's default */
	/*
	 * Who may open it: any host, or the nr_hosts hosts; neither: nobody
	 * until rmbd_export_host_add().
	 */
	bool any_host;
	const char *const *hosts;
	uint32_t nr_hosts;
	/*
	 * Several hosts may hold it at once; else one at a time, and its
	 * stale sessions are taken over when it comes back.
	 */
	bool shared;
	bool read_only;			/* every session only reads */
};

struct rmbd_listener_info {
	char addr[RMBD_ADDR_MAX];
	uint16_t port;
	uint32_t max_sessions;		/* it holds at most, opened or not */
	uint32_t sessions;		/* it holds now */
};

/* slab_size 0: the kernel's default; out may be NULL. */
int rmbd_export_add(struct rmbd_ctx *ctx, const char *name, uint64_t size,
		    uint64_t slab_size, struct rmbd_export_info *out);
/* out may be NULL. */
int rmbd_export_create(struct rmbd_ctx *ctx,
		       const struct rmbd_export_opts *opts,
		       struct rmbd_export_info *out);
int rmbd_export_del(struct rmbd_ctx *ctx, const char *name, bool force);
/*
 * Allow, or no longer allow (its sessions end), host to open export name.
 * secret (NULL: none; else RMBD_SECRET_MIN..RMBD_SECRET_MAX bytes): the
 * host must prove it has it.
 */
int rmbd_export_host_add(struct rmbd_ctx *ctx, const char *name,
			 const char *host, const uint8_t *secret,
			 size_t secret_len);
int rmbd_export_host_del(struct rmbd_ctx *ctx, const char *name,
			 const char *host);
int rmbd_export_get(struct rmbd_ctx *ctx, const char *name,
		    struct rmbd_export_info *out);
/*
 * The list functions call cb once per object.  A non-zero return of cb
 * stops the calls; the list function then returns that value.
 * total_mem (may be NULL) is set to 0, then to the kernel's total, which
 * every export message carries (it stays 0 when there is no export).
 */
int rmbd_export_list(struct rmbd_ctx *ctx,
		     int (*cb)(const struct rmbd_export_info *, void *),
		     void *arg, uint64_t *total_mem);

/*
 * port 0: RMBD_DEFAULT_PORT; max_sessions 0: RMBD_LISTENER_SESSIONS; out
 * may be NULL.
 */
int rmbd_listener_add(struct rmbd_ctx *ctx, const char *addr, uint16_t port,
		      uint32_t max_sessions, struct rmbd_listener_info *out);
int rmbd_listener_del(struct rmbd_ctx *ctx, const char *addr, uint16_t port);
int rmbd_listener_list(struct rmbd_ctx *ctx,
		       int (*cb)(const struct rmbd_listener_info *, void *),
		       void *arg);

/* Client side: block devices (module rmbd-client). */

/* One leg of a device: its session to one export of one target. */
struct rmbd_leg_info {
	uint32_t index;			/* in its device, from 0 */
	uint8_t state;			/* enum rmbd_leg_state */
	char addr[RMBD_ADDR_MAX];
	uint16_t port;
	char export_name[RMBD_EXPORT_NAME_MAX];
	uint64_t size;			/* bytes of the export; 0 before */
	uint64_t slab_size;		/* its first OPEN, as these two */
	uint32_t nr_slabs;
	uint32_t nr_reconnects;		/* times its session was restored */
	uint64_t dirty;			/* bytes it missed (state "stale") */
};

/* Legs of a device that struct rmbd_dev_info holds; the rest are left out. */
#define RMBD_DEV_MAX_LEGS	16
#define RMBD_DEV_MAX_SPARES	8

struct rmbd_dev_info {
	uint32_t index;			/* N of /dev/rmbdN */
	char name[32];
	uint64_t size;			/* bytes */
	uint64_t slab_size;		/* bytes */
	uint8_t state;			/* enum rmbd_dev_state */
	char addr[RMBD_ADDR_MAX];
	uint16_t port;
	char export_name[RMBD_EXPORT_NAME_MAX];
	uint32_t nr_io_queues;
	uint32_t queue_depth;
	uint32_t nr_poll_queues;
	/* 0 from a kernel without reconnect: it fails a device at once. */
	uint32_t reconnect_delay;	/* seconds between reconnect attempts */
	uint32_t loss_timeout;		/* seconds; 0: no reconnect */
	uint32_t nr_reconnects;		/* times the connection was restored */
	bool shared;			/* connected with opts.shared */
	char host[RMBD_HOST_MAX];	/* the identity given, "" for none */
	bool auth;			/* it authenticates */
	bool read_only;			/* asked for, or the export is */
	/* 0 from a kernel that does not list them */
	uint32_t nr_legs;
	struct rmbd_leg_info legs[RMBD_DEV_MAX_LEGS];
	uint8_t layout;			/* enum rmbd_layout; 0: unknown */
	/* Legs that hold each extent (a mirror: all); 0: unknown */
	uint8_t copies;
	/* Bytes of an extent, the unit of placement; 0: unknown */
	uint64_t extent_size;
	/* Spares not used yet: index, addr, port and export_name only */
	uint32_t nr_spares;
	struct rmbd_leg_info spares[RMBD_DEV_MAX_SPARES];
};

/* Where a leg of a device goes */
struct rmbd_leg_opts {
	const char *addr;
	uint16_t port;			/* 0: RMBD_DEFAULT_PORT */
	const char *export_name;
};

struct rmbd_connect_opts {
	/* One target: addr, [port], export_name; or else legs. */
	const char *addr;
	uint16_t port;			/* 0: RMBD_DEFAULT_PORT */
	const char *export_name;
	uint32_t nr_io_queues;		/* 0: one per online CPU */
	uint32_t queue_depth;		/* 0: RMBD_DEFAULT_QUEUE_DEPTH */
	uint32_t nr_poll_queues;	/* 0: none */
	uint32_t reconnect_delay;	/* 0: RMBD_DEFAULT_RECONNECT_DELAY */
	/*
	 * Seconds I/O waits for a lost connection, sent only if
	 * has_loss_timeout (else RMBD_DEFAULT_LOSS_TIMEOUT); 0: fail at once.
	 */
	uint32_t loss_timeout;
	bool has_loss_timeout;
	/*
	 * Connect even if another device of this host is on the same export
	 * of the same target; else that is refused (-EEXIST).
	 */
	bool shared;
	/* The host identity to give; NULL: rmbd_host_default()'s. */
	const char *host;
	/* NULL, or the host's secret: authenticate both ways. */
	const uint8_t *secret;
	size_t secret_len;
	bool read_only;			/* the device only reads */
	/*
	 * A device over several targets: nr_legs (1..RMBD_MAX_LEGS) legs,
	 * on distinct exports, laid out as layout says (0:
	 * RMBD_LAYOUT_MIRROR); addr, port and export_name then unset.  A
	 * refusal's message then names the leg it is about.  copies: of
	 * each extent, RMBD_LAYOUT_POOL only (0: 2).
	 */
	const struct rmbd_leg_opts *legs;
	unsigned int nr_legs;
	uint8_t layout;
	uint8_t copies;
	/*
	 * Spares (with legs only): a leg failed for good, or down for the
	 * loss timeout, is replaced by the first.
	 */
	const struct rmbd_leg_opts *spares;
	unsigned int nr_spares;
};

/*
 * A secret from a file: its first line, 64 to 128 hex digits (32 to 64
 * bytes).  -EPERM when others than its owner may read the file, -EINVAL
 * when the line is no such secret; *len is set to the bytes read.
 */
int rmbd_secret_read(const char *path, uint8_t *buf, size_t *len);
/* A new random secret of len bytes (RMBD_SECRET_MIN..RMBD_SECRET_MAX). */
int rmbd_secret_generate(uint8_t *buf, size_t len);

/*
 * This machine's host identity: the first line of /etc/rmbd/hostid, or
 * else "rmbd:uuid:" and /etc/machine-id as a UUID.  The file read is
 * $RMBD_HOSTID_FILE when that is set.  -ENOENT when there is neither,
 * -EINVAL when the file's identity is not valid.
 */
int rmbd_host_default(char *buf, size_t len);
/* Whether host is a valid host identity (1..127 of [A-Za-z0-9._:-]). */
bool rmbd_valid_host(const char *host);

/* out may be NULL. */
int rmbd_dev_connect(struct rmbd_ctx *ctx,
		     const struct rmbd_connect_opts *opts,
		     struct rmbd_dev_info *out);
int rmbd_dev_disconnect(struct rmbd_ctx *ctx, uint32_t index, bool force);
/*
 * Replace leg `leg` of device index with a new leg to `to` (its addr and
 * export_name required, port 0 for the default); the device's data is
 * copied to it in the background.  out may be NULL.
 */
int rmbd_dev_replace(struct rmbd_ctx *ctx, uint32_t index, uint32_t leg,
		     const struct rmbd_leg_opts *to, struct rmbd_dev_info *out);
int rmbd_dev_list(struct rmbd_ctx *ctx,
		  int (*cb)(const struct rmbd_dev_info *, void *), void *arg);
int rmbd_dev_get(struct rmbd_ctx *ctx, uint32_t index,
		 struct rmbd_dev_info *out);

/*
 * Counters of a device, or of one of its blk-mq hardware queues, since it
 * was connected (enum rmbd_stats_attr): requests counted when they end.
 */
struct rmbd_dev_counters {
	uint32_t queue;			/* a hardware queue's number */
	bool poll;			/* a poll queue */
	uint64_t reads, read_bytes;	/* that succeeded */
	uint64_t writes, write_bytes;
	uint64_t discards, discard_bytes;	/* and write-zeroes */
	uint64_t errors;		/* requests ended with an error */
	uint64_t requeues;		/* times a request went back to wait */
	uint64_t timeouts;
	uint32_t in_flight;		/* started and not ended, now */
	uint32_t reconnects;		/* the device's only: all legs */
};

#define RMBD_DEV_MAX_QUEUES	(2 * RMBD_MAX_IO_QUEUES)

struct rmbd_dev_stats {
	/*
	 * false while the device connects or is disconnected, and from a
	 * module older than the counters: no counters
	 */
	bool valid;
	struct rmbd_dev_counters total;
	/* Each hardware queue's: from rmbd_dev_get_stats() only */
	uint32_t nr_queues;
	struct rmbd_dev_counters queues[RMBD_DEV_MAX_QUEUES];
};

/* rmbd_dev_get() with the device's counters and each queue's */
int rmbd_dev_get_stats(struct rmbd_ctx *ctx, uint32_t index,
		       struct rmbd_dev_info *out, struct rmbd_dev_stats *stats);
/* rmbd_dev_list() with each device's counters (totals only) */
int rmbd_dev_list_stats(struct rmbd_ctx *ctx,
			int (*cb)(const struct rmbd_dev_info *,
				  const struct rmbd_dev_stats *, void *),
			void *arg);

/*
 * "connecting", "live", "failed", "deleting", "reconnecting"; "unknown"
 * otherwise.
 */
const char *rmbd_dev_state_name(uint8_t state);
/* "mirror", "pool"; "unknown" otherwise. */
const char *rmbd_layout_name(uint8_t layout);
/*
 * Where copy k (below d->copies) of extent e of device d lies: its leg's
 * index and the byte offset on that leg (enum rmbd_layout's placement).
 * -EINVAL when d's layout, copies or extent size are unknown, or k or e
 * out of range.
 */
int rmbd_dev_place(const struct rmbd_dev_info *d, uint64_t e, unsigned int k,
		   uint32_t *leg, uint64_t *offset);
/* "down", "up", "stale", "failed"; "unknown" otherwise. */
const char *rmbd_leg_state_name(uint8_t state);

/*
 * Events: what the multicast group "events" of each family announces.
 * rmbd-client sends a device message (as rmbd_dev_get() returns it) with
 * an enum rmbd_dev_event whenever something happens to a device;
 * rmbd-target sends an enum rmbd_session_event when a client session opens
 * an export and when it ends.  Events are best effort: the kernel drops
 * one it cannot allocate, and rmbd_dev_get() is always right.
 *
 * Events arrive on a netlink socket of their own, which the context opens
 * on the first rmbd_events_subscribe(); the requests above go on working
 * alongside.  A family whose module is unloaded stops sending, and the
 * socket does not rejoin it when the module is loaded again: subscribe
 * again (or use a new context) for that.
 */

/* Bits of the families to subscribe to, and that were joined. */
#define RMBD_EVENTS_CLIENT	0x1u	/* device events of rmbd-client */
#define RMBD_EVENTS_TARGET	0x2u	/* session events of rmbd-target */
#define RMBD_EVENTS_ALL		(RMBD_EVENTS_CLIENT | RMBD_EVENTS_TARGET)

/*
 * After a call failed with -ENOENT: the modules whose netlink family it
 * did not find, as RMBD_EVENTS_CLIENT (rmbd-client) and
 * RMBD_EVENTS_TARGET (rmbd-target) bits; 0 when something else was not
 * found (an export, a device) or the call did not fail so.
 */
unsigned int rmbd_missing_modules(const struct rmbd_ctx *ctx);

/* A session of the target, as its events and rmbd_session_list() see it. */
struct rmbd_session_info {
	uint64_t id;			/* as the target's kernel log prints it */
	/* The client's address and port: "10.0.0.2:41234", "[fd00::2]:41234" */
	char peer[RMBD_ADDR_MAX + 8];
	char export_name[RMBD_EXPORT_NAME_MAX];
	char host[RMBD_HOST_MAX];	/* the identity it gave, "" for none */
	/* rmbd_session_list() only: it holds the export (else: it must
	 * still authenticate). */
	bool up;
	bool auth;			/* the host proved it has its secret */
	bool read_only;
	/* rmbd_session_list() only: its slab registrations, their bytes */
	uint32_t mapped;
	uint64_t mapped_bytes;
};

/*
 * The target's sessions that opened an export, or export_name's (NULL:
 * all); cb as for the other list functions.
 */
int rmbd_session_list(struct rmbd_ctx *ctx, const char *export_name,
		      int (*cb)(const struct rmbd_session_info *, void *),
		      void *arg);

struct rmbd_event {
	unsigned int family;		/* RMBD_EVENTS_CLIENT or _TARGET */
	/*
	 * RMBD_EVENTS_CLIENT: enum rmbd_dev_event; RMBD_EVENTS_TARGET: enum
	 * rmbd_session_event.  Values a newer kernel adds come as they are.
	 */
	uint8_t event;
	struct rmbd_dev_info dev;		/* RMBD_EVENTS_CLIENT; else 0 */
	struct rmbd_session_info session;	/* RMBD_EVENTS_TARGET; else 0 */
};

/*
 * Joins the events group of each family in which (RMBD_EVENTS_* bits)
 * whose module is loaded; the others are skipped.  *joined (may be NULL)
 * is set to the families joined so far on this context, by this call and
 * earlier ones.  Returns 0 if at least one family of which is joined.
 * Otherwise: -ENOENT if none of their modules is loaded (rmbd_errmsg():
 * "kernel module rmbd-client is not loaded", or "neither rmbd-client nor
 * rmbd-target is loaded" for both), -EOPNOTSUPP if a module predates
 * events ("kernel module ... has no events group"), -EINVAL if which is 0
 * or has other bits.  Any other error (e.g. -EPERM, if joining needs a
 * capability) is returned at once, whatever the other family.
 */
int rmbd_events_subscribe(struct rmbd_ctx *ctx, unsigned int which,
			  unsigned int *joined);

/*
 * The events socket, to poll for POLLIN next to other descriptors; then
 * call rmbd_event_recv() with timeout_ms 0 until it returns 0.  -EINVAL if
 * no family was joined.  Do not read from it or close it.
 */
int rmbd_events_fd(const struct rmbd_ctx *ctx);

/*
 * Receives one event into *ev, waiting up to timeout_ms milliseconds (0:
 * do not wait; -1: wait as long as it takes).  Returns 1 with an event, 0
 * when the time is up, or a negative errno: -EINTR if a signal interrupted
 * the wait; -ENOBUFS if the kernel dropped events because the socket's
 * receive buffer was full (the next call goes on with the events after
 * the gap; rmbd_dev_list() tells the current state); -EINVAL if no family
 * was joined.  Messages that are not events are skipped.
 */
int rmbd_event_recv(struct rmbd_ctx *ctx, struct rmbd_event *ev,
		    int timeout_ms);

/*
 * Names of events, no kernel needed.  rmbd_dev_event_name: "connected",
 * "link-down", "reconnecting", "live", "failed", "disconnected",
 * "degraded", "leg-back", "resync", "healthy", "replaced";
 * rmbd_session_event_name: "up", "down"; "unknown" otherwise.
 */
const char *rmbd_dev_event_name(uint8_t event);
const char *rmbd_session_event_name(uint8_t event);

/*
 * Helpers, no kernel needed.
 * rmbd_parse_size: decimal digits with an optional binary suffix K, M, G, T,
 * P or E, optionally followed by "iB", all in any case: "4096", "64K",
 * "64k", "1GiB", "1gib".  -EINVAL on junk (empty, sign, space, fraction,
 * other suffix), -ERANGE when the bytes do not fit in 64 bits.
 * rmbd_parse_dev: "rmbdN", "/dev/rmbdN" or "N", N decimal without leading
 * zeros; -EINVAL on junk, -ERANGE if N does not fit in 32 bits.
 */
int rmbd_parse_size(const char *s, uint64_t *bytes);
int rmbd_parse_dev(const char *s, uint32_t *index);

#ifdef __cplusplus
}
#endif

#endif /* _LIBRMBD_H */
