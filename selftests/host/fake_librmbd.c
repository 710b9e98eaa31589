// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stand-in for the netlink half of librmbd, linked with the rmbd CLI into
 * rmbd-fake: it answers with fixed objects, so the tests can check the
 * CLI's text and JSON output and the values it passes to the library.
 *
 * Each call is logged, one line, to $RMBD_FAKE_LOG if set (the event
 * calls but rmbd_events_subscribe() excepted).
 * rmbd_dev_get() of rmbd7, which the list does not have, returns a pool
 * of three legs, as rmbd_dev_connect() makes one.
 * RMBD_FAKE_EMPTY=1: the lists are empty; =sessions: only the list of
 * sessions.
 * Names and addresses starting with "bad" fail with -EINVAL and a message.
 * RMBD_FAKE_FAIL=session_list: rmbd_session_list() fails with -EOPNOTSUPP
 * and no message, as against a module without SESSION_GET.
 * RMBD_FAKE_MODULES=client|target|none: the modules whose events can be
 * subscribed to; both if unset.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "librmbd.h"

struct rmbd_ctx {
	char errmsg[128];
	unsigned int missing;	/* modules rmbd_events_subscribe() missed */
	unsigned int ev_joined;
	int ev_pipe[2];		/* one byte per event left to receive */
	size_t ev_next;		/* in fake_events */
};

static void fake_log(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void fake_log(const char *fmt, ...)
{
	const char *path = getenv("RMBD_FAKE_LOG");
	va_list ap;
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static bool fake_empty(void)
{
	const char *e = getenv("RMBD_FAKE_EMPTY");

	return e && !strcmp(e, "1");
}

static int fake_fail(struct rmbd_ctx *ctx, const char *name)
{
	if (strncmp(name, "bad", 3))
		return 0;
	snprintf(ctx->errmsg, sizeof(ctx->errmsg), "fake refusal of %s",
		 name);
	return -EINVAL;
}

static const struct rmbd_export_info fake_exports[] = {
	{ "foo", 1073741824ULL, 67108864ULL, 1073741824ULL, 16, 1, 3, false,
	  2, { "rmbd:uuid:0a", "nqn.2014-08.org.nvmexpress:uuid:0b" },
	  1, { "nqn.2014-08.org.nvmexpress:uuid:0b" }, true, false },
	{ "bar.2", 8388608ULL, 2097152ULL, 8388608ULL, 4, 0, 0, true, 0, { },
	  0, { }, false, true },
};

static const struct rmbd_listener_info fake_listeners[] = {
	{ "10.200.0.1", 7470, 128, 3 },
	{ "fd00::1", 7471, 16, 0 },
};

static const struct rmbd_dev_info fake_devs[] = {
	{ 0, "rmbd0", 1073741824ULL, 67108864ULL, RMBD_DEV_STATE_LIVE,
	  "10.200.0.1", 7470, "foo", 2, 128, 0, 2, 60, 0, false, "rmbd:uuid:0a",
	  false, false, 1,
	  { { 0, RMBD_LEG_STATE_UP, "10.200.0.1", 7470, "foo", 1073741824ULL,
	      67108864ULL, 16, 0, 0 } }, RMBD_LAYOUT_MIRROR, 1, 67108864ULL, 0, { { 0 } } },
	{ 3, "rmbd3", 8388608ULL, 2097152ULL, RMBD_DEV_STATE_FAILED,
	  "fd00::1", 7471, "bar.2", 1, 16, 1, 2, 0, 0, false, "", false,
	  true, 1,
	  { { 0, RMBD_LEG_STATE_DOWN, "fd00::1", 7471, "bar.2", 8388608ULL,
	      2097152ULL, 4, 0, 0 } }, RMBD_LAYOUT_MIRROR, 1, 2097152ULL, 0, { { 0 } } },
	/* Two legs, as the CLI must show them; the first one down */
	{ 6, "rmbd6", 4294967296ULL, 1073741824ULL,
	  RMBD_DEV_STATE_RECONNECTING, "10.200.0.2", 7470, "baz", 4, 128, 0,
	  5, 300, 3, true, "h6", false, false, 2,
	  { { 0, RMBD_LEG_STATE_DOWN, "10.200.0.2", 7470, "baz", 4294967296ULL,
	      1073741824ULL, 4, 3, 0 },
	    { 1, RMBD_LEG_STATE_UP, "10.200.0.3", 7470, "baz2", 8589934592ULL,
	      1073741824ULL, 8, 0, 0 } }, RMBD_LAYOUT_MIRROR, 2, 1073741824ULL, 0, { { 0 } } },
	/* A live mirror with its second leg stale: degraded */
	{ 8, "rmbd8", 1073741824ULL, 67108864ULL, RMBD_DEV_STATE_LIVE,
	  "10.200.0.1", 7470, "m0", 2, 128, 0, 2, 60, 1, false,
	  "rmbd:uuid:0a", false, false, 2,
	  { { 0, RMBD_LEG_STATE_UP, "10.200.0.1", 7470, "m0", 1073741824ULL,
	      67108864ULL, 16, 0, 0 },
	    { 1, RMBD_LEG_STATE_STALE, "10.201.0.1", 7470, "m1",
	      2147483648ULL, 67108864ULL, 32, 1, 5242880ULL } },
	  RMBD_LAYOUT_MIRROR, 2, 67108864ULL, 0, { { 0 } } },
};

/*
 * The target's sessions: of foo one up and authenticated, one still
 * authenticating and without host; of bar.2 a read-only one; and one of
 * an export fake_exports does not have (deleted since it was listed).
 * Not in the order of their exports.
 */
static const struct rmbd_session_info fake_sessions[] = {
	{ 0x3f2a9c0d1b2e4f60ULL, "10.200.0.1:41234", "foo",
	  "nqn.2014-08.org.nvmexpress:uuid:0b", true, true, false,
	  4, 4ULL << 26 },
	{ 0x7, "[fd00::2]:41235", "bar.2", "", true, false, true,
	  1, 1ULL << 21 },
	{ 0x1c, "10.200.0.3:41300", "foo", "", false, false, false, 0, 0 },
	{ 0x2a, "10.200.0.9:41400", "gone", "rmbd:uuid:0a", true, false,
	  false, 2, 2ULL << 26 },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

int rmbd_open(struct rmbd_ctx **ctx)
{
	fake_log("open");
	*ctx = calloc(1, sizeof(**ctx));
	if (!*ctx)
		return -ENOMEM;
	(*ctx)->ev_pipe[0] = -1;
	(*ctx)->ev_pipe[1] = -1;
	return 0;
}

void rmbd_close(struct rmbd_ctx *ctx)
{
	if (ctx->ev_pipe[0] >= 0) {
		close(ctx->ev_pipe[0]);
		close(ctx->ev_pipe[1]);
	}
	free(ctx);
}

const char *rmbd_version(void)
{
	return RMBD_VERSION;
}

const char *rmbd_errmsg(const struct rmbd_ctx *ctx)
{
	return ctx->errmsg;
}

unsigned int rmbd_missing_modules(const struct rmbd_ctx *ctx)
{
	return ctx->missing;
}

int rmbd_export_add(struct rmbd_ctx *ctx, const char *name, uint64_t size,
		    uint64_t slab_size, struct rmbd_export_info *out)
{
	uint64_t slab = slab_size ? slab_size : RMBD_DEFAULT_SLAB_SIZE;

	fake_log("export_add %s %" PRIu64 " %" PRIu64, name, size, slab_size);
	if (fake_fail(ctx, name))
		return -EINVAL;
	if (out) {
		memset(out, 0, sizeof(*out));
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->size = size;
		out->slab_size = slab;
		out->nr_slabs = (uint32_t)((size + slab - 1) / slab);
		out->mem = size;
	}
	return 0;
}

int rmbd_export_create(struct rmbd_ctx *ctx,
		       const struct rmbd_export_opts *opts,
		       struct rmbd_export_info *out)
{
	char hosts[1024] = "-";
	size_t n = 0;
	uint32_t i;
	int ret;

	for (i = 0; i < opts->nr_hosts; i++)
		n += (size_t)snprintf(hosts + n, sizeof(hosts) - n, "%s%s",
				      i ? "," : "", opts->hosts[i]);
	ret = rmbd_export_add(ctx, opts->name, opts->size, opts->slab_size,
			      out);
	fake_log("  any_host %d shared %d read_only %d hosts %s",
		 opts->any_host, opts->shared, opts->read_only, hosts);
	if (!ret && out) {
		out->any_host = opts->any_host;
		out->shared = opts->shared;
		out->read_only = opts->read_only;
		out->nr_hosts = opts->nr_hosts;
		for (i = 0; i < opts->nr_hosts; i++)
			snprintf(out->hosts[i], sizeof(out->hosts[i]), "%s",
				 opts->hosts[i]);
	}
	return ret;
}

int rmbd_export_host_add(struct rmbd_ctx *ctx, const char *name,
			 const char *host, const uint8_t *secret,
			 size_t secret_len)
{
	fake_log("export_host_add %s %s secret %zu%s", name, host, secret_len,
		 secret ? (secret[0] == 0x9d ? " 9d..." : " ?") : "");
	return fake_fail(ctx, name);
}

int rmbd_export_host_del(struct rmbd_ctx *ctx, const char *name,
			 const char *host)
{
	fake_log("export_host_del %s %s", name, host);
	return fake_fail(ctx, name);
}

int rmbd_export_del(struct rmbd_ctx *ctx, const char *name, bool force)
{
	fake_log("export_del %s %d", name, force);
	return fake_fail(ctx, name);
}

int rmbd_export_get(struct rmbd_ctx *ctx, const char *name,
		    struct rmbd_export_info *out)
{
	size_t i;

	fake_log("export_get %s", name);
	for (i = 0; i < ARRAY_SIZE(fake_exports); i++) {
		if (!strcmp(fake_exports[i].name, name)) {
			*out = fake_exports[i];
			return 0;
		}
	}
	snprintf(ctx->errmsg, sizeof(ctx->errmsg), "no such export");
	return -ENOENT;
}

int rmbd_export_list(struct rmbd_ctx *ctx,
		     int (*cb)(const struct rmbd_export_info *, void *),
		     void *arg, uint64_t *total_mem)
{
	size_t i;
	int ret;

	(void)ctx;
	fake_log("export_list");
	if (total_mem)
		*total_mem = 0;
	if (fake_empty())
		return 0;
	for (i = 0; i < ARRAY_SIZE(fake_exports); i++) {
		ret = cb(&fake_exports[i], arg);
		if (ret)
			return ret;
	}
	if (total_mem)
		*total_mem = 1082130432ULL;
	return 0;
}

int rmbd_listener_add(struct rmbd_ctx *ctx, const char *addr, uint16_t port,
		      uint32_t max_sessions, struct rmbd_listener_info *out)
{
	fake_log("listener_add %s %u %u", addr, port, max_sessions);
	if (out) {
		memset(out, 0, sizeof(*out));
		snprintf(out->addr, sizeof(out->addr), "%s", addr);
		out->port = port ? port : RMBD_DEFAULT_PORT;
		out->max_sessions = max_sessions ? max_sessions :
				    RMBD_LISTENER_SESSIONS;
	}
	(void)ctx;
	return 0;
}

int rmbd_listener_del(struct rmbd_ctx *ctx, const char *addr, uint16_t port)
{
	fake_log("listener_del %s %u", addr, port);
	(void)ctx;
	return 0;
}

int rmbd_listener_list(struct rmbd_ctx *ctx,
		       int (*cb)(const struct rmbd_listener_info *, void *),
		       void *arg)
{
	size_t i;
	int ret;

	(void)ctx;
	fake_log("listener_list");
	if (fake_empty())
		return 0;
	for (i = 0; i < ARRAY_SIZE(fake_listeners); i++) {
		ret = cb(&fake_listeners[i], arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* The device that dev connect makes of opts, rmbd7 */
static void fake_fill_dev(const struct rmbd_connect_opts *opts,
			  struct rmbd_dev_info *out)
{
	struct rmbd_leg_opts one = { opts->addr, opts->port,
				     opts->export_name };
	const struct rmbd_leg_opts *legs = opts->nr_legs ? opts->legs : &one;
	unsigned int i, nr_legs = opts->nr_legs ? opts->nr_legs : 1;

	memset(out, 0, sizeof(*out));
	out->index = 7;
	snprintf(out->name, sizeof(out->name), "rmbd7");
	out->size = 1073741824ULL;
	out->slab_size = 67108864ULL;
	out->state = RMBD_DEV_STATE_LIVE;
	snprintf(out->addr, sizeof(out->addr), "%s", legs[0].addr);
	out->port = legs[0].port ? legs[0].port : RMBD_DEFAULT_PORT;
	snprintf(out->export_name, sizeof(out->export_name), "%s",
		 legs[0].export_name);
	out->nr_io_queues = opts->nr_io_queues ? opts->nr_io_queues : 2;
	out->queue_depth = opts->queue_depth ? opts->queue_depth :
			   RMBD_DEFAULT_QUEUE_DEPTH;
	out->nr_poll_queues = opts->nr_poll_queues;
	out->reconnect_delay = opts->reconnect_delay ? opts->reconnect_delay :
			       RMBD_DEFAULT_RECONNECT_DELAY;
	out->loss_timeout = opts->has_loss_timeout ? opts->loss_timeout :
			    RMBD_DEFAULT_LOSS_TIMEOUT;
	out->shared = opts->shared;
	snprintf(out->host, sizeof(out->host), "%s",
		 opts->host ? opts->host : "rmbd:uuid:default");
	out->auth = opts->secret != NULL;
	out->read_only = opts->read_only;
	out->layout = opts->layout ? opts->layout : RMBD_LAYOUT_MIRROR;
	out->copies = out->layout == RMBD_LAYOUT_POOL ?
		      (opts->copies ? opts->copies : 2) : nr_legs;
	out->extent_size = out->slab_size;
	/* A pool of such legs: nr_legs / copies as large */
	if (out->layout == RMBD_LAYOUT_POOL)
		out->size = out->size / out->extent_size * nr_legs /
			    out->copies * out->extent_size;
	out->nr_legs = nr_legs;
	for (i = 0; i < nr_legs; i++) {
		struct rmbd_leg_info *l = &out->legs[i];

		l->index = i;
		l->state = RMBD_LEG_STATE_UP;
		snprintf(l->addr, sizeof(l->addr), "%s", legs[i].addr);
		l->port = legs[i].port ? legs[i].port : RMBD_DEFAULT_PORT;
		snprintf(l->export_name, sizeof(l->export_name), "%s",
			 legs[i].export_name);
		l->size = out->size;
		l->slab_size = out->slab_size;
		l->nr_slabs = out->size / out->slab_size;
	}
}

int rmbd_dev_connect(struct rmbd_ctx *ctx,
		     const struct rmbd_connect_opts *opts,
		     struct rmbd_dev_info *out)
{
	struct rmbd_leg_opts one = { opts->addr, opts->port,
				     opts->export_name };
	const struct rmbd_leg_opts *legs = opts->nr_legs ? opts->legs : &one;
	unsigned int i, nr_legs = opts->nr_legs ? opts->nr_legs : 1;
	char loss[16] = "-", where[512] = "";
	size_t len = 0;

	if (opts->has_loss_timeout)
		snprintf(loss, sizeof(loss), "%u", opts->loss_timeout);
	if (opts->nr_legs) {
		for (i = 0; i < nr_legs; i++)
			len += snprintf(where + len, sizeof(where) - len,
					"%s%s %u %s", i ? " + " : "legs ",
					legs[i].addr, legs[i].port,
					legs[i].export_name);
		for (i = 0; i < opts->nr_spares; i++)
			len += snprintf(where + len, sizeof(where) - len,
					" spare %s %u %s", opts->spares[i].addr,
					opts->spares[i].port,
					opts->spares[i].export_name);
		fake_log("dev_connect %s layout %u %u %u %u %u %u %s %d %d %s %zu",
			 where, opts->layout, opts->copies, opts->nr_io_queues,
			 opts->queue_depth, opts->nr_poll_queues,
			 opts->reconnect_delay, loss, opts->shared,
			 opts->read_only, opts->host ? opts->host : "-",
			 opts->secret ? opts->secret_len : 0);
	} else {
		fake_log("dev_connect %s %u %s %u %u %u %u %s %d %d %s %zu",
			 opts->addr, opts->port, opts->export_name,
			 opts->nr_io_queues, opts->queue_depth,
			 opts->nr_poll_queues, opts->reconnect_delay, loss,
			 opts->shared, opts->read_only,
			 opts->host ? opts->host : "-",
			 opts->secret ? opts->secret_len : 0);
	}
	for (i = 0; i < nr_legs; i++) {
		if (!fake_fail(ctx, legs[i].export_name))
			continue;
		if (opts->nr_legs) {
			char msg[512];

			snprintf(msg, sizeof(msg), "leg %u (addr %s export %s): %s",
				 i, legs[i].addr, legs[i].export_name,
				 ctx->errmsg);
			memcpy(ctx->errmsg, msg, sizeof(ctx->errmsg) - 1);
			ctx->errmsg[sizeof(ctx->errmsg) - 1] = '\0';
		}
		return -EINVAL;
	}
	if (!strcmp(legs[0].export_name, "denied")) {
		snprintf(ctx->errmsg, sizeof(ctx->errmsg),
			 "the target does not allow this host to use the export");
		return -EACCES;
	}
	fake_fill_dev(opts, out);
	return 0;
}

int rmbd_dev_disconnect(struct rmbd_ctx *ctx, uint32_t index, bool force)
{
	fake_log("dev_disconnect %u %d", index, force);
	if (index == 9) {
		snprintf(ctx->errmsg, sizeof(ctx->errmsg), "no such device");
		return -ENODEV;
	}
	return 0;
}

int rmbd_dev_replace(struct rmbd_ctx *ctx, uint32_t index, uint32_t leg,
		     const struct rmbd_leg_opts *to, struct rmbd_dev_info *out)
{
	fake_log("dev_replace %u %u %s %u %s", index, leg, to->addr, to->port,
		 to->export_name);
	if (fake_fail(ctx, to->export_name))
		return -EINVAL;
	if (out)
		*out = fake_devs[0];
	return 0;
}

int rmbd_dev_list(struct rmbd_ctx *ctx,
		  int (*cb)(const struct rmbd_dev_info *, void *), void *arg)
{
	size_t i;
	int ret;

	(void)ctx;
	fake_log("dev_list");
	if (fake_empty())
		return 0;
	for (i = 0; i < ARRAY_SIZE(fake_devs); i++) {
		ret = cb(&fake_devs[i], arg);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Counters: from the device's index, so that each is told apart; rmbd3
 * (failed) has none, as a device being connected or disconnected.
 */
static void fake_counters(uint32_t index, uint32_t q,
			  struct rmbd_dev_counters *c)
{
	uint64_t k = (uint64_t)index * 10 + q + 1;

	memset(c, 0, sizeof(*c));
	c->queue = q;
	c->reads = k;
	c->read_bytes = k * 4096;
	c->writes = 2 * k;
	c->write_bytes = k << 20;
	c->discards = q;
	c->discard_bytes = (uint64_t)q << 21;
	c->errors = index == 6 ? 1 : 0;
	c->requeues = index == 6 ? 5 + q : 0;
	c->timeouts = 0;
	c->in_flight = q;
}

static void fake_stats(const struct rmbd_dev_info *d, bool queues,
		       struct rmbd_dev_stats *st)
{
	struct rmbd_dev_counters *t = &st->total;
	uint32_t q, nr = d->nr_io_queues + d->nr_poll_queues;

	memset(st, 0, sizeof(*st));
	if (d->index == 3)
		return;
	st->valid = true;
	for (q = 0; q < nr; q++) {
		struct rmbd_dev_counters c;

		fake_counters(d->index, q, &c);
		c.poll = q >= d->nr_io_queues;
		t->reads += c.reads;
		t->read_bytes += c.read_bytes;
		t->writes += c.writes;
		t->write_bytes += c.write_bytes;
		t->discards += c.discards;
		t->discard_bytes += c.discard_bytes;
		t->errors += c.errors;
		t->requeues += c.requeues;
		t->in_flight += c.in_flight;
		if (queues)
			st->queues[st->nr_queues++] = c;
	}
	t->reconnects = d->nr_reconnects;
}

int rmbd_dev_list_stats(struct rmbd_ctx *ctx,
			int (*cb)(const struct rmbd_dev_info *,
				  const struct rmbd_dev_stats *, void *),
			void *arg)
{
	static struct rmbd_dev_stats st;
	size_t i;
	int ret;

	(void)ctx;
	fake_log("dev_list_stats");
	if (fake_empty())
		return 0;
	for (i = 0; i < ARRAY_SIZE(fake_devs); i++) {
		fake_stats(&fake_devs[i], false, &st);
		ret = cb(&fake_devs[i], &st, arg);
		if (ret)
			return ret;
	}
	return 0;
}

int rmbd_dev_get_stats(struct rmbd_ctx *ctx, uint32_t index,
		       struct rmbd_dev_info *out, struct rmbd_dev_stats *stats)
{
	size_t i;

	fake_log("dev_get_stats %u", index);
	for (i = 0; i < ARRAY_SIZE(fake_devs); i++) {
		if (fake_devs[i].index == index) {
			*out = fake_devs[i];
			fake_stats(out, true, stats);
			return 0;
		}
	}
	ctx->errmsg[0] = '\0';
	return -ENODEV;
}

/* rmbd7, not listed: a pool of three legs, two copies of each extent */
static const struct rmbd_leg_opts fake_pool_legs[] = {
	{ "10.200.0.1", 0, "p0" },
	{ "10.201.0.1", 0, "p1" },
	{ "10.202.0.1", 0, "p2" },
};

static const struct rmbd_connect_opts fake_pool = {
	.legs = fake_pool_legs,
	.nr_legs = ARRAY_SIZE(fake_pool_legs),
	.layout = RMBD_LAYOUT_POOL,
	.copies = 2,
};

int rmbd_dev_get(struct rmbd_ctx *ctx, uint32_t index,
		 struct rmbd_dev_info *out)
{
	size_t i;

	fake_log("dev_get %u", index);
	if (index == 7) {
		fake_fill_dev(&fake_pool, out);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(fake_devs); i++) {
		if (fake_devs[i].index == index) {
			*out = fake_devs[i];
			return 0;
		}
	}
	ctx->errmsg[0] = '\0';
	return -ENODEV;
}

int rmbd_session_list(struct rmbd_ctx *ctx, const char *export_name,
		      int (*cb)(const struct rmbd_session_info *, void *),
		      void *arg)
{
	const char *fail = getenv("RMBD_FAKE_FAIL"), *empty;
	size_t i;
	int ret;

	fake_log("session_list %s", export_name ? export_name : "-");
	if (export_name && fake_fail(ctx, export_name))
		return -EINVAL;
	if (fail && !strcmp(fail, "session_list")) {
		ctx->errmsg[0] = '\0';
		return -EOPNOTSUPP;
	}
	empty = getenv("RMBD_FAKE_EMPTY");
	if (fake_empty() || (empty && !strcmp(empty, "sessions")))
		return 0;
	for (i = 0; i < ARRAY_SIZE(fake_sessions); i++) {
		if (export_name &&
		    strcmp(fake_sessions[i].export_name, export_name))
			continue;
		ret = cb(&fake_sessions[i], arg);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The events rmbd_event_recv() returns, in order, those of the families
 * joined; family 0: -ENOBUFS, events lost.  A device event's device is
 * fake_devs[obj] with another state and reconnect count; a session
 * event's session is fake_sessions[obj] (without up, which events do not
 * carry).
 */
static const struct fake_event {
	unsigned int family;
	uint8_t event;
	unsigned int obj;
	uint8_t state;
	uint32_t reconnects;
} fake_events[] = {
	{ RMBD_EVENTS_CLIENT, RMBD_DEV_EVENT_CONNECTED, 0,
	  RMBD_DEV_STATE_LIVE, 0 },
	{ RMBD_EVENTS_TARGET, RMBD_SESSION_EVENT_UP, 0, 0, 0 },
	{ RMBD_EVENTS_CLIENT, RMBD_DEV_EVENT_LINK_DOWN, 0,
	  RMBD_DEV_STATE_RECONNECTING, 0 },
	{ 0, 0, 0, 0, 0 },
	{ RMBD_EVENTS_CLIENT, RMBD_DEV_EVENT_RECONNECTING, 0,
	  RMBD_DEV_STATE_RECONNECTING, 0 },
	{ RMBD_EVENTS_CLIENT, RMBD_DEV_EVENT_LIVE, 0, RMBD_DEV_STATE_LIVE, 1 },
	{ RMBD_EVENTS_TARGET, RMBD_SESSION_EVENT_DOWN, 0, 0, 0 },
	{ RMBD_EVENTS_TARGET, RMBD_SESSION_EVENT_UP, 1, 0, 0 },
	{ RMBD_EVENTS_CLIENT, RMBD_DEV_EVENT_LINK_DOWN, 1,
	  RMBD_DEV_STATE_FAILED, 0 },
	{ RMBD_EVENTS_CLIENT, RMBD_DEV_EVENT_FAILED, 1, RMBD_DEV_STATE_FAILED,
	  0 },
	{ RMBD_EVENTS_CLIENT, RMBD_DEV_EVENT_DISCONNECTED, 1,
	  RMBD_DEV_STATE_DELETING, 0 },
	{ RMBD_EVENTS_CLIENT, 42, 2, RMBD_DEV_STATE_RECONNECTING, 3 },
};

static bool fake_event_wanted(const struct rmbd_ctx *ctx,
			      const struct fake_event *f)
{
	return !f->family || (ctx->ev_joined & f->family);
}

int rmbd_events_subscribe(struct rmbd_ctx *ctx, unsigned int which,
			  unsigned int *joined)
{
	const char *mods = getenv("RMBD_FAKE_MODULES");
	unsigned int loaded = RMBD_EVENTS_ALL;
	size_t i;

	fake_log("events_subscribe %u", which);
	if (mods)
		loaded = !strcmp(mods, "client") ? RMBD_EVENTS_CLIENT :
			 !strcmp(mods, "target") ? RMBD_EVENTS_TARGET : 0;
	if (!which || (which & ~RMBD_EVENTS_ALL))
		return -EINVAL;
	if (!(which & loaded)) {
		snprintf(ctx->errmsg, sizeof(ctx->errmsg), "%s",
			 which == RMBD_EVENTS_ALL ?
			 "neither rmbd-client nor rmbd-target is loaded" :
			 which == RMBD_EVENTS_CLIENT ?
			 "kernel module rmbd-client is not loaded" :
			 "kernel module rmbd-target is not loaded");
		ctx->missing = which & ~loaded;
		if (joined)
			*joined = ctx->ev_joined;
		return -ENOENT;
	}
	ctx->ev_joined |= which & loaded;
	if (joined)
		*joined = ctx->ev_joined;
	if (ctx->ev_pipe[0] < 0) {
		if (pipe(ctx->ev_pipe))
			return -errno;
		fcntl(ctx->ev_pipe[0], F_SETFL, O_NONBLOCK);
	}
	/* One byte per event still to come (the pipe holds them all). */
	for (i = ctx->ev_next; i < ARRAY_SIZE(fake_events); i++)
		if (fake_event_wanted(ctx, &fake_events[i]) &&
		    write(ctx->ev_pipe[1], "e", 1) != 1)
			return -EIO;
	return 0;
}

int rmbd_events_fd(const struct rmbd_ctx *ctx)
{
	return ctx->ev_joined ? ctx->ev_pipe[0] : -EINVAL;
}

int rmbd_event_recv(struct rmbd_ctx *ctx, struct rmbd_event *ev,
		    int timeout_ms)
{
	struct pollfd pfd = { .fd = ctx->ev_pipe[0], .events = POLLIN };
	const struct fake_event *f;
	char c;

	if (!ctx->ev_joined)
		return -EINVAL;
	if (read(ctx->ev_pipe[0], &c, 1) != 1) {
		if (!timeout_ms || poll(&pfd, 1, timeout_ms) <= 0 ||
		    read(ctx->ev_pipe[0], &c, 1) != 1)
			return 0;
	}
	while (!fake_event_wanted(ctx, &fake_events[ctx->ev_next]))
		ctx->ev_next++;
	f = &fake_events[ctx->ev_next++];
	if (!f->family)
		return -ENOBUFS;

	memset(ev, 0, sizeof(*ev));
	ev->family = f->family;
	ev->event = f->event;
	if (f->family == RMBD_EVENTS_CLIENT) {
		ev->dev = fake_devs[f->obj];
		ev->dev.state = f->state;
		ev->dev.nr_reconnects = f->reconnects;
	} else {
		ev->session = fake_sessions[f->obj];
		ev->session.up = false;
	}
	return 1;
}

const char *rmbd_leg_state_name(uint8_t state)
{
	return state == RMBD_LEG_STATE_UP ? "up" :
	       state == RMBD_LEG_STATE_DOWN ? "down" :
	       state == RMBD_LEG_STATE_STALE ? "stale" :
	       state == RMBD_LEG_STATE_FAILED ? "failed" : "unknown";
}

const char *rmbd_layout_name(uint8_t layout)
{
	return layout == RMBD_LAYOUT_MIRROR ? "mirror" :
	       layout == RMBD_LAYOUT_POOL ? "pool" : "unknown";
}

const char *rmbd_dev_state_name(uint8_t state)
{
	static const char *const names[] = {
		"connecting", "live", "failed", "deleting", "reconnecting"
	};

	return state < ARRAY_SIZE(names) ? names[state] : "unknown";
}
