// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TAP test of rmbd_parse_size(), rmbd_parse_dev(), rmbd_dev_state_name(),
 * the names of events, the device attributes librmbd reads from and writes
 * to netlink messages, and the parsing and receiving of events.  librmbd.c
 * is included whole, for its static functions rmbd_parse_dev_info(),
 * rmbd_put_connect_opts(), rmbd_parse_export(), rmbd_put_export_opts(),
 * rmbd_parse_event() and its context, and rmbd_valid_cb() with
 * rmbd_walk_session() (the replies of rmbd_session_list()); the messages
 * are built in memory, and events come through a socket pair, no kernel
 * needed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "librmbd.c"

struct size_case {
	const char *in;
	int ret;
	uint64_t bytes;
};

static const struct size_case size_cases[] = {
	{ "0", 0, 0 },
	{ "4096", 0, 4096 },
	{ "007", 0, 7 },
	{ "64K", 0, 65536 },
	{ "64k", 0, 65536 },
	{ "512M", 0, 536870912ULL },
	{ "1G", 0, 1073741824ULL },
	{ "1GiB", 0, 1073741824ULL },
	{ "3MiB", 0, 3145728ULL },
	{ "16gib", 0, 17179869184ULL },
	{ "16GIB", 0, 17179869184ULL },
	{ "16Gib", 0, 17179869184ULL },
	{ "16g", 0, 17179869184ULL },
	{ "1kib", 0, 1024 },
	{ "1mib", 0, 1048576 },
	{ "1tib", 0, 1099511627776ULL },
	{ "1pib", 0, 1125899906842624ULL },
	{ "1PiB", 0, 1125899906842624ULL },
	{ "1eib", 0, 1152921504606846976ULL },
	{ "15EiB", 0, 17293822569102704640ULL },
	{ "2T", 0, 2199023255552ULL },
	{ "1P", 0, 1125899906842624ULL },
	{ "15E", 0, 17293822569102704640ULL },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16E", -ERANGE, 0 },
	{ "16eib", -ERANGE, 0 },
	{ "16384P", -ERANGE, 0 },
	{ "99999999999E", -ERANGE, 0 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "17179869184G", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "K", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "-1G", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "1G ", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1X", -EINVAL, 0 },
	{ "1B", -EINVAL, 0 },
	{ "1GB", -EINVAL, 0 },
	{ "1Gi", -EINVAL, 0 },
	{ "1gi", -EINVAL, 0 },
	{ "1iB", -EINVAL, 0 },
	{ "1Gb", -EINVAL, 0 },
	{ "1GiBs", -EINVAL, 0 },
	{ "1GiBB", -EINVAL, 0 },
	{ "1KK", -EINVAL, 0 },
	{ "1G1", -EINVAL, 0 },
	{ "abc", -EINVAL, 0 },
};

struct dev_case {
	const char *in;
	int ret;
	uint32_t index;
};

static const struct dev_case dev_cases[] = {
	{ "0", 0, 0 },
	{ "3", 0, 3 },
	{ "rmbd3", 0, 3 },
	{ "rmbd0", 0, 0 },
	{ "rmbd42", 0, 42 },
	{ "/dev/rmbd3", 0, 3 },
	{ "/dev/rmbd17", 0, 17 },
	{ "4294967295", 0, UINT32_MAX },
	{ "rmbd4294967295", 0, UINT32_MAX },
	{ "4294967296", -ERANGE, 0 },
	{ "rmbd99999999999", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "rmbd", -EINVAL, 0 },
	{ "/dev/rmbd", -EINVAL, 0 },
	{ "/dev/3", -EINVAL, 0 },
	{ "/dev/sda", -EINVAL, 0 },
	{ "rmbd03", -EINVAL, 0 },
	{ "03", -EINVAL, 0 },
	{ "rmbd-1", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ "rmbd3p1", -EINVAL, 0 },
	{ "rmbd 3", -EINVAL, 0 },
	{ "nbd0", -EINVAL, 0 },
	{ "rmbdx", -EINVAL, 0 },
	{ "3 ", -EINVAL, 0 },
};

struct state_case {
	uint8_t state;
	const char *name;
};

static const struct state_case state_cases[] = {
	{ RMBD_DEV_STATE_CONNECTING, "connecting" },
	{ RMBD_DEV_STATE_LIVE, "live" },
	{ RMBD_DEV_STATE_FAILED, "failed" },
	{ RMBD_DEV_STATE_DELETING, "deleting" },
	{ RMBD_DEV_STATE_RECONNECTING, "reconnecting" },
	{ 5, "unknown" },
	{ 255, "unknown" },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static size_t n, failed;

static void check(bool ok, const char *desc)
{
	failed += !ok;
	printf("%sok %zu - %s\n", ok ? "" : "not ", ++n, desc);
}

/* A DEV_GET reply as the kernel sends it; old: without reconnect. */
static struct nl_msg *dev_reply(bool old)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 42, 0, 0,
				 RMBD_CLIENT_CMD_DEV_GET,
				 RMBD_CLIENT_GENL_VERSION) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_DEV_INDEX, 6) ||
	    nla_put_string(msg, RMBD_CLIENT_ATTR_DEV_NAME, "rmbd6") ||
	    nla_put_u8(msg, RMBD_CLIENT_ATTR_DEV_STATE,
		       old ? RMBD_DEV_STATE_FAILED :
			     RMBD_DEV_STATE_RECONNECTING) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_IO_QUEUES, 4) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_POLL_QUEUES, 1) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_QUEUE_DEPTH, 128))
		goto fail;
	if (!old &&
	    (nla_put_u32(msg, RMBD_CLIENT_ATTR_RECONNECT_DELAY, 5) ||
	     nla_put_u32(msg, RMBD_CLIENT_ATTR_LOSS_TIMEOUT, 300) ||
	     nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_RECONNECTS, 3) ||
	     nla_put_flag(msg, RMBD_CLIENT_ATTR_SHARED) ||
	     nla_put_string(msg, RMBD_CLIENT_ATTR_HOST, "rmbd:uuid:0a") ||
	     nla_put_flag(msg, RMBD_CLIENT_ATTR_READ_ONLY)))
		goto fail;
	return msg;
fail:
	nlmsg_free(msg);
	return NULL;
}

static int parse_msg(struct nl_msg *msg, struct nlattr **tb)
{
	return genlmsg_parse(nlmsg_hdr(msg), 0, tb, RMBD_CLIENT_ATTR_MAX,
			     NULL);
}

/*
 * The offsets DEV_CONNECT's legs get, which a refusal's ext ack points
 * at: each the offset of its leg's nest, in order.
 */
static void test_leg_offsets(void)
{
	static const struct rmbd_leg_opts legs[3] = {
		{ .addr = "10.0.0.1", .export_name = "a" },
		{ .addr = "10.0.0.2", .port = 4421, .export_name = "b" },
		{ .addr = "fe80::1%eth0", .export_name = "c" },
	};
	const struct rmbd_connect_opts o = {
		.legs = legs, .nr_legs = 3, .layout = RMBD_LAYOUT_MIRROR,
	};
	struct nlattr *tb[RMBD_CLIENT_ATTR_MAX + 1], *a;
	struct nl_msg *msg = nlmsg_alloc();
	int64_t offs[RMBD_MAX_LEGS] = { -1, -1, -1, -1 };
	unsigned int n = 0;
	bool ok = false;
	int rem;

	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 42, 0, 0,
				 RMBD_CLIENT_CMD_DEV_CONNECT,
				 RMBD_CLIENT_GENL_VERSION) ||
	    rmbd_put_connect_opts(msg, &o, offs) || parse_msg(msg, tb) ||
	    !tb[RMBD_CLIENT_ATTR_LEGS])
		goto out;
	ok = true;
	nla_for_each_nested(a, tb[RMBD_CLIENT_ATTR_LEGS], rem) {
		ok &= n < 3 && nla_type(a) == RMBD_CLIENT_ATTR_LEG &&
		      (a->nla_type & NLA_F_NESTED) &&
		      offs[n] == (char *)a - (char *)nlmsg_hdr(msg);
		n++;
	}
	ok &= n == 3 && offs[3] == -1;
out:
	check(ok, "connect legs: each leg a nest with NLA_F_NESTED, its offset recorded for the ext ack");
	nlmsg_free(msg);
}

/* An export as the target fills it: hosts nested, any_host a flag. */
static void test_export_info(void)
{
	struct nlattr *tb[RMBD_TARGET_ATTR_MAX + 1];
	struct nl_msg *msg = nlmsg_alloc();
	struct rmbd_export_info e;
	struct nlattr *nest;
	bool ok = false;

	memset(&e, 0xa5, sizeof(e));
	if (msg && genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 43, 0, 0,
			       RMBD_TARGET_CMD_EXPORT_GET, 1) &&
	    !nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, "foo") &&
	    (nest = nla_nest_start(msg, RMBD_TARGET_ATTR_EXPORT_HOSTS)) &&
	    !nla_put_string(msg, RMBD_TARGET_ATTR_HOST, "h1") &&
	    !nla_put_string(msg, RMBD_TARGET_ATTR_HOST, "nqn.x:h2") &&
	    !nla_put_u32(msg, RMBD_TARGET_ATTR_EXPORT_SESSIONS, 7) &&
	    !nla_nest_end(msg, nest) &&
	    !genlmsg_parse(nlmsg_hdr(msg), 0, tb, RMBD_TARGET_ATTR_MAX, NULL))
		ok = !rmbd_parse_export(tb, &e);
	/* An attribute of another type in the nest is skipped. */
	check(ok && !strcmp(e.name, "foo") && !e.any_host && e.nr_hosts == 2 &&
	      !strcmp(e.hosts[0], "h1") && !strcmp(e.hosts[1], "nqn.x:h2") &&
	      !e.sessions && !e.shared && !e.read_only,
	      "export info: two hosts from the nest, not any_host, shared or read_only");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	ok = false;
	memset(&e, 0xa5, sizeof(e));
	if (msg && genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 43, 0, 0,
			       RMBD_TARGET_CMD_EXPORT_GET, 1) &&
	    !nla_put_flag(msg, RMBD_TARGET_ATTR_EXPORT_ANY_HOST) &&
	    !nla_put_flag(msg, RMBD_TARGET_ATTR_EXPORT_READ_ONLY) &&
	    !genlmsg_parse(nlmsg_hdr(msg), 0, tb, RMBD_TARGET_ATTR_MAX, NULL))
		ok = !rmbd_parse_export(tb, &e);
	check(ok && e.any_host && !e.nr_hosts && !e.shared && e.read_only,
	      "export info: any_host, no hosts, read_only, not shared");
	nlmsg_free(msg);

	msg = nlmsg_alloc();
	ok = false;
	memset(&e, 0xa5, sizeof(e));
	if (msg && genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 43, 0, 0,
			       RMBD_TARGET_CMD_EXPORT_GET, 1) &&
	    !nla_put_flag(msg, RMBD_TARGET_ATTR_EXPORT_SHARED) &&
	    !genlmsg_parse(nlmsg_hdr(msg), 0, tb, RMBD_TARGET_ATTR_MAX, NULL))
		ok = !rmbd_parse_export(tb, &e);
	check(ok && !e.any_host && e.shared && !e.read_only,
	      "export info: shared, not read_only");
	nlmsg_free(msg);
}

/* EXPORT_ADD's flags for shared and read_only: each sent when set. */
static void test_export_opts(void)
{
	unsigned int i;

	for (i = 0; i < 4; i++) {
		struct nlattr *tb[RMBD_TARGET_ATTR_MAX + 1];
		struct nl_msg *msg = nlmsg_alloc();
		struct rmbd_export_opts o = {
			.name		= "foo",
			.size		= 1 << 20,
			.shared		= i & 1,
			.read_only	= i & 2,
		};
		bool ok = false;
		char desc[96];

		if (msg && genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 43, 0, 0,
				       RMBD_TARGET_CMD_EXPORT_ADD, 1) &&
		    !rmbd_put_export_opts(msg, &o) &&
		    !genlmsg_parse(nlmsg_hdr(msg), 0, tb, RMBD_TARGET_ATTR_MAX,
				   NULL))
			ok = !tb[RMBD_TARGET_ATTR_EXPORT_ANY_HOST] &&
			     !tb[RMBD_TARGET_ATTR_EXPORT_SHARED] == !o.shared &&
			     !tb[RMBD_TARGET_ATTR_EXPORT_READ_ONLY] ==
			     !o.read_only;
		snprintf(desc, sizeof(desc),
			 "export opts shared %d read_only %d: flags %s, %s",
			 o.shared, o.read_only, o.shared ? "sent" : "not sent",
			 o.read_only ? "sent" : "not sent");
		check(ok, desc);
		nlmsg_free(msg);
	}
}

static void test_dev_info(bool old)
{
	struct nlattr *tb[RMBD_CLIENT_ATTR_MAX + 1];
	struct rmbd_dev_info d;
	struct nl_msg *msg = dev_reply(old);
	bool ok;

	memset(&d, 0xa5, sizeof(d));
	ok = msg && !parse_msg(msg, tb) && !rmbd_parse_dev_info(tb, &d) &&
	     d.index == 6 && !strcmp(d.name, "rmbd6") &&
	     d.nr_io_queues == 4 && d.nr_poll_queues == 1 &&
	     d.queue_depth == 128;
	if (old)
		check(ok && d.state == RMBD_DEV_STATE_FAILED &&
		      !d.reconnect_delay && !d.loss_timeout &&
		      !d.nr_reconnects && !d.shared && !d.host[0] &&
		      !d.read_only,
		      "dev info of an old kernel: reconnect fields 0, not shared, not read_only");
	else
		check(ok && d.state == RMBD_DEV_STATE_RECONNECTING &&
		      d.reconnect_delay == 5 && d.loss_timeout == 300 &&
		      d.nr_reconnects == 3 && d.shared &&
		      !strcmp(d.host, "rmbd:uuid:0a") && d.read_only,
		      "dev info: reconnecting, delay 5, loss 300, reconnects 3, shared, host, read_only");
	printf("# state %u reconnect_delay %u loss_timeout %u reconnects %u\n",
	       d.state, d.reconnect_delay, d.loss_timeout, d.nr_reconnects);
	nlmsg_free(msg);
}

/*
 * What rmbd_dev_connect() sends for opts; -1: absent, -2: no message.
 * *shared, *read_only: whether the SHARED, READ_ONLY flags were sent.
 */
static void connect_attrs(const struct rmbd_connect_opts *opts,
			  int64_t *delay, int64_t *loss, bool *shared,
			  bool *read_only)
{
	struct nlattr *tb[RMBD_CLIENT_ATTR_MAX + 1];
	struct nl_msg *msg = nlmsg_alloc();
	int64_t offs[RMBD_MAX_LEGS];

	*delay = -2;
	*loss = -2;
	*shared = false;
	*read_only = false;
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 42, 0, 0,
				 RMBD_CLIENT_CMD_DEV_CONNECT,
				 RMBD_CLIENT_GENL_VERSION) ||
	    rmbd_put_connect_opts(msg, opts, offs) || parse_msg(msg, tb))
		goto out;
	*delay = -1;
	*loss = -1;
	if (tb[RMBD_CLIENT_ATTR_RECONNECT_DELAY])
		*delay = nla_get_u32(tb[RMBD_CLIENT_ATTR_RECONNECT_DELAY]);
	if (tb[RMBD_CLIENT_ATTR_LOSS_TIMEOUT])
		*loss = nla_get_u32(tb[RMBD_CLIENT_ATTR_LOSS_TIMEOUT]);
	*shared = tb[RMBD_CLIENT_ATTR_SHARED] != NULL;
	*read_only = tb[RMBD_CLIENT_ATTR_READ_ONLY] != NULL;
out:
	nlmsg_free(msg);
}

struct connect_case {
	uint32_t reconnect_delay;
	uint32_t loss_timeout;
	bool has_loss_timeout;
	int64_t want_delay;	/* -1: not sent */
	int64_t want_loss;
};

static const struct connect_case connect_cases[] = {
	{ 0, 0, false, -1, -1 },
	{ 0, 30, false, -1, -1 },
	{ 1, 0, true, 1, 0 },
	{ 3600, 86400, true, 3600, 86400 },
	{ 10, 60, true, 10, 60 },
};

struct name_case {
	uint8_t value;
	const char *name;
};

static const struct name_case dev_event_cases[] = {
	{ 0, "unknown" },
	{ RMBD_DEV_EVENT_CONNECTED, "connected" },
	{ RMBD_DEV_EVENT_LINK_DOWN, "link-down" },
	{ RMBD_DEV_EVENT_RECONNECTING, "reconnecting" },
	{ RMBD_DEV_EVENT_LIVE, "live" },
	{ RMBD_DEV_EVENT_FAILED, "failed" },
	{ RMBD_DEV_EVENT_DISCONNECTED, "disconnected" },
	{ RMBD_DEV_EVENT_DEGRADED, "degraded" },
	{ RMBD_DEV_EVENT_LEG_BACK, "leg-back" },
	{ RMBD_DEV_EVENT_RESYNC, "resync" },
	{ RMBD_DEV_EVENT_HEALTHY, "healthy" },
	{ RMBD_DEV_EVENT_REPLACED, "replaced" },
	{ 12, "unknown" },
	{ 255, "unknown" },
};

static const struct name_case session_event_cases[] = {
	{ 0, "unknown" },
	{ RMBD_SESSION_EVENT_UP, "up" },
	{ RMBD_SESSION_EVENT_DOWN, "down" },
	{ 3, "unknown" },
};

/* Family ids of the test context. */
#define FAM_CLIENT	42
#define FAM_TARGET	43

static struct nl_msg *msg_start(int family, uint8_t cmd)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (msg && !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0,
				cmd, 1)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/*
 * A device event as rmbd_c_notify() sends it: the DEV_GET attributes, then
 * EVENT unless event is 0.  cmd: DEV_EVENT, or DEV_GET for a reply.
 */
static struct nl_msg *dev_event_msg(uint8_t cmd, uint8_t event)
{
	struct nl_msg *msg = msg_start(FAM_CLIENT, cmd);

	if (!msg ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_DEV_INDEX, 6) ||
	    nla_put_string(msg, RMBD_CLIENT_ATTR_DEV_NAME, "rmbd6") ||
	    nla_put_u64(msg, RMBD_CLIENT_ATTR_DEV_SIZE, 4294967296ULL) ||
	    nla_put_u8(msg, RMBD_CLIENT_ATTR_DEV_STATE,
		       RMBD_DEV_STATE_RECONNECTING) ||
	    nla_put_string(msg, RMBD_CLIENT_ATTR_ADDR, "10.200.0.1") ||
	    nla_put_u16(msg, RMBD_CLIENT_ATTR_PORT, 7470) ||
	    nla_put_string(msg, RMBD_CLIENT_ATTR_EXPORT_NAME, "e") ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_IO_QUEUES, 4) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_POLL_QUEUES, 1) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_QUEUE_DEPTH, 128) ||
	    nla_put_u64(msg, RMBD_CLIENT_ATTR_SLAB_SIZE, 67108864ULL) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_RECONNECT_DELAY, 5) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_LOSS_TIMEOUT, 300) ||
	    nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_RECONNECTS, 3) ||
	    (event && nla_put_u8(msg, RMBD_CLIENT_ATTR_EVENT, event))) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* A session event as rmbd_t_notify_session() sends it; peer may be NULL. */
static struct nl_msg *session_event_msg(uint8_t event, bool with_id,
					const char *peer)
{
	struct nl_msg *msg = msg_start(FAM_TARGET,
				       RMBD_TARGET_CMD_SESSION_EVENT);

	if (!msg ||
	    nla_put_u8(msg, RMBD_TARGET_ATTR_EVENT, event) ||
	    (with_id && nla_put_u64(msg, RMBD_TARGET_ATTR_SESSION_ID,
				    0x3f2a9c0d1b2e4f60ULL)) ||
	    (peer && nla_put_string(msg, RMBD_TARGET_ATTR_SESSION_PEER,
				    peer)) ||
	    nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, "e")) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void event_ctx(struct rmbd_ctx *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->family[RMBD_FAM_CLIENT] = FAM_CLIENT;
	ctx->family[RMBD_FAM_TARGET] = FAM_TARGET;
	ctx->ev_fd = -1;
}

/* rmbd_parse_event() of msg (freed); -1 if msg is NULL. */
static int parse_event(struct nl_msg *msg, struct rmbd_event *ev)
{
	struct rmbd_ctx ctx;
	int ret;

	if (!msg)
		return -1;
	event_ctx(&ctx);
	memset(ev, 0xa5, sizeof(*ev));
	ret = rmbd_parse_event(&ctx, nlmsg_hdr(msg), ev);
	nlmsg_free(msg);
	return ret;
}

static bool dev_event_ok(const struct rmbd_event *ev, uint8_t event)
{
	const struct rmbd_dev_info *d = &ev->dev;

	return ev->family == RMBD_EVENTS_CLIENT && ev->event == event &&
	       d->index == 6 && !strcmp(d->name, "rmbd6") &&
	       d->size == 4294967296ULL &&
	       d->state == RMBD_DEV_STATE_RECONNECTING &&
	       !strcmp(d->addr, "10.200.0.1") && d->port == 7470 &&
	       !strcmp(d->export_name, "e") && d->nr_io_queues == 4 &&
	       d->nr_poll_queues == 1 && d->queue_depth == 128 &&
	       d->slab_size == 67108864ULL && d->reconnect_delay == 5 &&
	       d->loss_timeout == 300 && d->nr_reconnects == 3 &&
	       !ev->session.id && !ev->session.peer[0];
}

static bool session_event_ok(const struct rmbd_event *ev, uint8_t event,
			     const char *peer)
{
	return ev->family == RMBD_EVENTS_TARGET && ev->event == event &&
	       ev->session.id == 0x3f2a9c0d1b2e4f60ULL &&
	       !strcmp(ev->session.peer, peer) &&
	       !strcmp(ev->session.export_name, "e") && !ev->dev.index &&
	       !ev->dev.name[0] && !ev->session.host[0] && !ev->session.up &&
	       !ev->session.auth && !ev->session.read_only;
}

static void test_parse_events(void)
{
	char long_peer[100], want_peer[RMBD_ADDR_MAX + 8];
	struct rmbd_event ev;
	struct nl_msg *msg;
	uint8_t e;
	int ret;

	for (e = RMBD_DEV_EVENT_CONNECTED; e <= RMBD_DEV_EVENT_DISCONNECTED;
	     e++) {
		char desc[64];

		ret = parse_event(dev_event_msg(RMBD_CLIENT_CMD_DEV_EVENT, e),
				  &ev);
		snprintf(desc, sizeof(desc), "dev event %s: device and event",
			 rmbd_dev_event_name(e));
		check(ret == 1 && dev_event_ok(&ev, e), desc);
	}
	ret = parse_event(dev_event_msg(RMBD_CLIENT_CMD_DEV_EVENT, 99), &ev);
	check(ret == 1 && dev_event_ok(&ev, 99),
	      "dev event of an unknown kind comes as it is");
	check(parse_event(dev_event_msg(RMBD_CLIENT_CMD_DEV_EVENT, 0),
			  &ev) == 0, "dev event without EVENT: skipped");
	check(parse_event(dev_event_msg(RMBD_CLIENT_CMD_DEV_GET,
					RMBD_DEV_EVENT_LIVE), &ev) == 0,
	      "DEV_GET message: skipped");

	msg = msg_start(FAM_CLIENT, RMBD_CLIENT_CMD_DEV_EVENT);
	if (msg && (nla_put_u32(msg, RMBD_CLIENT_ATTR_DEV_INDEX, 1) ||
		    nla_put(msg, RMBD_CLIENT_ATTR_EVENT, 0, NULL))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	check(parse_event(msg, &ev) == 0, "dev event, EVENT empty: skipped");

	msg = msg_start(FAM_CLIENT, RMBD_CLIENT_CMD_DEV_EVENT);
	if (msg && (nla_put_u32(msg, RMBD_CLIENT_ATTR_DEV_INDEX, 1) ||
		    nla_put_u8(msg, RMBD_CLIENT_ATTR_EVENT, 1) ||
		    nla_put(msg, RMBD_CLIENT_ATTR_DEV_NAME, 5, "rmbd1"))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	check(parse_event(msg, &ev) == 0,
	      "dev event, name without NUL: skipped");

	msg = msg_start(FAM_CLIENT, RMBD_CLIENT_CMD_DEV_EVENT);
	if (msg && (nla_put_u8(msg, RMBD_CLIENT_ATTR_EVENT, 1) ||
		    nla_put_u32(msg, RMBD_CLIENT_ATTR_DEV_INDEX, 2))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	ret = parse_event(msg, &ev);
	check(ret == 1 && ev.dev.index == 2 && !strcmp(ev.dev.name, "rmbd2") &&
	      !ev.dev.addr[0] && !ev.dev.reconnect_delay,
	      "dev event with index only: name rmbd2, the rest 0");

	ret = parse_event(session_event_msg(RMBD_SESSION_EVENT_UP, true,
					    "10.200.0.1:41234"), &ev);
	check(ret == 1 && session_event_ok(&ev, RMBD_SESSION_EVENT_UP,
					   "10.200.0.1:41234"),
	      "session event up: id, peer, export");
	ret = parse_event(session_event_msg(RMBD_SESSION_EVENT_DOWN, true,
					    "[fd00::2]:41234"), &ev);
	check(ret == 1 && session_event_ok(&ev, RMBD_SESSION_EVENT_DOWN,
					   "[fd00::2]:41234"),
	      "session event down, IPv6 peer");
	memset(long_peer, 'x', sizeof(long_peer) - 1);
	long_peer[sizeof(long_peer) - 1] = '\0';
	memcpy(want_peer, long_peer, sizeof(want_peer) - 1);
	want_peer[sizeof(want_peer) - 1] = '\0';
	ret = parse_event(session_event_msg(RMBD_SESSION_EVENT_UP, true,
					    long_peer), &ev);
	check(ret == 1 && session_event_ok(&ev, RMBD_SESSION_EVENT_UP,
					   want_peer),
	      "session event, peer too long: cut to the buffer");
	ret = parse_event(session_event_msg(RMBD_SESSION_EVENT_UP, true, NULL),
			  &ev);
	check(ret == 1 && session_event_ok(&ev, RMBD_SESSION_EVENT_UP, ""),
	      "session event without peer: empty peer");
	check(parse_event(session_event_msg(RMBD_SESSION_EVENT_UP, false,
					    "10.200.0.1:41234"), &ev) == 0,
	      "session event without id: skipped");

	/* Host, AUTH and READ_ONLY, as rmbd-target adds them. */
	msg = session_event_msg(RMBD_SESSION_EVENT_UP, true, "a:1");
	if (msg && (nla_put_string(msg, RMBD_TARGET_ATTR_SESSION_HOST,
				   "nqn.x:h2") ||
		    nla_put_flag(msg, RMBD_TARGET_ATTR_SESSION_AUTH))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	ret = parse_event(msg, &ev);
	check(ret == 1 && ev.session.id == 0x3f2a9c0d1b2e4f60ULL &&
	      !strcmp(ev.session.host, "nqn.x:h2") && ev.session.auth &&
	      !ev.session.read_only && !ev.session.up,
	      "session event with host and AUTH: host, auth, not read_only");
	msg = session_event_msg(RMBD_SESSION_EVENT_DOWN, true, "a:1");
	if (msg && nla_put_flag(msg, RMBD_TARGET_ATTR_SESSION_READ_ONLY)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	ret = parse_event(msg, &ev);
	check(ret == 1 && ev.event == RMBD_SESSION_EVENT_DOWN &&
	      !ev.session.host[0] && !ev.session.auth &&
	      ev.session.read_only && !ev.session.up,
	      "session event with READ_ONLY: read_only, not auth");
	msg = session_event_msg(RMBD_SESSION_EVENT_UP, false, "a:1");
	if (msg && (nla_put_u32(msg, RMBD_TARGET_ATTR_SESSION_ID, 7) ||
		    nla_put_flag(msg, RMBD_TARGET_ATTR_SESSION_AUTH))) {
		nlmsg_free(msg);
		msg = NULL;
	}
	check(parse_event(msg, &ev) == 0,
	      "session event, id of 4 bytes: skipped");

	msg = msg_start(FAM_TARGET, RMBD_TARGET_CMD_EXPORT_GET);
	if (msg && nla_put_u8(msg, RMBD_TARGET_ATTR_EVENT, 1)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	check(parse_event(msg, &ev) == 0, "EXPORT_GET message: skipped");
	msg = msg_start(44, RMBD_CLIENT_CMD_DEV_EVENT);
	if (msg && nla_put_u8(msg, RMBD_CLIENT_ATTR_EVENT, 1)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	check(parse_event(msg, &ev) == 0, "message of another family: skipped");
	msg = msg_start(NLMSG_ERROR, 0);
	check(parse_event(msg, &ev) == 0, "NLMSG_ERROR: skipped");
}

/*
 * One message of a SESSION_GET dump as rmbd-target sends it; host NULL:
 * none.  flags: SESSION_UP 1, SESSION_AUTH 2, SESSION_READ_ONLY 4.
 */
static struct nl_msg *session_get_msg(uint64_t id, const char *host,
				      unsigned int flags)
{
	struct nl_msg *msg = msg_start(FAM_TARGET,
				       RMBD_TARGET_CMD_SESSION_GET);

	if (!msg ||
	    (id && nla_put_u64(msg, RMBD_TARGET_ATTR_SESSION_ID, id)) ||
	    nla_put_string(msg, RMBD_TARGET_ATTR_SESSION_PEER,
			   "10.200.0.2:41234") ||
	    nla_put_string(msg, RMBD_TARGET_ATTR_EXPORT_NAME, "e") ||
	    (host && nla_put_string(msg, RMBD_TARGET_ATTR_SESSION_HOST,
				    host)) ||
	    ((flags & 1) && nla_put_flag(msg, RMBD_TARGET_ATTR_SESSION_UP)) ||
	    ((flags & 2) &&
	     nla_put_flag(msg, RMBD_TARGET_ATTR_SESSION_AUTH)) ||
	    ((flags & 4) &&
	     nla_put_flag(msg, RMBD_TARGET_ATTR_SESSION_READ_ONLY))) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

struct session_sink {
	struct rmbd_session_info s[4];
	unsigned int n;
	int ret;			/* what the callback returns */
};

static int sink_session(const struct rmbd_session_info *si, void *arg)
{
	struct session_sink *sink = arg;

	if (sink->n < ARRAY_SIZE(sink->s))
		sink->s[sink->n] = *si;
	sink->n++;
	return sink->ret;
}

/*
 * The replies of rmbd_session_list(): each message through
 * rmbd_valid_cb(), as rmbd_transact() passes them, to
 * rmbd_walk_session() and the callback.  Frees the messages; false if
 * one is NULL.
 */
static bool walk_sessions(struct nl_msg **msgs, size_t nr,
			  struct session_sink *sink, struct rmbd_req *req)
{
	static struct rmbd_session_walk w;
	bool ok = true;
	size_t i;

	w.cb = sink_session;
	w.arg = sink;
	memset(req, 0, sizeof(*req));
	req->maxattr = rmbd_families[RMBD_FAM_TARGET].maxattr;
	req->parse = rmbd_walk_session;
	req->arg = &w;
	for (i = 0; i < nr; i++) {
		if (!msgs[i]) {
			ok = false;
			continue;
		}
		if (rmbd_valid_cb(msgs[i], req) != NL_OK)
			ok = false;
		nlmsg_free(msgs[i]);
	}
	return ok;
}

static bool session_is(const struct rmbd_session_info *s, uint64_t id,
		       const char *host, bool up, bool auth, bool read_only)
{
	return s->id == id && !strcmp(s->peer, "10.200.0.2:41234") &&
	       !strcmp(s->export_name, "e") && !strcmp(s->host, host) &&
	       s->up == up && s->auth == auth && s->read_only == read_only;
}

static void test_session_list(void)
{
	struct session_sink sink;
	struct nl_msg *msgs[4];
	struct rmbd_req req;
	bool ok;

	memset(&sink, 0xa5, sizeof(sink));
	sink.n = 0;
	sink.ret = 0;
	msgs[0] = session_get_msg(0x3f2a9c0d1b2e4f60ULL, "nqn.x:h2", 1 | 2);
	msgs[1] = session_get_msg(0x1c, NULL, 0);
	msgs[2] = session_get_msg(0, "h", 1);
	msgs[3] = session_get_msg(0x7, "h3", 1 | 4);
	ok = walk_sessions(msgs, 4, &sink, &req);
	check(ok && sink.n == 3 && req.nr_replies == 4 && !req.cb_ret,
	      "session list: the sessions of the dump, one without id skipped");
	check(sink.n >= 1 &&
	      session_is(&sink.s[0], 0x3f2a9c0d1b2e4f60ULL, "nqn.x:h2", true,
			 true, false),
	      "session list: UP and AUTH: up, auth, host, not read_only");
	check(sink.n >= 2 && session_is(&sink.s[1], 0x1c, "", false, false,
					false),
	      "session list: no flags, no host: authenticating, host empty");
	check(sink.n >= 3 && session_is(&sink.s[2], 0x7, "h3", true, false,
					true),
	      "session list: UP and READ_ONLY: up, read_only, not auth");

	/* The callback's non-zero return ends the walk and is returned. */
	sink.n = 0;
	sink.ret = 5;
	msgs[0] = session_get_msg(0x1, NULL, 1);
	msgs[1] = session_get_msg(0x2, NULL, 1);
	ok = walk_sessions(msgs, 2, &sink, &req);
	check(ok && sink.n == 1 && req.cb_ret == 5 && req.nr_replies == 2,
	      "session list: the callback's 5 stops it, returned");
}

/* Sends msgs (freed) as one datagram to fd. */
static bool send_datagram(int fd, struct nl_msg **msgs, size_t n,
			  size_t cut)
{
	char buf[8192];
	size_t len = 0, i;
	bool ok = true;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < n; i++) {
		struct nlmsghdr *nlh;

		if (!msgs[i]) {
			ok = false;
			continue;
		}
		nlh = nlmsg_hdr(msgs[i]);
		if (ok && len + NLMSG_ALIGN(nlh->nlmsg_len) <= sizeof(buf)) {
			memcpy(buf + len, nlh, nlh->nlmsg_len);
			len += NLMSG_ALIGN(nlh->nlmsg_len);
		} else {
			ok = false;
		}
		nlmsg_free(msgs[i]);
	}
	if (cut && cut < len)
		len = cut;
	return ok && send(fd, buf, len, 0) == (ssize_t)len;
}

static void test_recv_events(void)
{
	struct rmbd_ctx ctx;
	struct rmbd_event ev;
	struct nl_msg *msgs[3];
	int64_t start, took;
	unsigned int joined;
	int sv[2], ret;

	event_ctx(&ctx);
	check(rmbd_event_recv(&ctx, &ev, 0) == -EINVAL &&
	      rmbd_events_fd(&ctx) == -EINVAL,
	      "rmbd_event_recv, rmbd_events_fd before subscribing: -EINVAL");
	joined = 7;
	check(rmbd_events_subscribe(&ctx, 0, &joined) == -EINVAL &&
	      joined == 0 &&
	      rmbd_events_subscribe(&ctx, 4, NULL) == -EINVAL,
	      "rmbd_events_subscribe of nothing or an unknown family: -EINVAL");

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
		check(false, "socketpair");
		return;
	}
	ctx.ev_fd = sv[0];
	ctx.ev_joined = RMBD_EVENTS_ALL;
	check(rmbd_events_fd(&ctx) == sv[0], "rmbd_events_fd: the socket");
	check(rmbd_event_recv(&ctx, &ev, 0) == 0, "nothing, timeout 0: 0");
	start = rmbd_now_ms();
	ret = rmbd_event_recv(&ctx, &ev, 100);
	took = rmbd_now_ms() - start;
	check(ret == 0 && took >= 90 && took < 2000,
	      "nothing, timeout 100 ms: 0 after the timeout");
	if (ret || took < 90 || took >= 2000)
		printf("# got %d after %" PRId64 " ms\n", ret, took);

	/* A reply and two events in one datagram: one event per call. */
	msgs[0] = dev_event_msg(RMBD_CLIENT_CMD_DEV_GET, 0);
	msgs[1] = dev_event_msg(RMBD_CLIENT_CMD_DEV_EVENT,
				RMBD_DEV_EVENT_LINK_DOWN);
	msgs[2] = session_event_msg(RMBD_SESSION_EVENT_DOWN, true,
				    "10.200.0.1:41234");
	check(send_datagram(sv[1], msgs, 3, 0), "sent reply and two events");
	ret = rmbd_event_recv(&ctx, &ev, 1000);
	check(ret == 1 && dev_event_ok(&ev, RMBD_DEV_EVENT_LINK_DOWN),
	      "first event of the datagram: link-down");
	ret = rmbd_event_recv(&ctx, &ev, 0);
	check(ret == 1 && session_event_ok(&ev, RMBD_SESSION_EVENT_DOWN,
					   "10.200.0.1:41234"),
	      "second event of the datagram: session down");
	check(rmbd_event_recv(&ctx, &ev, 0) == 0, "then nothing: 0");

	/* Not an event, then a cut datagram, then an event. */
	msgs[0] = dev_event_msg(RMBD_CLIENT_CMD_DEV_GET, 0);
	check(send_datagram(sv[1], msgs, 1, 0), "sent a reply");
	msgs[0] = dev_event_msg(RMBD_CLIENT_CMD_DEV_EVENT,
				RMBD_DEV_EVENT_LIVE);
	check(send_datagram(sv[1], msgs, 1, 40), "sent a cut event");
	msgs[0] = session_event_msg(RMBD_SESSION_EVENT_UP, true, "a:1");
	check(send_datagram(sv[1], msgs, 1, 0), "sent an event");
	ret = rmbd_event_recv(&ctx, &ev, 1000);
	check(ret == 1 && session_event_ok(&ev, RMBD_SESSION_EVENT_UP, "a:1"),
	      "reply and cut event skipped, the event after them received");
	check(rmbd_event_recv(&ctx, &ev, 0) == 0, "then nothing: 0");

	free(ctx.ev_buf);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(size_cases); i++) {
		const struct size_case *c = &size_cases[i];
		uint64_t bytes = 0xdeadbeef;
		int ret = rmbd_parse_size(c->in, &bytes);
		/* On failure the output must be left alone. */
		uint64_t want = c->ret ? 0xdeadbeef : c->bytes;
		int ok = ret == c->ret && bytes == want;

		failed += !ok;
		printf("%sok %zu - rmbd_parse_size(\"%s\") = %d, %" PRIu64 "\n",
		       ok ? "" : "not ", ++n, c->in, c->ret, want);
		if (!ok)
			printf("# got %d, %" PRIu64 "\n", ret, bytes);
	}

	for (i = 0; i < ARRAY_SIZE(dev_cases); i++) {
		const struct dev_case *c = &dev_cases[i];
		uint32_t index = 0xdeadbeef;
		int ret = rmbd_parse_dev(c->in, &index);
		uint32_t want = c->ret ? 0xdeadbeef : c->index;
		int ok = ret == c->ret && index == want;

		failed += !ok;
		printf("%sok %zu - rmbd_parse_dev(\"%s\") = %d, %" PRIu32 "\n",
		       ok ? "" : "not ", ++n, c->in, c->ret, want);
		if (!ok)
			printf("# got %d, %" PRIu32 "\n", ret, index);
	}

	for (i = 0; i < ARRAY_SIZE(state_cases); i++) {
		const struct state_case *c = &state_cases[i];
		const char *got = rmbd_dev_state_name(c->state);
		char desc[64];

		snprintf(desc, sizeof(desc), "rmbd_dev_state_name(%u) = %s",
			 c->state, c->name);
		check(!strcmp(got, c->name), desc);
	}

	for (i = 0; i < ARRAY_SIZE(dev_event_cases); i++) {
		const struct name_case *c = &dev_event_cases[i];
		char desc[64];

		snprintf(desc, sizeof(desc), "rmbd_dev_event_name(%u) = %s",
			 c->value, c->name);
		check(!strcmp(rmbd_dev_event_name(c->value), c->name), desc);
	}
	for (i = 0; i < ARRAY_SIZE(session_event_cases); i++) {
		const struct name_case *c = &session_event_cases[i];
		char desc[64];

		snprintf(desc, sizeof(desc), "rmbd_session_event_name(%u) = %s",
			 c->value, c->name);
		check(!strcmp(rmbd_session_event_name(c->value), c->name),
		      desc);
	}

	test_export_info();
	test_export_opts();
	test_dev_info(false);
	test_dev_info(true);
	test_parse_events();
	test_session_list();
	test_recv_events();
	test_leg_offsets();

	for (i = 0; i < ARRAY_SIZE(connect_cases); i++) {
		const struct connect_case *c = &connect_cases[i];
		struct rmbd_connect_opts o = {
			.addr			= "10.0.0.1",
			.export_name		= "foo",
			.reconnect_delay	= c->reconnect_delay,
			.loss_timeout		= c->loss_timeout,
			.has_loss_timeout	= c->has_loss_timeout,
		};
		int64_t delay, loss;
		char desc[128];
		bool shared, read_only;

		o.shared = i & 1;
		o.read_only = i & 2;
		connect_attrs(&o, &delay, &loss, &shared, &read_only);
		snprintf(desc, sizeof(desc),
			 "connect opts %u, %u%s: attributes %" PRId64 ", %"
			 PRId64 " (-1: none)", c->reconnect_delay,
			 c->loss_timeout, c->has_loss_timeout ? "" : " unset",
			 c->want_delay, c->want_loss);
		check(delay == c->want_delay && loss == c->want_loss, desc);
		if (delay != c->want_delay || loss != c->want_loss)
			printf("# got %" PRId64 ", %" PRId64 "\n", delay, loss);
		snprintf(desc, sizeof(desc), "connect opts shared %d: flag %s",
			 o.shared, o.shared ? "sent" : "not sent");
		check(shared == o.shared, desc);
		snprintf(desc, sizeof(desc), "connect opts read_only %d: flag %s",
			 o.read_only, o.read_only ? "sent" : "not sent");
		check(read_only == o.read_only, desc);
	}

	printf("1..%zu\n", n);
	return failed ? 1 : 0;
}
