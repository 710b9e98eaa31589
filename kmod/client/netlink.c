// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: the rmbd_client generic netlink family.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/stringify.h>
#include <net/genetlink.h>
#include "client.h"
#include "nlmsg.h"

static struct netlink_range_validation rmbd_c_loss_timeout_range = {
	.min	= 0,
	.max	= RMBD_MAX_LOSS_TIMEOUT,
};

/* Every queue's index must be one the target takes. */
static_assert(RMBD_MAX_IO_QUEUES <= RMBD_MAX_IO_QUEUES_WIRE);

/* A leg of DEV_CONNECT: where it goes, nothing else. */
static const struct nla_policy rmbd_c_leg_policy[RMBD_LEG_ATTR_MAX + 1] = {
	[RMBD_LEG_ATTR_INDEX]		= { .type = NLA_REJECT },
	[RMBD_LEG_ATTR_STATE]		= { .type = NLA_REJECT },
	[RMBD_LEG_ATTR_ADDR]		= { .type = NLA_NUL_STRING,
					    .len = RMBD_ADDR_MAX - 1 },
	[RMBD_LEG_ATTR_PORT]		= NLA_POLICY_MIN(NLA_U16, 1),
	[RMBD_LEG_ATTR_EXPORT_NAME]	= { .type = NLA_NUL_STRING,
					    .len = RMBD_EXPORT_NAME_MAX - 1 },
	[RMBD_LEG_ATTR_SIZE]		= { .type = NLA_REJECT },
	[RMBD_LEG_ATTR_SLAB_SIZE]	= { .type = NLA_REJECT },
	[RMBD_LEG_ATTR_NR_SLABS]	= { .type = NLA_REJECT },
	[RMBD_LEG_ATTR_NR_RECONNECTS]	= { .type = NLA_REJECT },
	[RMBD_LEG_ATTR_PAD]		= { .type = NLA_REJECT },
	[RMBD_LEG_ATTR_DIRTY]		= { .type = NLA_REJECT },
};

static const struct nla_policy rmbd_c_policy[RMBD_CLIENT_ATTR_MAX + 1] = {
	[RMBD_CLIENT_ATTR_DEV_INDEX]	= { .type = NLA_U32 },
	[RMBD_CLIENT_ATTR_DEV_NAME]	= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_DEV_SIZE]	= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_DEV_STATE]	= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_ADDR]		= { .type = NLA_NUL_STRING,
					    .len = RMBD_ADDR_MAX - 1 },
	[RMBD_CLIENT_ATTR_PORT]		= NLA_POLICY_MIN(NLA_U16, 1),
	[RMBD_CLIENT_ATTR_EXPORT_NAME]	= { .type = NLA_NUL_STRING,
					    .len = RMBD_EXPORT_NAME_MAX - 1 },
	[RMBD_CLIENT_ATTR_NR_IO_QUEUES]	=
		NLA_POLICY_RANGE(NLA_U32, 1, RMBD_MAX_IO_QUEUES),
	[RMBD_CLIENT_ATTR_QUEUE_DEPTH]	=
		NLA_POLICY_RANGE(NLA_U32, 1, RMBD_MAX_QUEUE_DEPTH),
	[RMBD_CLIENT_ATTR_SLAB_SIZE]	= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_PAD]		= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_FORCE]	= { .type = NLA_FLAG },
	[RMBD_CLIENT_ATTR_NR_POLL_QUEUES] =
		NLA_POLICY_MAX(NLA_U32, RMBD_MAX_IO_QUEUES),
	[RMBD_CLIENT_ATTR_RECONNECT_DELAY] =
		NLA_POLICY_RANGE(NLA_U32, 1, RMBD_MAX_RECONNECT_DELAY),
	[RMBD_CLIENT_ATTR_LOSS_TIMEOUT] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &rmbd_c_loss_timeout_range),
	[RMBD_CLIENT_ATTR_NR_RECONNECTS] = { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_EVENT]	= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_SHARED]	= { .type = NLA_FLAG },
	[RMBD_CLIENT_ATTR_HOST]		= { .type = NLA_NUL_STRING,
					    .len = RMBD_HOST_MAX - 1 },
	[RMBD_CLIENT_ATTR_SECRET]	= { .type = NLA_BINARY,
					    .len = RMBD_SECRET_MAX },
	[RMBD_CLIENT_ATTR_AUTH]		= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_READ_ONLY]	= { .type = NLA_FLAG },
	[RMBD_CLIENT_ATTR_HOLDER]	= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_LEGS]		=
		NLA_POLICY_NESTED_ARRAY(rmbd_c_leg_policy),
	[RMBD_CLIENT_ATTR_LEG]		= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_LAYOUT]	=
		NLA_POLICY_RANGE(NLA_U8, RMBD_LAYOUT_MIRROR, RMBD_LAYOUT_POOL),
	[RMBD_CLIENT_ATTR_LEG_INDEX]	=
		NLA_POLICY_MAX(NLA_U32, RMBD_MAX_LEGS - 1),
	[RMBD_CLIENT_ATTR_COPIES]	=
		NLA_POLICY_RANGE(NLA_U8, 1, RMBD_MAX_LEGS),
	[RMBD_CLIENT_ATTR_EXTENT_SIZE]	= { .type = NLA_REJECT },
	[RMBD_CLIENT_ATTR_SPARES]	=
		NLA_POLICY_NESTED_ARRAY(rmbd_c_leg_policy),
	[RMBD_CLIENT_ATTR_GET_STATS]	= { .type = NLA_FLAG },
	[RMBD_CLIENT_ATTR_STATS]	= { .type = NLA_REJECT },
};

static struct genl_family rmbd_c_family;

/* enum rmbd_leg_state of @leg */
u8 rmbd_c_leg_state(struct rmbd_c_leg *leg)
{
	if (test_bit(RMBD_C_LEG_FAILED, &leg->flags))
		return RMBD_LEG_STATE_FAILED;
	if (!test_bit(RMBD_C_LEG_UP, &leg->flags))
		return RMBD_LEG_STATE_DOWN;
	if (test_bit(RMBD_C_LEG_IN_SYNC, &leg->flags))
		return RMBD_LEG_STATE_UP;
	return RMBD_LEG_STATE_STALE;
}

/* One leg, @i of its device, as a RMBD_CLIENT_ATTR_LEG nest. */
static int rmbd_c_fill_leg(struct sk_buff *skb, struct rmbd_c_leg *leg,
			   unsigned int i)
{
	struct rmbd_c_dev *dev = leg->dev;
	struct nlattr *nest;
	u8 state = rmbd_c_leg_state(leg);
	u64 dirty = 0;

	if (leg->dirty)
		dirty = min_t(u64, dev->size,
			      (u64)bitmap_weight(leg->dirty, dev->nr_regions) <<
			      dev->region_shift);
	nest = nla_nest_start(skb, RMBD_CLIENT_ATTR_LEG);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, RMBD_LEG_ATTR_INDEX, i) ||
	    nla_put_u8(skb, RMBD_LEG_ATTR_STATE, state) ||
	    nla_put_u64_64bit(skb, RMBD_LEG_ATTR_DIRTY, dirty,
			      RMBD_LEG_ATTR_PAD) ||
	    nla_put_string(skb, RMBD_LEG_ATTR_ADDR, leg->addr_str) ||
	    nla_put_u16(skb, RMBD_LEG_ATTR_PORT, leg->port) ||
	    nla_put_string(skb, RMBD_LEG_ATTR_EXPORT_NAME, leg->export_name) ||
	    nla_put_u64_64bit(skb, RMBD_LEG_ATTR_SIZE, leg->size,
			      RMBD_LEG_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, RMBD_LEG_ATTR_SLAB_SIZE, leg->slab_size,
			      RMBD_LEG_ATTR_PAD) ||
	    nla_put_u32(skb, RMBD_LEG_ATTR_NR_SLABS, leg->nr_slabs) ||
	    nla_put_u32(skb, RMBD_LEG_ATTR_NR_RECONNECTS, leg->nr_reconnects)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The spares not used yet, as a RMBD_CLIENT_ATTR_SPARES nest */
static int rmbd_c_fill_spares(struct sk_buff *skb, struct rmbd_c_dev *dev)
{
	struct nlattr *nest, *leg;
	struct rmbd_c_spare *sp;
	unsigned int i;

	/* Every change of the spares takes it. */
	spin_lock(&dev->spare_lock);
	if (!dev->nr_spares) {
		spin_unlock(&dev->spare_lock);
		return 0;
	}
	nest = nla_nest_start(skb, RMBD_CLIENT_ATTR_SPARES);
	if (!nest) {
		spin_unlock(&dev->spare_lock);
		return -EMSGSIZE;
	}
	for (i = 0; i < dev->nr_spares; i++) {
		sp = &dev->spares[i];
		leg = nla_nest_start(skb, RMBD_CLIENT_ATTR_LEG);
		if (!leg ||
		    nla_put_u32(skb, RMBD_LEG_ATTR_INDEX, i) ||
		    nla_put_string(skb, RMBD_LEG_ATTR_ADDR, sp->addr) ||
		    nla_put_u16(skb, RMBD_LEG_ATTR_PORT, sp->port) ||
		    nla_put_string(skb, RMBD_LEG_ATTR_EXPORT_NAME,
				   sp->export_name)) {
			spin_unlock(&dev->spare_lock);
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
		nla_nest_end(skb, leg);
	}
	spin_unlock(&dev->spare_lock);
	nla_nest_end(skb, nest);
	return 0;
}

/* The device's legs, as a RMBD_CLIENT_ATTR_LEGS nest. */
static int rmbd_c_fill_legs(struct sk_buff *skb, struct rmbd_c_dev *dev)
{
	struct nlattr *nest;
	unsigned int i;

	nest = nla_nest_start(skb, RMBD_CLIENT_ATTR_LEGS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < dev->nr_legs; i++) {
		if (rmbd_c_fill_leg(skb, dev->legs[i], i)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The counters of one hardware queue, or their sum */
struct rmbd_c_counts {
	u64	ios[RMBD_C_STAT_OPS];
	u64	bytes[RMBD_C_STAT_OPS];
	u64	errors;
	u64	requeues;
	u64	timeouts;
	u32	in_flight;
};

/* One started request of @data's device, to its hardware queue's count */
static bool rmbd_c_count_in_flight(struct request *rq, void *data)
{
	struct rmbd_c_dev *dev = data;

	dev->stats[rq->mq_hctx->queue_num].in_flight++;
	return true;
}

/*
 * Count the started requests of each hardware queue of @dev, in one walk
 * of the tag set.  Under rmbd_c_mutex, which the counts are kept under.
 */
static void rmbd_c_count_all_in_flight(struct rmbd_c_dev *dev)
{
	unsigned int i, nr = dev->nr_io_queues + dev->nr_poll_queues;

	lockdep_assert_held(&rmbd_c_mutex);
	for (i = 0; i < nr; i++)
		dev->stats[i].in_flight = 0;
	blk_mq_tagset_busy_iter(&dev->tag_set, rmbd_c_count_in_flight, dev);
}

/* Add the counters of hardware queue @i of @dev to @c. */
static void rmbd_c_read_counts(struct rmbd_c_dev *dev, unsigned int i,
			       struct rmbd_c_counts *c)
{
	struct rmbd_c_stats *st = &dev->stats[i];
	unsigned int op;

	for (op = 0; op < RMBD_C_STAT_OPS; op++) {
		c->ios[op] += atomic64_read(&st->ios[op]);
		c->bytes[op] += atomic64_read(&st->bytes[op]);
	}
	c->errors += atomic64_read(&st->errors);
	c->requeues += atomic64_read(&st->requeues);
	c->timeouts += atomic64_read(&st->timeouts);
	c->in_flight += st->in_flight;
}

static int rmbd_c_put_counts(struct sk_buff *skb,
			     const struct rmbd_c_counts *c)
{
	static const u8 ios[RMBD_C_STAT_OPS] = {
		[RMBD_C_STAT_READ]	= RMBD_STATS_ATTR_READS,
		[RMBD_C_STAT_WRITE]	= RMBD_STATS_ATTR_WRITES,
		[RMBD_C_STAT_DISCARD]	= RMBD_STATS_ATTR_DISCARDS,
	};
	static const u8 bytes[RMBD_C_STAT_OPS] = {
		[RMBD_C_STAT_READ]	= RMBD_STATS_ATTR_READ_BYTES,
		[RMBD_C_STAT_WRITE]	= RMBD_STATS_ATTR_WRITE_BYTES,
		[RMBD_C_STAT_DISCARD]	= RMBD_STATS_ATTR_DISCARD_BYTES,
	};
	unsigned int op;

	for (op = 0; op < RMBD_C_STAT_OPS; op++)
		if (nla_put_u64_64bit(skb, ios[op], c->ios[op],
				      RMBD_STATS_ATTR_PAD) ||
		    nla_put_u64_64bit(skb, bytes[op], c->bytes[op],
				      RMBD_STATS_ATTR_PAD))
			return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, RMBD_STATS_ATTR_ERRORS, c->errors,
			      RMBD_STATS_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, RMBD_STATS_ATTR_REQUEUES, c->requeues,
			      RMBD_STATS_ATTR_PAD) ||
	    nla_put_u64_64bit(skb, RMBD_STATS_ATTR_TIMEOUTS, c->timeouts,
			      RMBD_STATS_ATTR_PAD) ||
	    nla_put_u32(skb, RMBD_STATS_ATTR_IN_FLIGHT, c->in_flight))
		return -EMSGSIZE;
	return 0;
}

/* What rmbd_c_fill_dev() adds of a device's counters */
enum {
	RMBD_C_STATS_NONE,
	RMBD_C_STATS_TOTAL,
	RMBD_C_STATS_QUEUES,	/* and each hardware queue's */
};

/* Room for a device's counters, each of its hardware queues' too */
static size_t rmbd_c_stats_size(struct rmbd_c_dev *dev)
{
	return (dev->nr_io_queues + dev->nr_poll_queues + 1) * 256;
}

/*
 * The counters of @dev as a RMBD_CLIENT_ATTR_STATS nest: the totals, then
 * each hardware queue's if @what says so.  Under rmbd_c_mutex: while
 * @dev->connected, its tag set is there.
 */
static int rmbd_c_fill_stats(struct sk_buff *skb, struct rmbd_c_dev *dev,
			     int what)
{
	unsigned int i, nr = dev->nr_io_queues + dev->nr_poll_queues;
	struct rmbd_c_counts total = {}, c;
	struct nlattr *nest, *qnest;
	u32 reconnects = 0;

	lockdep_assert_held(&rmbd_c_mutex);
	if (what == RMBD_C_STATS_NONE || !dev->connected)
		return 0;
	rmbd_c_count_all_in_flight(dev);
	for (i = 0; i < nr; i++)
		rmbd_c_read_counts(dev, i, &total);
	for (i = 0; i < dev->nr_legs; i++)
		reconnects += dev->legs[i]->nr_reconnects;
	nest = nla_nest_start(skb, RMBD_CLIENT_ATTR_STATS);
	if (!nest)
		return -EMSGSIZE;
	if (rmbd_c_put_counts(skb, &total) ||
	    nla_put_u32(skb, RMBD_STATS_ATTR_RECONNECTS, reconnects))
		goto cancel;
	for (i = 0; what == RMBD_C_STATS_QUEUES && i < nr; i++) {
		memset(&c, 0, sizeof(c));
		rmbd_c_read_counts(dev, i, &c);
		qnest = nla_nest_start(skb, RMBD_STATS_ATTR_QUEUE);
		if (!qnest ||
		    nla_put_u32(skb, RMBD_STATS_ATTR_INDEX, i) ||
		    (i >= dev->nr_io_queues &&
		     nla_put_flag(skb, RMBD_STATS_ATTR_POLL)) ||
		    rmbd_c_put_counts(skb, &c))
			goto cancel;
		nla_nest_end(skb, qnest);
	}
	nla_nest_end(skb, nest);
	return 0;

cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* The attributes of @dev, with @event in a notification */
static int rmbd_c_put_dev(struct sk_buff *skb, struct rmbd_c_dev *dev,
			  u8 event)
{
	/* The first leg's session, for now */
	struct rmbd_c_leg *leg = dev->legs[0];
	char name[DISK_NAME_LEN];

	snprintf(name, sizeof(name), "rmbd%d", dev->index);
	if (nla_put_u32(skb, RMBD_CLIENT_ATTR_DEV_INDEX, dev->index) ||
	    nla_put_string(skb, RMBD_CLIENT_ATTR_DEV_NAME, name) ||
	    nla_put_u64_64bit(skb, RMBD_CLIENT_ATTR_DEV_SIZE,
			      dev->size ?: leg->size, RMBD_CLIENT_ATTR_PAD) ||
	    nla_put_u8(skb, RMBD_CLIENT_ATTR_LAYOUT, dev->layout) ||
	    nla_put_u8(skb, RMBD_CLIENT_ATTR_COPIES, dev->copies) ||
	    nla_put_u64_64bit(skb, RMBD_CLIENT_ATTR_EXTENT_SIZE,
			      dev->size ? 1ULL << dev->extent_shift : 0,
			      RMBD_CLIENT_ATTR_PAD) ||
	    nla_put_u8(skb, RMBD_CLIENT_ATTR_DEV_STATE,
		       rmbd_c_dev_uapi_state(dev)) ||
	    nla_put_string(skb, RMBD_CLIENT_ATTR_ADDR, leg->addr_str) ||
	    nla_put_u16(skb, RMBD_CLIENT_ATTR_PORT, leg->port) ||
	    nla_put_string(skb, RMBD_CLIENT_ATTR_EXPORT_NAME,
			   leg->export_name) ||
	    nla_put_u32(skb, RMBD_CLIENT_ATTR_NR_IO_QUEUES,
			dev->nr_io_queues) ||
	    nla_put_u32(skb, RMBD_CLIENT_ATTR_NR_POLL_QUEUES,
			dev->nr_poll_queues) ||
	    nla_put_u32(skb, RMBD_CLIENT_ATTR_QUEUE_DEPTH, dev->queue_depth) ||
	    nla_put_u64_64bit(skb, RMBD_CLIENT_ATTR_SLAB_SIZE, leg->slab_size,
			      RMBD_CLIENT_ATTR_PAD) ||
	    nla_put_u32(skb, RMBD_CLIENT_ATTR_RECONNECT_DELAY,
			dev->reconnect_delay) ||
	    nla_put_u32(skb, RMBD_CLIENT_ATTR_LOSS_TIMEOUT, dev->loss_timeout) ||
	    nla_put_u32(skb, RMBD_CLIENT_ATTR_NR_RECONNECTS,
			leg->nr_reconnects) ||
	    (leg->shared && nla_put_flag(skb, RMBD_CLIENT_ATTR_SHARED)) ||
	    nla_put_string(skb, RMBD_CLIENT_ATTR_HOST, dev->host) ||
	    (leg->auth_tfm && nla_put_flag(skb, RMBD_CLIENT_ATTR_AUTH)) ||
	    (dev->read_only && nla_put_flag(skb, RMBD_CLIENT_ATTR_READ_ONLY)) ||
	    rmbd_c_fill_legs(skb, dev) || rmbd_c_fill_spares(skb, dev) ||
	    (event && nla_put_u8(skb, RMBD_CLIENT_ATTR_EVENT, event)))
		return -EMSGSIZE;
	return 0;
}

static int rmbd_c_fill_dev(struct sk_buff *skb, struct rmbd_c_dev *dev,
			   u32 portid, u32 seq, int flags, u8 cmd, u8 event)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &rmbd_c_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	if (rmbd_c_put_dev(skb, dev, event)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* DEV_GET's message: @dev and as much of its counters as @stats says */
static int rmbd_c_fill_dev_get(struct sk_buff *skb, struct rmbd_c_dev *dev,
			       u32 portid, u32 seq, int flags, int stats)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &rmbd_c_family, flags,
			  RMBD_CLIENT_CMD_DEV_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (rmbd_c_put_dev(skb, dev, 0) ||
	    rmbd_c_fill_stats(skb, dev, stats)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Fill and send a reply from rmbd_reply_alloc(); consumes @skb. */
static int rmbd_c_reply(struct genl_info *info, struct sk_buff *skb,
			struct rmbd_c_dev *dev)
{
	int ret;

	ret = rmbd_c_fill_dev(skb, dev, info->snd_portid, info->snd_seq, 0,
			      info->genlhdr->cmd, 0);
	if (ret) {
		nlmsg_free(skb);
		return ret;
	}
	return genlmsg_reply(skb, info);
}

/*
 * Reply with device @index, which a connect or replace just made or
 * changed; nothing if a disconnect raced with us.
 */
static void rmbd_c_reply_index(struct genl_info *info, struct sk_buff *reply,
			       int index)
{
	struct rmbd_c_dev *dev;

	mutex_lock(&rmbd_c_mutex);
	dev = rmbd_c_dev_find(index);
	if (dev)
		rmbd_c_reply(info, reply, dev);
	else
		nlmsg_free(reply);
	mutex_unlock(&rmbd_c_mutex);
}

/* The message before an -EBUSY's error: who holds the export */
static void rmbd_c_reply_holder(struct genl_info *info, struct sk_buff *skb,
				const char *holder)
{
	void *hdr;

	hdr = genlmsg_put_reply(skb, info, &rmbd_c_family, 0,
				info->genlhdr->cmd);
	if (!hdr || nla_put_string(skb, RMBD_CLIENT_ATTR_HOLDER, holder)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_reply(skb, info);
}

/*
 * Where a leg goes: ADDR, [PORT] and EXPORT_NAME, attributes @addr,
 * @port and @export of @tb, the attributes of @nest (NULL: the top level).
 */
static int rmbd_c_parse_leg(struct genl_info *info, const struct nlattr *nest,
			    struct nlattr **tb, int addr, int port, int export,
			    struct rmbd_c_leg_args *la)
{
	if (NL_REQ_ATTR_CHECK(info->extack, nest, tb, addr) ||
	    NL_REQ_ATTR_CHECK(info->extack, nest, tb, export)) {
		NL_SET_ERR_MSG(info->extack,
			       "a leg needs the target's address and the export's name");
		return -EINVAL;
	}
	la->nla = nest;
	la->addr = nla_data(tb[addr]);
	la->export_name = nla_data(tb[export]);
	if (!rmbd_valid_name(la->export_name)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[export],
				    "export name must be 1-63 characters of A-Z a-z 0-9 . _ - and not start with a dot");
		return -EINVAL;
	}
	la->port = tb[port] ? nla_get_u16(tb[port]) : RMBD_DEFAULT_PORT;
	return 0;
}

/*
 * The legs of nest @list (RMBD_CLIENT_ATTR_LEGS or _SPARES), validated by
 * the policy, into @la: *@nr of them, at most @max.
 */
static int rmbd_c_parse_list(struct genl_info *info, const struct nlattr *list,
			     struct rmbd_c_leg_args *la, unsigned int *nr,
			     unsigned int max)
{
	struct nlattr *tb[RMBD_LEG_ATTR_MAX + 1];
	struct nlattr *nla;
	int rem, ret;

	nla_for_each_nested(nla, list, rem) {
		if (nla_type(nla) != RMBD_CLIENT_ATTR_LEG) {
			NL_SET_ERR_MSG_ATTR(info->extack, nla,
					    "the legs hold legs only");
			return -EINVAL;
		}
		if (*nr == max) {
			if (max == RMBD_MAX_LEGS)
				NL_SET_ERR_MSG_ATTR(info->extack, nla,
						    "a device has at most " __stringify(RMBD_MAX_LEGS) " legs");
			else
				NL_SET_ERR_MSG_ATTR(info->extack, nla,
						    "a device has at most " __stringify(RMBD_MAX_SPARES) " spares");
			return -EINVAL;
		}
		ret = nla_parse_nested(tb, RMBD_LEG_ATTR_MAX, nla,
				       rmbd_c_leg_policy, info->extack);
		if (!ret)
			ret = rmbd_c_parse_leg(info, nla, tb,
					       RMBD_LEG_ATTR_ADDR,
					       RMBD_LEG_ATTR_PORT,
					       RMBD_LEG_ATTR_EXPORT_NAME,
					       &la[*nr]);
		if (ret)
			return ret;
		(*nr)++;
	}
	return 0;
}

/* The legs of RMBD_CLIENT_ATTR_LEGS, and the spares after them. */
static int rmbd_c_parse_legs(struct genl_info *info,
			     struct rmbd_c_connect_args *args)
{
	struct nlattr **attrs = info->attrs;
	int ret;

	if (attrs[RMBD_CLIENT_ATTR_ADDR] || attrs[RMBD_CLIENT_ATTR_PORT] ||
	    attrs[RMBD_CLIENT_ATTR_EXPORT_NAME]) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[RMBD_CLIENT_ATTR_LEGS],
				    "give the legs, or one address and export, not both");
		return -EINVAL;
	}
	ret = rmbd_c_parse_list(info, attrs[RMBD_CLIENT_ATTR_LEGS], args->legs,
				&args->nr_legs, RMBD_MAX_LEGS);
	if (ret)
		return ret;
	if (!args->nr_legs) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[RMBD_CLIENT_ATTR_LEGS],
				    "no legs");
		return -EINVAL;
	}
	if (!attrs[RMBD_CLIENT_ATTR_SPARES])
		return 0;
	return rmbd_c_parse_list(info, attrs[RMBD_CLIENT_ATTR_SPARES],
				 args->legs + args->nr_legs, &args->nr_spares,
				 RMBD_MAX_SPARES);
}

static int rmbd_c_connect(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct rmbd_c_connect_args args = { };
	const char *why = NULL;
	struct sk_buff *reply;
	int index, ret;

	ret = attrs[RMBD_CLIENT_ATTR_LEGS] ? rmbd_c_parse_legs(info, &args) :
	      rmbd_c_parse_leg(info, NULL, attrs, RMBD_CLIENT_ATTR_ADDR,
			       RMBD_CLIENT_ATTR_PORT,
			       RMBD_CLIENT_ATTR_EXPORT_NAME, &args.legs[0]);
	if (ret)
		return ret;
	if (!attrs[RMBD_CLIENT_ATTR_LEGS])
		args.nr_legs = 1;
	if (attrs[RMBD_CLIENT_ATTR_SPARES] && args.nr_legs < 2) {
		NL_SET_ERR_MSG_ATTR(info->extack, attrs[RMBD_CLIENT_ATTR_SPARES],
				    "spares need a device of two legs or more: a spare is rebuilt from another leg");
		return -EINVAL;
	}
	args.layout = attrs[RMBD_CLIENT_ATTR_LAYOUT] ?
		      nla_get_u8(attrs[RMBD_CLIENT_ATTR_LAYOUT]) :
		      RMBD_LAYOUT_MIRROR;
	if (args.layout == RMBD_LAYOUT_POOL) {
		if (args.nr_legs < 2) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_CLIENT_ATTR_LAYOUT],
					    "a pool needs two legs or more");
			return -EINVAL;
		}
		args.copies = attrs[RMBD_CLIENT_ATTR_COPIES] ?
			      nla_get_u8(attrs[RMBD_CLIENT_ATTR_COPIES]) : 2;
		if (args.copies > args.nr_legs) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_CLIENT_ATTR_COPIES],
					    "more copies than legs");
			return -EINVAL;
		}
		if (args.copies < 2 && attrs[RMBD_CLIENT_ATTR_SPARES]) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_CLIENT_ATTR_SPARES],
					    "spares need copies 2 or more: with one copy, a lost leg's data is gone");
			return -EINVAL;
		}
	} else {
		if (attrs[RMBD_CLIENT_ATTR_COPIES] &&
		    nla_get_u8(attrs[RMBD_CLIENT_ATTR_COPIES]) != args.nr_legs) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_CLIENT_ATTR_COPIES],
					    "a mirror has as many copies as legs");
			return -EINVAL;
		}
		args.copies = args.nr_legs;
	}
	args.nr_io_queues = attrs[RMBD_CLIENT_ATTR_NR_IO_QUEUES] ?
			    nla_get_u32(attrs[RMBD_CLIENT_ATTR_NR_IO_QUEUES]) :
			    num_online_cpus();
	/*
	 * blk-mq has no use for more queues of a kind than CPUs, and the
	 * target takes RMBD_MAX_IO_QUEUES_WIRE: the default, one per CPU,
	 * stops there on a machine with more.
	 */
	args.nr_io_queues = min3(args.nr_io_queues, nr_cpu_ids,
				 (unsigned int)RMBD_MAX_IO_QUEUES);
	if (attrs[RMBD_CLIENT_ATTR_NR_POLL_QUEUES])
		args.nr_poll_queues = min_t(u32, nr_cpu_ids,
					    nla_get_u32(attrs[RMBD_CLIENT_ATTR_NR_POLL_QUEUES]));
	if (args.nr_io_queues + args.nr_poll_queues > RMBD_MAX_IO_QUEUES) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    attrs[RMBD_CLIENT_ATTR_NR_POLL_QUEUES],
				    "I/O and poll queues together are at most 256");
		return -EINVAL;
	}
	args.queue_depth = attrs[RMBD_CLIENT_ATTR_QUEUE_DEPTH] ?
			   nla_get_u32(attrs[RMBD_CLIENT_ATTR_QUEUE_DEPTH]) :
			   RMBD_DEFAULT_QUEUE_DEPTH;
	args.reconnect_delay = attrs[RMBD_CLIENT_ATTR_RECONNECT_DELAY] ?
		nla_get_u32(attrs[RMBD_CLIENT_ATTR_RECONNECT_DELAY]) :
		RMBD_DEFAULT_RECONNECT_DELAY;
	args.loss_timeout = attrs[RMBD_CLIENT_ATTR_LOSS_TIMEOUT] ?
		nla_get_u32(attrs[RMBD_CLIENT_ATTR_LOSS_TIMEOUT]) :
		RMBD_DEFAULT_LOSS_TIMEOUT;
	args.shared = nla_get_flag(attrs[RMBD_CLIENT_ATTR_SHARED]);
	args.read_only = nla_get_flag(attrs[RMBD_CLIENT_ATTR_READ_ONLY]);
	if (attrs[RMBD_CLIENT_ATTR_SECRET]) {
		if (nla_len(attrs[RMBD_CLIENT_ATTR_SECRET]) < RMBD_SECRET_MIN) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_CLIENT_ATTR_SECRET],
					    "a secret has 32 to 64 bytes");
			return -EINVAL;
		}
		if (!attrs[RMBD_CLIENT_ATTR_HOST]) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_CLIENT_ATTR_SECRET],
					    "a secret belongs to a host identity: give the host");
			return -EINVAL;
		}
		args.secret = nla_data(attrs[RMBD_CLIENT_ATTR_SECRET]);
		args.secret_len = nla_len(attrs[RMBD_CLIENT_ATTR_SECRET]);
	}
	args.host = "";
	if (attrs[RMBD_CLIENT_ATTR_HOST]) {
		args.host = nla_data(attrs[RMBD_CLIENT_ATTR_HOST]);
		if (!rmbd_valid_host(args.host)) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    attrs[RMBD_CLIENT_ATTR_HOST],
					    "host identity must be 1-127 characters of A-Z a-z 0-9 . _ : - and not start with a dot or a dash");
			return -EINVAL;
		}
	}

	reply = rmbd_reply_alloc(info);
	if (!reply)
		return -ENOMEM;
	ret = rmbd_c_dev_connect(&args, &index, &why);
	if (ret) {
		/*
		 * The error points at the leg that failed, if the legs were
		 * given; an export held by another host names the holder in
		 * a message before it.
		 */
		if (ret == -EBUSY && args.holder[0])
			rmbd_c_reply_holder(info, reply, args.holder);
		else
			nlmsg_free(reply);
		rmbd_set_err(info->extack, args.failed_leg >= 0 ?
			     args.legs[args.failed_leg].nla : NULL, why);
		return ret;
	}
	rmbd_c_reply_index(info, reply, index);
	return 0;
}

static int rmbd_c_disconnect(struct sk_buff *skb, struct genl_info *info)
{
	const char *why = NULL;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_CLIENT_ATTR_DEV_INDEX))
		return -EINVAL;
	ret = rmbd_c_dev_disconnect(nla_get_u32(info->attrs[RMBD_CLIENT_ATTR_DEV_INDEX]),
				    nla_get_flag(info->attrs[RMBD_CLIENT_ATTR_FORCE]),
				    &why);
	rmbd_set_err(info->extack, info->attrs[RMBD_CLIENT_ATTR_DEV_INDEX],
		     why);
	return ret;
}

static int rmbd_c_replace(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct rmbd_c_leg_args la = { };
	const char *why = NULL;
	struct sk_buff *reply;
	int index, ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_CLIENT_ATTR_DEV_INDEX) ||
	    GENL_REQ_ATTR_CHECK(info, RMBD_CLIENT_ATTR_LEG_INDEX))
		return -EINVAL;
	ret = rmbd_c_parse_leg(info, NULL, attrs, RMBD_CLIENT_ATTR_ADDR,
			       RMBD_CLIENT_ATTR_PORT,
			       RMBD_CLIENT_ATTR_EXPORT_NAME, &la);
	if (ret)
		return ret;
	index = nla_get_u32(attrs[RMBD_CLIENT_ATTR_DEV_INDEX]);
	reply = rmbd_reply_alloc(info);
	if (!reply)
		return -ENOMEM;
	ret = rmbd_c_dev_replace(index,
				 nla_get_u32(attrs[RMBD_CLIENT_ATTR_LEG_INDEX]),
				 &la, NULL, NULL, &why);
	if (ret) {
		nlmsg_free(reply);
		rmbd_set_err(info->extack, NULL, why);
		return ret;
	}
	rmbd_c_reply_index(info, reply, index);
	return 0;
}

static int rmbd_c_get(struct sk_buff *skb, struct genl_info *info)
{
	bool stats = info->attrs[RMBD_CLIENT_ATTR_GET_STATS];
	u32 index;
	struct sk_buff *reply;
	struct rmbd_c_dev *dev;
	size_t size = 0;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, RMBD_CLIENT_ATTR_DEV_INDEX))
		return -EINVAL;
	index = nla_get_u32(info->attrs[RMBD_CLIENT_ATTR_DEV_INDEX]);
	/*
	 * The reply is allocated without rmbd_c_mutex, which recovery takes:
	 * the allocation may wait for reclaim, which may write to a device
	 * that recovers.  Its size, with each hardware queue's counters,
	 * comes from a first look.
	 */
	if (stats) {
		mutex_lock(&rmbd_c_mutex);
		dev = rmbd_c_dev_find(index);
		if (dev)
			size = rmbd_c_stats_size(dev);
		mutex_unlock(&rmbd_c_mutex);
	}
	reply = genlmsg_new(NLMSG_DEFAULT_SIZE + size, GFP_KERNEL);
	if (!reply) {
		NL_SET_ERR_MSG(info->extack, "cannot allocate the reply");
		return -ENOMEM;
	}
	mutex_lock(&rmbd_c_mutex);
	dev = rmbd_c_dev_find(index);
	if (!dev) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[RMBD_CLIENT_ATTR_DEV_INDEX],
				    "no such device");
		ret = -ENODEV;
	} else {
		/* -EMSGSIZE if another device took the index meanwhile */
		ret = rmbd_c_fill_dev_get(reply, dev, info->snd_portid,
					  info->snd_seq, 0,
					  stats ? RMBD_C_STATS_QUEUES :
					  RMBD_C_STATS_NONE);
	}
	mutex_unlock(&rmbd_c_mutex);
	if (ret) {
		nlmsg_free(reply);
		return ret;
	}
	return genlmsg_reply(reply, info);
}

/* Every device; with GET_STATS, the totals of each one's counters. */
static int rmbd_c_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	int stats = genl_dumpit_info(cb)->attrs[RMBD_CLIENT_ATTR_GET_STATS] ?
		    RMBD_C_STATS_TOTAL : RMBD_C_STATS_NONE;
	struct rmbd_c_dev *dev;
	long idx = 0, start = cb->args[0];

	mutex_lock(&rmbd_c_mutex);
	list_for_each_entry(dev, &rmbd_c_devs, entry) {
		if (idx++ < start)
			continue;
		if (rmbd_c_fill_dev_get(skb, dev, NETLINK_CB(cb->skb).portid,
					cb->nlh->nlmsg_seq, NLM_F_MULTI,
					stats)) {
			idx--;
			break;
		}
	}
	mutex_unlock(&rmbd_c_mutex);
	cb->args[0] = idx;
	return skb->len;
}

static const struct genl_ops rmbd_c_ops[] = {
	{
		.cmd	= RMBD_CLIENT_CMD_DEV_CONNECT,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_c_connect,
	},
	{
		.cmd	= RMBD_CLIENT_CMD_DEV_DISCONNECT,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_c_disconnect,
	},
	{
		.cmd	= RMBD_CLIENT_CMD_DEV_GET,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_c_get,
		.dumpit	= rmbd_c_dump,
	},
	{
		.cmd	= RMBD_CLIENT_CMD_DEV_REPLACE,
		.flags	= GENL_ADMIN_PERM,
		.doit	= rmbd_c_replace,
	},
};

static const struct genl_multicast_group rmbd_c_mcgrps[] = {
	/* Events name exports, addresses and devices: admins only. */
	{ .name = RMBD_CLIENT_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_NET_ADMIN, },
};

static struct genl_family rmbd_c_family __ro_after_init = {
	.name		= RMBD_CLIENT_GENL_NAME,
	.version	= RMBD_CLIENT_GENL_VERSION,
	.maxattr	= RMBD_CLIENT_ATTR_MAX,
	.policy		= rmbd_c_policy,
	.module		= THIS_MODULE,
	.ops		= rmbd_c_ops,
	.n_ops		= ARRAY_SIZE(rmbd_c_ops),
	.mcgrps		= rmbd_c_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(rmbd_c_mcgrps),
	/* resv_start_op 0: strict header and attribute checks everywhere. */
	/* A connect may take seconds; others must not wait behind it. */
	.parallel_ops	= true,
};

MODULE_ALIAS_GENL_FAMILY(RMBD_CLIENT_GENL_NAME);

/* Events stop before the family, and its group ids, go away. */
static DECLARE_RWSEM(rmbd_c_events_sem);
static bool rmbd_c_events_on;

/**
 * rmbd_c_notify_progress() - announce @event of @dev to the events group
 * @dev: the device
 * @event: enum rmbd_dev_event
 *
 * Called from the recovery paths, which must not wait for memory: an
 * event that cannot be allocated at once is dropped.  Takes rmbd_c_mutex.
 * For news of a change that rmbd_c_notify() announced already (how far a
 * resync is): no uevent.
 */
void rmbd_c_notify_progress(struct rmbd_c_dev *dev, u8 event)
{
	struct sk_buff *skb;
	int ret;

	down_read(&rmbd_c_events_sem);
	if (!rmbd_c_events_on ||
	    !genl_has_listeners(&rmbd_c_family, &init_net, 0))
		goto out;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_NOWAIT | __GFP_NOWARN);
	if (!skb)
		goto out;
	mutex_lock(&rmbd_c_mutex);
	ret = rmbd_c_fill_dev(skb, dev, 0, 0, 0, RMBD_CLIENT_CMD_DEV_EVENT,
			      event);
	mutex_unlock(&rmbd_c_mutex);
	if (ret)
		nlmsg_free(skb);
	else
		genlmsg_multicast(&rmbd_c_family, skb, 0, 0, GFP_NOWAIT);
out:
	up_read(&rmbd_c_events_sem);
}

/**
 * rmbd_c_notify() - announce @event of @dev, a change of its state or of
 * a leg's, to the events group and to udev
 * @dev: the device
 * @event: enum rmbd_dev_event
 *
 * As rmbd_c_notify_progress(), plus a change uevent of the disk.
 */
void rmbd_c_notify(struct rmbd_c_dev *dev, u8 event)
{
	rmbd_c_uevent(dev, event);
	rmbd_c_notify_progress(dev, event);
}

int rmbd_c_netlink_init(void)
{
	int ret = genl_register_family(&rmbd_c_family);

	if (!ret)
		rmbd_c_events_on = true;
	return ret;
}

void rmbd_c_netlink_exit(void)
{
	down_write(&rmbd_c_events_sem);
	rmbd_c_events_on = false;
	up_write(&rmbd_c_events_sem);
	genl_unregister_family(&rmbd_c_family);
}
