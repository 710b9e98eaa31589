/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks and helpers for the rmbd wire protocol, shared by the client and
 * the target.  Nothing the peer sends is used before it passed one of these.
 */
#ifndef RMBD_PROTO_H
#define RMBD_PROTO_H

#include <linux/types.h>
#include <linux/rmbd_proto.h>

/* Memory is allocated and registered in chunks of this size. */
#define RMBD_CHUNK_SHIFT	21
#define RMBD_CHUNK_SIZE		(1UL << RMBD_CHUNK_SHIFT)

/* Largest export a client accepts: 1 PiB. */
#define RMBD_MAX_EXPORT_SIZE	(1ULL << 50)

/* Most slabs an export may have: bounds per-device tables. */
#define RMBD_MAX_SLABS		(1U << 20)

/* Highest errno a peer may report; anything above is -EREMOTEIO. */
#define RMBD_MAX_WIRE_ERRNO	133	/* EHWPOISON */

int rmbd_check_cm_req(const void *data, u8 len, struct rmbd_cm_req *out);
int rmbd_check_cm_rep(const void *data, u8 len, u64 *session_id);
int rmbd_cm_rej_errno(const void *data, u8 len, const char **why);
void rmbd_fill_cm_rej(struct rmbd_cm_rej *rej, enum rmbd_cm_rej_reason r);

int rmbd_check_msg(const void *buf, u32 len, u16 *opcode);
int rmbd_check_reply(const void *buf, u32 len, u16 opcode, u32 tag);
int rmbd_check_geometry(u64 size, u64 slab_size, u32 nr_slabs);
u64 rmbd_slab_len(u64 size, u64 slab_size, u32 slab);
bool rmbd_valid_name(const char *name);
bool rmbd_valid_host(const char *host);
bool rmbd_valid_addr(const char *addr);

#endif /* RMBD_PROTO_H */
