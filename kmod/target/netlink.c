// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd target: the rmbd_target generic netlink family.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <net/genetlink.h>
#include "target.h"
#include "nlmsg.h"

static const struct nla_policy rmbd_t_host_policy[RMBD_TARGET_ATTR_MAX + 1] = {
	[RMBD_TARGET_ATTR_HOST]		= { .type = NLA_NUL_STRING,
					    .len = RMBD_HOST_MAX - 1 },
};

/* 6.1 has the range of a policy non-const. */
static struct netlink_range_validation rmbd_t_sessions_range = {
	.min = 1,
	.max = RMBD_MAX_SESSIONS,
};

static const struct nla_policy rmbd_t_policy[RMBD_TARGET_ATTR_MAX + 1] = {
	[RMBD_TARGET_ATTR_EXPORT_NAME]	= { .type = NLA_NUL_STRING,
					    .len = RMBD_EXPORT_NAME_MAX - 1 },
	[RMBD_TARGET_ATTR_EXPORT_SIZE]	= { .type = NLA_U64 },
	[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE] = { .type = NLA_U64 },
	[RMBD_TARGET_ATTR_EXPORT_FORCE]	= { .type = NLA_FLAG },
	[RMBD_TARGET_ATTR_EXPORT_NR_SLABS] = { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_EXPORT_SESSIONS] = { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_EXPORT_MAPPED] = { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_EXPORT_MEM]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_LISTENER_ADDR] = { .type = NLA_NUL_STRING,
					     .len = RMBD_ADDR_MAX - 1 },
	[RMBD_TARGET_ATTR_LISTENER_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[RMBD_TARGET_ATTR_PAD]		= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_TOTAL_MEM]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_EVENT]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_SESSION_ID]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_SESSION_PEER]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_EXPORT_ANY_HOST] = { .type = NLA_FLAG },
	[RMBD_TARGET_ATTR_HOST]		= { .type = NLA_NUL_STRING,
					    .len = RMBD_HOST_MAX - 1 },
	[RMBD_TARGET_ATTR_EXPORT_HOSTS]	=
		NLA_POLICY_NESTED(rmbd_t_host_policy),
	[RMBD_TARGET_ATTR_SESSION_HOST]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_SECRET]	= { .type = NLA_BINARY,
					    .len = RMBD_SECRET_MAX },
	[RMBD_TARGET_ATTR_EXPORT_AUTH_HOSTS] = { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_EXPORT_SHARED] = { .type = NLA_FLAG },
	[RMBD_TARGET_ATTR_EXPORT_READ_ONLY] = { .type = NLA_FLAG },
	[RMBD_TARGET_ATTR_SESSION_UP]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_SESSION_AUTH]	= { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_SESSION_READ_ONLY] = { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &rmbd_t_sessions_range),
	[RMBD_TARGET_ATTR_LISTENER_SESSIONS] = { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_SESSION_MAPPED] = { .type = NLA_REJECT },
	[RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES] = { .type = NLA_REJECT },
};

static struct genl_family rmbd_t_family;

/* The fill functions take void * so that rmbd_t_reply() serves both. */
static int rmbd_t_fill_export(struct sk_buff *skb, void *obj, u32 portid,
			      u32 seq, int flags, u8 cmd)
{
	struct rmbd_export *exp = obj;
	struct rmbd_export_host *h;
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &rmbd_t_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	nest = nla_nest_start(skb, RMBD_TARGET_ATTR_EXPORT_HOSTS);
	if (!nest)
		goto cancel;
	list_for_each_entry(h, &exp->hosts, entry)
		if (nla_put_string(skb, RMBD_TARGET_ATTR_HOST, h->name))
			goto cancel;
	nla_nest_end(skb, nest);
	nest = nla_nest_start(skb, RMBD_TARGET_ATTR_EXPORT_AUTH_HOSTS);
	if (!nest)
		goto cancel;
	list_for_each_entry(h, &exp->hosts, entry)
		if (h->secret_len &&
		    nla_put_string(skb, RMBD_TARGET_ATTR_HOST, h->name))
			goto cancel;
	nla_nest_end(skb, nest);
	if ((exp->any_host &&
	     nla_put_flag(skb, RMBD_TARGET_ATTR_EXPORT_ANY_HOST)) ||
	    (exp->shared &&
	     nla_put_flag(skb, RMBD_TARGET_ATTR_EXPORT_SHARED)) ||
	    (exp->read_only &&
	     nla_put_flag(skb, RMBD_TARGET_ATTR_EXPORT_READ_ONLY)) ||
	    nla_put_string(skb, RMBD_TARGET_ATTR_EXPORT_NAME, exp->name) ||
	    nla_put_u64_64bit(skb, RMBD_TARGET_ATTR_EXPORT_SIZE, exp->size,
			      RMBD_TARGET_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE,
			      exp->slab_size, RMBD_TARGET_ATTR_PAD) ||
	    nla_put_u32(skb, RMBD_TARGET_ATTR_EXPORT_NR_SLABS, exp->nr_slabs) ||
	    nla_put_u32(skb, RMBD_TARGET_ATTR_EXPORT_SESSIONS,
			exp->nr_sessions) ||
	    nla_put_u32(skb, RMBD_TARGET_ATTR_EXPORT_MAPPED,
			atomic_read(&exp->nr_mapped)) ||
	    nla_put_u64_64bit(skb, RMBD_TARGET_ATTR_EXPORT_MEM, exp->mem,
			      RMBD_TARGET_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, RMBD_TARGET_ATTR_TOTAL_MEM,
			      rmbd_exports_mem(), RMBD_TARGET_ATTR_PAD))
		goto cancel;
	genlmsg_end(skb, hdr);
	return 0;

cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* The export EXPORT_NAME names (rmbd_t_mutex held), or NULL, said why. */
static struct rmbd_export *rmbd_t_named_export(struct genl_info *info)
{
	struct nlattr *a = info->attrs[RMBD_TARGET_ATTR_EXPORT_NAME];
	struct rmbd_export *exp = rmbd_export_find(nla_data(a));

	if (!exp)
		NL_SET_ERR_MSG_ATTR(info->extack, a, "no export with this name");
	return exp;
}

/* A host entry for @host, from an attribute the policy checked. */
static struct rmbd_export_host *rmbd_t_host_entry(struct genl_info *info,
						  const struct nlattr *attr)
{
	struct rmbd_export_host *h;

	if (!rmbd_valid_host(nla_data(attr))) {
		NL_SET_ERR_MSG_ATTR(info->extack, attr,
				    "host identity must be 1-127 characters of A-Z a-z 0-9 . _ : - and not start with a dot or a dash");
		return ERR_PTR(-EINVAL);
	}
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h) {
		NL_SET_ERR_MSG(info->extack, "could not allocate a host entry");
		return ERR_PTR(-ENOMEM);
	}
	strscpy(h->name, nla_data(attr), sizeof(h->name));
	return h;
}

/*
 * The hosts of an EXPORT_HOSTS nest onto @hosts, each checked, before
 * the module mutex is taken; the caller frees them on failure.
 */
static int rmbd_t_parse_hosts(struct genl_info *info, struct list_head *hosts,
			      unsigned int *n)
{
	struct nlattr *nest = info->attrs[RMBD_TARGET_ATTR_EXPORT_HOSTS];
	struct rmbd_export_host *h, *o;
	struct nlattr *a;
	int rem;

	*n = 0;
	if (!nest)
		return 0;
	nla_for_each_nested(a, nest, rem) {
		if (nla_type(a) != RMBD_TARGET_ATTR_HOST) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "only host attributes in the hosts");
			return -EINVAL;
		}
		if (*n >= RMBD_MAX_EXPORT_HOSTS) {
			NL_SET_ERR_MSG_ATTR(info->extack, a,
					    "an export allows at most 16 hosts");
			return -ENOSPC;
		}
		h = rmbd_t_host_entry(info, a);
		if (IS_ERR(h))
			return PTR_ERR(h);
		list_for_each_entry(o, hosts, entry) {
			if (!strcmp(o->name, h->name)) {
				kfree(h);
				NL_SET_ERR_MSG_ATTR(info->extack, a,
						    "a host named twice");
				return -EINVAL;
			}
		}
		list_add_tail(&h->entry, hosts);
		(*n)++;
	}
	return 0;
}

static int rmbd_t_fill_listener(struct sk_buff *skb, void *obj, u32 portid,
				u32 seq, int flags, u8 cmd)
{
	struct rmbd_listener *l = obj;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &rmbd_t_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_string(skb, RMBD_TARGET_ATTR_LISTENER_ADDR, l->addr_str) ||
	    nla_put_u16(skb, RMBD_TARGET_ATTR_LISTENER_PORT, l->port) ||
	    nla_put_u32(skb, RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS,
			l->max_sessions) ||
	    nla_put_u32(skb, RMBD_TARGET_ATTR_LISTENER_SESSIONS,
			atomic_read(&l->nr_sessions))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Fill and send a reply from rmbd_reply_alloc(); consumes @skb. */
static int rmbd_t_reply(struct genl_info *info, struct sk_buff *skb,
			void *obj,
			int (*fill)(struct sk_buff *, void *, u32, u32, int,
				    u8))
{
	int ret;

	ret = fill(skb, obj, info->snd_portid, info->snd_seq, 0,
		   info->genlhdr->cmd);
	if (ret) {
		nlmsg_free(skb);
		return ret;
	}
	return genlmsg_reply(skb, info);
}

static int rmbd_t_export_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	u64 size, slab_size = RMBD_DEFAULT_SLAB_SIZE;
	unsigned int nr_hosts;
	const char *why = NULL;
	struct rmbd_export *exp;
	struct sk_buff *reply;
	const char *name;
	LIST_HEAD(hosts);
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_EXPORT_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_EXPORT_SIZE))
		return -EINVAL;
	name = nla_data(attrs[RMBD_TARGET_ATTR_EXPORT_NAME]);
	if (!rmbd_valid_name(name)) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[RMBD_TARGET_ATTR_EXPORT_NAME],
				    "export name must be 1-63 characters of A-Z a-z 0-9 . _ - and not start with a dot");
		return -EINVAL;
	}
	size = nla_get_u64(attrs[RMBD_TARGET_ATTR_EXPORT_SIZE]);
	if (!size || !IS_ALIGNED(size, 4096) || size > RMBD_MAX_EXPORT_SIZE) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[RMBD_TARGET_ATTR_EXPORT_SIZE],
				    "export size must be a non-zero multiple of 4096, at most 1 PiB");
		return -EINVAL;
	}
	if (attrs[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE]) {
		slab_size = nla_get_u64(attrs[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE]);
		if (!is_power_of_2(slab_size) ||
		    slab_size < RMBD_MIN_SLAB_SIZE ||
		    slab_size > RMBD_MAX_SLAB_SIZE) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_TARGET_ATTR_EXPORT_SLAB_SIZE],
					    "slab size must be a power of two from 2 MiB to 1 GiB");
			return -EINVAL;
		}
	}

	if (DIV_ROUND_UP_ULL(size, slab_size) > RMBD_MAX_SLABS) {
		NL_SET_ERR_MSG(info->extack,
			       "too many slabs for this size: use a larger slab size");
		return -E2BIG;
	}
	if (attrs[RMBD_TARGET_ATTR_HOST]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[RMBD_TARGET_ATTR_HOST],
				    "a host of a new export goes inside its hosts");
		return -EINVAL;
	}
	if (attrs[RMBD_TARGET_ATTR_SECRET]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[RMBD_TARGET_ATTR_SECRET],
				    "a host's secret goes with export host add");
		return -EINVAL;
	}
	ret = rmbd_t_parse_hosts(info, &hosts, &nr_hosts);
	if (ret)
		goto out_hosts;

	ret = -ENOMEM;
	reply = rmbd_reply_alloc(info);
	if (!reply)
		goto out_hosts;
	mutex_lock(&rmbd_t_mutex);
	ret = rmbd_export_create(name, size, slab_size, &exp, &why);
	if (!ret) {
		/* Still under the mutex: no client sees it before this. */
		exp->any_host =
			nla_get_flag(attrs[RMBD_TARGET_ATTR_EXPORT_ANY_HOST]);
		exp->shared =
			nla_get_flag(attrs[RMBD_TARGET_ATTR_EXPORT_SHARED]);
		exp->read_only =
			nla_get_flag(attrs[RMBD_TARGET_ATTR_EXPORT_READ_ONLY]);
		list_splice_init(&hosts, &exp->hosts);
		exp->nr_hosts = nr_hosts;
		ret = rmbd_t_reply(info, reply, exp, rmbd_t_fill_export);
	} else {
		nlmsg_free(reply);
	}
	mutex_unlock(&rmbd_t_mutex);
	rmbd_set_err(info->extack, NULL, why);
out_hosts:
	rmbd_export_hosts_free(&hosts);
	return ret;
}

/* EXPORT_HOST_ADD and EXPORT_HOST_DEL. */
static int rmbd_t_export_host(struct sk_buff *skb, struct genl_info *info)
{
	bool add = info->genlhdr->cmd == RMBD_TARGET_CMD_EXPORT_HOST_ADD;
	struct nlattr **attrs = info->attrs;
	struct rmbd_export_host *h = NULL;
	const char *why = NULL;
	struct rmbd_export *exp;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_EXPORT_NAME) ||
	    GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_HOST))
		return -EINVAL;
	if (attrs[RMBD_TARGET_ATTR_EXPORT_HOSTS] ||
	    attrs[RMBD_TARGET_ATTR_EXPORT_ANY_HOST] ||
	    attrs[RMBD_TARGET_ATTR_EXPORT_SHARED] ||
	    attrs[RMBD_TARGET_ATTR_EXPORT_READ_ONLY]) {
		NL_SET_ERR_MSG(info->extack,
			       "one host at a time; any_host, shared and read_only only when the export is added");
		return -EINVAL;
	}
	if (!add && attrs[RMBD_TARGET_ATTR_SECRET]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[RMBD_TARGET_ATTR_SECRET],
				    "a secret only comes with export host add");
		return -EINVAL;
	}
	if (attrs[RMBD_TARGET_ATTR_SECRET] &&
	    nla_len(attrs[RMBD_TARGET_ATTR_SECRET]) < RMBD_SECRET_MIN) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[RMBD_TARGET_ATTR_SECRET],
				    "a secret has 32 to 64 bytes");
		return -EINVAL;
	}
	if (add) {
		h = rmbd_t_host_entry(info, attrs[RMBD_TARGET_ATTR_HOST]);
		if (IS_ERR(h))
			return PTR_ERR(h);
		if (attrs[RMBD_TARGET_ATTR_SECRET]) {
			h->secret_len = nla_len(attrs[RMBD_TARGET_ATTR_SECRET]);
			memcpy(h->secret, nla_data(attrs[RMBD_TARGET_ATTR_SECRET]),
			       h->secret_len);
		}
	}
	mutex_lock(&rmbd_t_mutex);
	exp = rmbd_t_named_export(info);
	if (!exp) {
		ret = -ENOENT;
	} else if (add) {
		ret = rmbd_export_host_add(exp, h, &why);
		if (!ret)
			h = NULL;
	} else {
		ret = rmbd_export_host_del(exp,
					   nla_data(attrs[RMBD_TARGET_ATTR_HOST]),
					   &why);
	}
	mutex_unlock(&rmbd_t_mutex);
	kfree_sensitive(h);
	rmbd_set_err(info->extack, attrs[RMBD_TARGET_ATTR_HOST], why);
	return ret;
}

static int rmbd_t_export_del(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct rmbd_export *exp;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_EXPORT_NAME))
		return -EINVAL;
	mutex_lock(&rmbd_t_mutex);
	exp = rmbd_t_named_export(info);
	if (!exp) {
		ret = -ENOENT;
		goto out_unlock;
	}
	ret = rmbd_export_delete(exp,
				 nla_get_flag(attrs[RMBD_TARGET_ATTR_EXPORT_FORCE]));
	if (ret == -EBUSY)
		NL_SET_ERR_MSG(info->extack,
			       "export has client sessions; use force to tear them down");
out_unlock:
	mutex_unlock(&rmbd_t_mutex);
	return ret;
}

static int rmbd_t_export_get(struct sk_buff *skb, struct genl_info *info)
{
	struct rmbd_export *exp;
	struct sk_buff *reply;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_EXPORT_NAME))
		return -EINVAL;
	reply = rmbd_reply_alloc(info);
	if (!reply)
		return -ENOMEM;
	mutex_lock(&rmbd_t_mutex);
	exp = rmbd_t_named_export(info);
	if (exp) {
		ret = rmbd_t_reply(info, reply, exp, rmbd_t_fill_export);
	} else {
		nlmsg_free(reply);
		ret = -ENOENT;
	}
	mutex_unlock(&rmbd_t_mutex);
	return ret;
}

static int rmbd_t_export_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct rmbd_export *exp;
	long idx = 0, start = cb->args[0];

	mutex_lock(&rmbd_t_mutex);
	list_for_each_entry(exp, &rmbd_t_exports, entry) {
		if (idx++ < start)
			continue;
		if (rmbd_t_fill_export(skb, exp, NETLINK_CB(cb->skb).portid,
				       cb->nlh->nlmsg_seq, NLM_F_MULTI,
				       RMBD_TARGET_CMD_EXPORT_GET)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&rmbd_t_mutex);
	cb->args[0] = idx;
	return skb->len;
}

static u16 rmbd_t_port(struct genl_info *info)
{
	struct nlattr *a = info->attrs[RMBD_TARGET_ATTR_LISTENER_PORT];

	return a ? nla_get_u16(a) : RMBD_DEFAULT_PORT;
}

static int rmbd_t_listener_add(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *max = info->attrs[RMBD_TARGET_ATTR_LISTENER_MAX_SESSIONS];
	struct rmbd_listener *l;
	const char *why = NULL;
	struct sk_buff *reply;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_LISTENER_ADDR))
		return -EINVAL;
	reply = rmbd_reply_alloc(info);
	if (!reply)
		return -ENOMEM;
	mutex_lock(&rmbd_t_mutex);
	ret = rmbd_listener_add(nla_data(info->attrs[RMBD_TARGET_ATTR_LISTENER_ADDR]),
				rmbd_t_port(info),
				max ? nla_get_u32(max) : RMBD_LISTENER_SESSIONS,
				&l, &why);
	if (!ret)
		ret = rmbd_t_reply(info, reply, l, rmbd_t_fill_listener);
	else
		nlmsg_free(reply);
	mutex_unlock(&rmbd_t_mutex);
	rmbd_set_err(info->extack,
		     info->attrs[RMBD_TARGET_ATTR_LISTENER_ADDR], why);
	return ret;
}

static int rmbd_t_listener_del(struct sk_buff *skb, struct genl_info *info)
{
	const char *why = NULL;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_TARGET_ATTR_LISTENER_ADDR))
		return -EINVAL;
	ret = rmbd_listener_del(nla_data(info->attrs[RMBD_TARGET_ATTR_LISTENER_ADDR]),
				rmbd_t_port(info), &why);
	rmbd_set_err(info->extack,
		     info->attrs[RMBD_TARGET_ATTR_LISTENER_ADDR], why);
	return ret;
}

static int rmbd_t_listener_dump(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct rmbd_listener *l;
	long idx = 0, start = cb->args[0];

	mutex_lock(&rmbd_t_mutex);
	list_for_each_entry(l, &rmbd_t_listeners, entry) {
		if (idx++ < start)
			continue;
		if (rmbd_t_fill_listener(skb, l, NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI,
					 RMBD_TARGET_CMD_LISTENER_GET)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&rmbd_t_mutex);
	cb->args[0] = idx;
	return skb->len;
}

/*
 * A session that opened an export (rmbd_t_mutex held, or the session's
 * release running: the export and the admin cm_id stay until it ends).
 */
static int rmbd_t_fill_session(struct sk_buff *skb, struct rmbd_t_session *sess,
			       u32 portid, u32 seq, int flags, u8 cmd, u8 event)
{
	char peer[RMBD_ADDR_MAX + 8];
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &rmbd_t_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	snprintf(peer, sizeof(peer), "%pISpc",
		 &sess->admin.cm_id->route.addr.dst_addr);
	if ((event && nla_put_u8(skb, RMBD_TARGET_ATTR_EVENT, event)) ||
	    nla_put_u64_64bit(skb, RMBD_TARGET_ATTR_SESSION_ID, sess->id,
			      RMBD_TARGET_ATTR_PAD) ||
	    nla_put_string(skb, RMBD_TARGET_ATTR_SESSION_PEER, peer) ||
	    nla_put_string(skb, RMBD_TARGET_ATTR_SESSION_HOST, sess->host) ||
	    nla_put_string(skb, RMBD_TARGET_ATTR_EXPORT_NAME,
			   sess->export->name) ||
	    (!event && READ_ONCE(sess->up) &&
	     nla_put_flag(skb, RMBD_TARGET_ATTR_SESSION_UP)) ||
	    (READ_ONCE(sess->authenticated) &&
	     nla_put_flag(skb, RMBD_TARGET_ATTR_SESSION_AUTH)) ||
	    (sess->read_only &&
	     nla_put_flag(skb, RMBD_TARGET_ATTR_SESSION_READ_ONLY)) ||
	    (!event && nla_put_u32(skb, RMBD_TARGET_ATTR_SESSION_MAPPED,
				   atomic_read(&sess->nr_mapped))) ||
	    (!event &&
	     nla_put_u64_64bit(skb, RMBD_TARGET_ATTR_SESSION_MAPPED_BYTES,
			       atomic64_read(&sess->mapped_bytes),
			       RMBD_TARGET_ATTR_PAD))) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/*
 * SESSION_GET dump: the sessions of every export, or of export NAME, in
 * list order; args[0] and args[1] say where the last message stopped.
 */
static int rmbd_t_session_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	const struct genl_dumpit_info *info = genl_dumpit_info(cb);
	struct nlattr *name = info->attrs[RMBD_TARGET_ATTR_EXPORT_NAME];
	long e = 0, s, start_e = cb->args[0], start_s = cb->args[1];
	struct rmbd_t_session *sess;
	struct rmbd_export *exp;

	mutex_lock(&rmbd_t_mutex);
	list_for_each_entry(exp, &rmbd_t_exports, entry) {
		if (e < start_e) {
			e++;
			continue;
		}
		if (!name || !strcmp(exp->name, nla_data(name))) {
			s = 0;
			list_for_each_entry(sess, &exp->sessions, export_entry) {
				if (s++ < start_s)
					continue;
				if (rmbd_t_fill_session(skb, sess,
							NETLINK_CB(cb->skb).portid,
							cb->nlh->nlmsg_seq,
							NLM_F_MULTI,
							RMBD_TARGET_CMD_SESSION_GET,
							0)) {
					cb->args[0] = e;
					cb->args[1] = s - 1;
					goto out;
				}
			}
		}
		start_s = 0;
		e++;
	}
	cb->args[0] = e;
	cb->args[1] = 0;
out:
	mutex_unlock(&rmbd_t_mutex);
	return skb->len;
}

static const struct genl_ops rmbd_t_ops[] = {
	{
		.cmd	= RMBD_TARGET_CMD_EXPORT_ADD,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_t_export_add,
	},
	{
		.cmd	= RMBD_TARGET_CMD_EXPORT_DEL,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_t_export_del,
	},
	{
		.cmd	= RMBD_TARGET_CMD_EXPORT_GET,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_t_export_get,
		.dumpit	= rmbd_t_export_dump,
	},
	{
		.cmd	= RMBD_TARGET_CMD_LISTENER_ADD,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_t_listener_add,
	},
	{
		.cmd	= RMBD_TARGET_CMD_LISTENER_DEL,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_t_listener_del,
	},
	{
		.cmd	= RMBD_TARGET_CMD_EXPORT_HOST_ADD,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_t_export_host,
	},
	{
		.cmd	= RMBD_TARGET_CMD_EXPORT_HOST_DEL,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_t_export_host,
	},
	{
		.cmd	= RMBD_TARGET_CMD_LISTENER_GET,
		.flags	= GENL_ADMIN_PERM,
		.dumpit	= rmbd_t_listener_dump,
	},
	{
		.cmd	= RMBD_TARGET_CMD_SESSION_GET,
		.flags	= GENL_ADMIN_PERM,
		.dumpit	= rmbd_t_session_dump,
	},
};

static const struct genl_multicast_group rmbd_t_mcgrps[] = {
	/* Events name exports, addresses and devices: admins only. */
	{ .name = RMBD_TARGET_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN, },
};

static struct genl_family rmbd_t_family __ro_after_init = {
	.name		= RMBD_TARGET_GENL_NAME,
	.version	= RMBD_TARGET_GENL_VERSION,
	.maxattr	= RMBD_TARGET_ATTR_MAX,
	.policy		= rmbd_t_policy,
	.module		= THIS_MODULE,
	.ops		= rmbd_t_ops,
	.n_ops		= ARRAY_SIZE(rmbd_t_ops),
	.mcgrps		= rmbd_t_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(rmbd_t_mcgrps),
	/* resv_start_op 0: strict header and attribute checks everywhere. */
	.parallel_ops	= true,
	.netnsok	= false,
};

MODULE_ALIAS_GENL_FAMILY(RMBD_TARGET_GENL_NAME);

/* Events stop before the family, and its group ids, go away. */
static DECLARE_RWSEM(rmbd_t_events_sem);
static bool rmbd_t_events_on;

/**
 * rmbd_t_notify_session() - announce a session event to the events group
 * @sess: a session that opened an export
 * @event: enum rmbd_session_event
 */
void rmbd_t_notify_session(struct rmbd_t_session *sess, u8 event)
{
	struct sk_buff *skb;

	down_read(&rmbd_t_events_sem);
	if (!rmbd_t_events_on ||
	    !genl_has_listeners(&rmbd_t_family, &init_net, 0))
		goto out;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!skb)
		goto out;
	if (rmbd_t_fill_session(skb, sess, 0, 0, 0,
				RMBD_TARGET_CMD_SESSION_EVENT, event)) {
		nlmsg_free(skb);
		goto out;
	}
	genlmsg_multicast(&rmbd_t_family, skb, 0, 0, GFP_KERNEL);
out:
	up_read(&rmbd_t_events_sem);
}

int rmbd_t_netlink_init(void)
{
	int ret = genl_register_family(&rmbd_t_family);

	if (!ret)
		rmbd_t_events_on = true;
	return ret;
}

void rmbd_t_netlink_exit(void)
{
	down_write(&rmbd_t_events_sem);
	rmbd_t_events_on = false;
	up_write(&rmbd_t_events_sem);
	genl_unregister_family(&rmbd_t_family);
}
