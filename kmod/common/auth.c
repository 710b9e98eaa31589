// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd authentication: the HMAC-SHA-256 answers both sides compute, with
 * the kernel's crypto API.  See struct rmbd_auth_msg.
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <crypto/hash.h>
#include "auth.h"

/**
 * rmbd_auth_tfm() - an HMAC-SHA-256 transform keyed with a host's secret
 * @secret: RMBD_SECRET_MIN..RMBD_SECRET_MAX bytes
 * @len: its length
 *
 * Return: the transform (free it with crypto_free_shash(), which wipes
 * the key), or an ERR_PTR.
 */
struct crypto_shash *rmbd_auth_tfm(const u8 *secret, unsigned int len)
{
	struct crypto_shash *tfm;
	int ret;

	if (WARN_ON_ONCE(len < RMBD_SECRET_MIN || len > RMBD_SECRET_MAX))
		return ERR_PTR(-EINVAL);
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	ret = crypto_shash_setkey(tfm, secret, len);
	if (ret) {
		crypto_free_shash(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}

/**
 * rmbd_auth_answer() - one side's answer, with a keyed transform
 * @tfm: from rmbd_auth_tfm()
 * @target: the target's answer (else the client's)
 * @session_id: the session's id, as the target accepted it
 * @theirs: the challenge answered (the other side's)
 * @ours: the answering side's own challenge
 * @host: the host identity, NUL padded to RMBD_HOST_LEN
 * @name: the export name, NUL padded to RMBD_NAME_LEN
 * @out: RMBD_RESPONSE_LEN bytes
 *
 * Allocates nothing: safe where memory may be short.
 */
int rmbd_auth_answer(struct crypto_shash *tfm, bool target, u64 session_id,
		     const u8 *theirs, const u8 *ours, const char *host,
		     const char *name, u8 *out)
{
	static const char labels[2][16] = {
		"rmbd v2 client", "rmbd v2 target",
	};
	char hostbuf[RMBD_HOST_LEN] = { }, namebuf[RMBD_NAME_LEN] = { };
	__le64 sid = cpu_to_le64(session_id);
	SHASH_DESC_ON_STACK(desc, tfm);
	int ret;

	strscpy(hostbuf, host, sizeof(hostbuf));
	strscpy(namebuf, name, sizeof(namebuf));
	desc->tfm = tfm;
	ret = crypto_shash_init(desc) ?:
	      crypto_shash_update(desc, labels[target], 16) ?:
	      crypto_shash_update(desc, (u8 *)&sid, sizeof(sid)) ?:
	      crypto_shash_update(desc, theirs, RMBD_CHALLENGE_LEN) ?:
	      crypto_shash_update(desc, ours, RMBD_CHALLENGE_LEN) ?:
	      crypto_shash_update(desc, hostbuf, sizeof(hostbuf)) ?:
	      crypto_shash_update(desc, namebuf, sizeof(namebuf)) ?:
	      crypto_shash_final(desc, out);
	shash_desc_zero(desc);
	return ret;
}

/**
 * rmbd_auth_response() - one side's answer, keyed with @secret
 * @secret: the host's secret, RMBD_SECRET_MIN..RMBD_SECRET_MAX bytes
 * @len: its length
 * @target: as rmbd_auth_answer()
 * @session_id: as rmbd_auth_answer()
 * @theirs: as rmbd_auth_answer()
 * @ours: as rmbd_auth_answer()
 * @host: as rmbd_auth_answer()
 * @name: as rmbd_auth_answer()
 * @out: as rmbd_auth_answer()
 *
 * Allocates a transform: for the target's admin work, not for paths
 * that run short of memory.
 *
 * Return: 0, or a negative errno when the crypto API fails us.
 */
int rmbd_auth_response(const u8 *secret, unsigned int len, bool target,
		       u64 session_id, const u8 *theirs, const u8 *ours,
		       const char *host, const char *name, u8 *out)
{
	struct crypto_shash *tfm = rmbd_auth_tfm(secret, len);
	int ret;

	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	ret = rmbd_auth_answer(tfm, target, session_id, theirs, ours, host,
			       name, out);
	crypto_free_shash(tfm);
	return ret;
}
