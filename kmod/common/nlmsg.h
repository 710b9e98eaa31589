/* SPDX-License-Identifier: GPL-2.0 */
#ifndef RMBD_NLMSG_H
#define RMBD_NLMSG_H

#include <linux/netlink.h>

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

#endif /* RMBD_NLMSG_H */
