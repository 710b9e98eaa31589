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
#include <stdint.h>

#include <linux/rmbd_target.h>
#include <linux/rmbd_client.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBRMBD_VERSION		"0.1.0"

struct rmbd_ctx;

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
};

struct rmbd_listener_info {
	char addr[RMBD_ADDR_MAX];
	uint16_t port;
};

/* slab_size 0: the kernel's default; out may be NULL. */
int rmbd_export_add(struct rmbd_ctx *ctx, const char *name, uint64_t size,
		    uint64_t slab_size, struct rmbd_export_info *out);
int rmbd_export_del(struct rmbd_ctx *ctx, const char *name, bool force);
int rmbd_export_get(struct rmbd_ctx *ctx, const char *name,
		    struct rmbd_export_info *out);
/*
 * The list functions call cb once per object.  A non-zero return of cb
 * stops the calls; the list function then returns that value.
 * total_mem (may be NULL) is set to 0, then to the kernel's total if the
 * dump carries one.
 */
int rmbd_export_list(struct rmbd_ctx *ctx,
		     int (*cb)(const struct rmbd_export_info *, void *),
		     void *arg, uint64_t *total_mem);

/* port 0: RMBD_DEFAULT_PORT; out may be NULL. */
int rmbd_listener_add(struct rmbd_ctx *ctx, const char *addr, uint16_t port,
		      struct rmbd_listener_info *out);
int rmbd_listener_del(struct rmbd_ctx *ctx, const char *addr, uint16_t port);
int rmbd_listener_list(struct rmbd_ctx *ctx,
		       int (*cb)(const struct rmbd_listener_info *, void *),
		       void *arg);

/* Client side: block devices (module rmbd-client). */

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
};

struct rmbd_connect_opts {
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
};

/* out may be NULL. */
int rmbd_dev_connect(struct rmbd_ctx *ctx,
		     const struct rmbd_connect_opts *opts,
		     struct rmbd_dev_info *out);
int rmbd_dev_disconnect(struct rmbd_ctx *ctx, uint32_t index, bool force);
int rmbd_dev_list(struct rmbd_ctx *ctx,
		  int (*cb)(const struct rmbd_dev_info *, void *), void *arg);
int rmbd_dev_get(struct rmbd_ctx *ctx, uint32_t index,
		 struct rmbd_dev_info *out);

/*
 * "connecting", "live", "failed", "deleting", "reconnecting"; "unknown"
 * otherwise.
 */
const char *rmbd_dev_state_name(uint8_t state);

/*
 * Helpers, no kernel needed.
 * rmbd_parse_size: decimal digits with an optional binary suffix K, M, G, T,
 * P or E (any case), optionally followed by "iB": "4096", "64K", "1GiB".
 * -EINVAL on junk (empty, sign, space, other suffix), -ERANGE on overflow.
 * rmbd_parse_dev: "rmbdN", "/dev/rmbdN" or "N", N decimal without leading
 * zeros; -EINVAL on junk, -ERANGE if N does not fit in 32 bits.
 */
int rmbd_parse_size(const char *s, uint64_t *bytes);
int rmbd_parse_dev(const char *s, uint32_t *index);

#ifdef __cplusplus
}
#endif

#endif /* _LIBRMBD_H */
