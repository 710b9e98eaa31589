// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TAP test of rmbd_parse_size(), rmbd_parse_dev(), rmbd_dev_state_name(),
 * and of the device attributes librmbd reads from and writes to netlink
 * messages.  librmbd.c is included whole, for its static functions
 * rmbd_parse_dev_info() and rmbd_put_connect_opts(); the messages are
 * built in memory, no kernel needed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

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
	{ "2T", 0, 2199023255552ULL },
	{ "1P", 0, 1125899906842624ULL },
	{ "15E", 0, 17293822569102704640ULL },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16E", -ERANGE, 0 },
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
	{ "1Gib", -EINVAL, 0 },
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
	     nla_put_u32(msg, RMBD_CLIENT_ATTR_NR_RECONNECTS, 3)))
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
		      !d.nr_reconnects,
		      "dev info of an old kernel: reconnect fields 0");
	else
		check(ok && d.state == RMBD_DEV_STATE_RECONNECTING &&
		      d.reconnect_delay == 5 && d.loss_timeout == 300 &&
		      d.nr_reconnects == 3,
		      "dev info: reconnecting, delay 5, loss 300, reconnects 3");
	printf("# state %u reconnect_delay %u loss_timeout %u reconnects %u\n",
	       d.state, d.reconnect_delay, d.loss_timeout, d.nr_reconnects);
	nlmsg_free(msg);
}

/* What rmbd_dev_connect() sends for opts; -1: absent, -2: no message. */
static void connect_attrs(const struct rmbd_connect_opts *opts,
			  int64_t *delay, int64_t *loss)
{
	struct nlattr *tb[RMBD_CLIENT_ATTR_MAX + 1];
	struct nl_msg *msg = nlmsg_alloc();

	*delay = -2;
	*loss = -2;
	if (!msg || !genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, 42, 0, 0,
				 RMBD_CLIENT_CMD_DEV_CONNECT,
				 RMBD_CLIENT_GENL_VERSION) ||
	    rmbd_put_connect_opts(msg, opts) || parse_msg(msg, tb))
		goto out;
	*delay = -1;
	*loss = -1;
	if (tb[RMBD_CLIENT_ATTR_RECONNECT_DELAY])
		*delay = nla_get_u32(tb[RMBD_CLIENT_ATTR_RECONNECT_DELAY]);
	if (tb[RMBD_CLIENT_ATTR_LOSS_TIMEOUT])
		*loss = nla_get_u32(tb[RMBD_CLIENT_ATTR_LOSS_TIMEOUT]);
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

	test_dev_info(false);
	test_dev_info(true);

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

		connect_attrs(&o, &delay, &loss);
		snprintf(desc, sizeof(desc),
			 "connect opts %u, %u%s: attributes %" PRId64 ", %"
			 PRId64 " (-1: none)", c->reconnect_delay,
			 c->loss_timeout, c->has_loss_timeout ? "" : " unset",
			 c->want_delay, c->want_loss);
		check(delay == c->want_delay && loss == c->want_loss, desc);
		if (delay != c->want_delay || loss != c->want_loss)
			printf("# got %" PRId64 ", %" PRId64 "\n", delay, loss);
	}

	printf("1..%zu\n", n);
	return failed ? 1 : 0;
}
