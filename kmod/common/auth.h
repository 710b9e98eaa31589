/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rmbd authentication, shared by the client and the target.
 */
#ifndef RMBD_AUTH_H
#define RMBD_AUTH_H

#include <linux/types.h>
#include <linux/rmbd_proto.h>

struct crypto_shash;

struct crypto_shash *rmbd_auth_tfm(const u8 *secret, unsigned int len);
int rmbd_auth_answer(struct crypto_shash *tfm, bool target, u64 session_id,
		     const u8 *theirs, const u8 *ours, const char *host,
		     const char *name, u8 *out);
int rmbd_auth_response(const u8 *secret, unsigned int len, bool target,
		       u64 session_id, const u8 *theirs, const u8 *ours,
		       const char *host, const char *name, u8 *out);

#endif /* RMBD_AUTH_H */
