/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RMBD_NLMSG_H
#define RMBD_NLMSG_H

#include <linux/netlink.h>
#include <net/genetlink.h>

/*
 * NL_SET_ERR_MSG() wants a literal; the reasons below come from deeper
 * layers as pointers to string literals, which live as long as the module.
 */
static inline void rmbd_set_err(struct netlink_ext_ack *extack,
				const struct nlattr *attr, const char *why)
{
	if (!extack || !why)
		return;
	extack->_msg = why;
	if (attr)
		extack->bad_attr = attr;
}

/*
 * The reply of a doit that makes or shows one object, allocated before
 * the work is done and before the module's mutex is taken (the client's
 * recovery takes its own: no allocation that may wait for reclaim under
 * it): a command whose reply cannot be had is not carried out.
 */
static inline struct sk_buff *rmbd_reply_alloc(struct genl_info *info)
{
	struct sk_buff *skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);

	if (!skb)
		NL_SET_ERR_MSG(info->extack, "cannot allocate the reply");
	return skb;
}

#endif /* RMBD_NLMSG_H */
