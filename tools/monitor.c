// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: events of both modules (rmbd monitor).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/select.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "print.h"
#include "rmbd.h"

static void monitor_help(FILE *f)
{
	fputs("Usage: rmbd monitor [ dev | session | all ] [ count N ]\n"
	      "       rmbd monitor help\n"
	      "where  dev: events of the client's devices (rmbd-client)\n"
	      "       session: sessions opening and closing on the target "
	      "(rmbd-target)\n"
	      "       all: both, of the modules that are loaded (default)\n"
	      "       count: exit after N events; default: run until "
	      "SIGINT or SIGTERM\n", f);
}

/*
 * -t: the local time now, as RFC 3339 with microseconds
 * ("2025-06-01T14:03:07.123456+02:00"), into buf; "" without -t.
 */
static void event_time(char *buf, size_t len)
{
	struct timespec now;
	struct tm tm;
	char zone[8];
	size_t n;

	buf[0] = '\0';
	if (!opt.timestamp)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	localtime_r(&now.tv_sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!n || strftime(zone, sizeof(zone), "%z", &tm) != 5)
		return;
	/* +hhmm: RFC 3339 wants +hh:mm */
	snprintf(buf + n, len - n, ".%06ld%.3s:%s", now.tv_nsec / 1000, zone,
		 zone + 3);
}

/* With -t: "timestamp" in JSON, first; "[TIME]" first in text. */
static void print_timestamp(const char *ts)
{
	if (!*ts)
		return;
	print_string(PRINT_JSON, "timestamp", NULL, ts);
	print_string(PRINT_TEXT, NULL, "[%s]", ts);
}

/* In text, the fields of dev show that monitor prints only with -d. */
static enum print_mode print_detail(void)
{
	return opt.details ? PRINT_ANY : PRINT_JSON;
}

/*
 * Text: "dev NAME EVENT state STATE addr ADDR port PORT export NAME", with
 * -d followed by the other fields of dev show's device line (its legs are
 * not in the line, their number and the spares' are).  JSON: "type",
 * "event" and every key of dev show, "legs" and "spares" among them.
 */
static void print_dev_event(const struct rmbd_event *ev, const char *ts)
{
	const struct rmbd_dev_info *d = &ev->dev;
	const char *name = rmbd_dev_event_name(ev->event);

	print_open_object();
	print_timestamp(ts);
	print_string(PRINT_JSON, "type", NULL, "dev");
	print_string(PRINT_JSON, "event", NULL, name);
	print_u64(PRINT_JSON, "index", NULL, d->index);
	print_string(PRINT_ANY, "name", "dev %s", d->name);
	print_string(PRINT_TEXT, NULL, "%s", name);
	print_string(PRINT_ANY, "state", "state %s",
		     rmbd_dev_state_name(d->state));
	print_string(PRINT_ANY, "addr", "addr %s", d->addr);
	print_u64(PRINT_ANY, "port", "port %" PRIu64, d->port);
	print_string(PRINT_ANY, "export", "export %s", d->export_name);
	print_size(print_detail(), "size", "size %s", d->size);
	print_u64(print_detail(), "queues", "queues %" PRIu64,
		  d->nr_io_queues);
	print_u64(print_detail(), "poll_queues", "poll_queues %" PRIu64,
		  d->nr_poll_queues);
	print_u64(print_detail(), "depth", "depth %" PRIu64, d->queue_depth);
	print_u64(print_detail(), "reconnect_delay",
		  "reconnect_delay %" PRIu64, d->reconnect_delay);
	print_u64(print_detail(), "loss_timeout", "loss_timeout %" PRIu64,
		  d->loss_timeout);
	print_u64(print_detail(), "reconnects", "reconnects %" PRIu64,
		  d->nr_reconnects);
	print_bool(print_detail(), "shared", "shared", d->shared);
	print_string(d->host[0] ? print_detail() : PRINT_JSON, "host",
		     "host %s", d->host);
	print_bool(print_detail(), "auth", "auth", d->auth);
	print_bool(print_detail(), "read_only", "read_only", d->read_only);
	print_size(print_detail(), "slab_size", "slab_size %s",
		   d->slab_size);
	print_string(d->nr_legs > 1 ? print_detail() : PRINT_JSON, "layout",
		     "layout %s", rmbd_layout_name(d->layout));
	print_u64(d->layout == RMBD_LAYOUT_POOL ? print_detail() : PRINT_JSON,
		  "copies", "copies %" PRIu64, d->copies);
	print_u64(d->nr_legs > 1 && opt.details ? PRINT_TEXT : PRINT_JSON,
		  NULL, "legs %" PRIu64, d->nr_legs);
	print_bool(print_detail(), "degraded", "degraded", dev_degraded(d));
	if (d->nr_spares && opt.details)
		print_u64(PRINT_TEXT, NULL, "spares %" PRIu64, d->nr_spares);
	if (print_is_json()) {
		print_legs(d);
		print_spares(d);
	}
	print_close_object();
}

/*
 * Text: "session ID EVENT peer ADDR:PORT export NAME [host H] [auth]
 * [read_only]"; JSON: "type", "event", "id", "peer", "export", "host",
 * "auth", "read_only".  The id is in hex, as the target's
 * kernel log prints it, and a string in JSON (a number would not survive
 * parsers that read numbers as doubles).
 */
static void print_session_event(const struct rmbd_event *ev, const char *ts)
{
	const struct rmbd_session_info *s = &ev->session;
	const char *name = rmbd_session_event_name(ev->event);
	char id[17];

	snprintf(id, sizeof(id), "%" PRIx64, s->id);
	print_open_object();
	print_timestamp(ts);
	print_string(PRINT_JSON, "type", NULL, "session");
	print_string(PRINT_JSON, "event", NULL, name);
	print_string(PRINT_ANY, "id", "session %s", id);
	print_string(PRINT_TEXT, NULL, "%s", name);
	print_string(PRINT_ANY, "peer", "peer %s", s->peer);
	print_string(PRINT_ANY, "export", "export %s", s->export_name);
	print_string(s->host[0] ? PRINT_ANY : PRINT_JSON, "host", "host %s",
		     s->host);
	print_bool(PRINT_ANY, "auth", "auth", s->auth);
	print_bool(PRINT_ANY, "read_only", "read_only", s->read_only);
	print_close_object();
}

static volatile sig_atomic_t monitor_stop;

static void monitor_signal(int sig)
{
	(void)sig;
	monitor_stop = 1;
}

/*
 * Blocks SIGINT and SIGTERM but while waiting for events, so that one
 * arriving at any moment ends the loop.  *old: the mask to wait with.
 */
static void monitor_signals(sigset_t *old)
{
	struct sigaction sa;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = monitor_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigdelset(old, SIGINT);
	sigdelset(old, SIGTERM);
}

static int monitor_loop(struct rmbd_ctx *ctx, uint32_t count)
{
	char ts[64];
	struct rmbd_event ev;
	uint32_t seen = 0;
	sigset_t waitmask;
	fd_set rfds;
	int fd, ret;

	fd = rmbd_events_fd(ctx);
	if (fd < 0)
		return request_error(ctx, "monitor", fd);
	monitor_signals(&waitmask);

	while (!monitor_stop && (!count || seen < count)) {
		ret = rmbd_event_recv(ctx, &ev, 0);
		if (ret == 1) {
			event_time(ts, sizeof(ts));
			if (ev.family == RMBD_EVENTS_CLIENT)
				print_dev_event(&ev, ts);
			else
				print_session_event(&ev, ts);
			if (fflush(stdout) == EOF) {
				fprintf(stderr, "rmbd: failed to write: %s\n",
					strerror(errno));
				return EXIT_FAIL;
			}
			seen++;
			continue;
		}
		if (ret == -ENOBUFS) {
			fputs("rmbd: events lost: the receive buffer was full; "
			      "rmbd dev show has the current state\n", stderr);
			continue;
		}
		if (ret < 0 && ret != -EINTR)
			return request_error(ctx, "receive events", ret);
		if (ret < 0)
			continue;
		/* Nothing pending: wait for the socket or a signal. */
		FD_ZERO(&rfds);
		FD_SET(fd, &rfds);
		if (pselect(fd + 1, &rfds, NULL, NULL, NULL, &waitmask) < 0 &&
		    errno != EINTR) {
			fprintf(stderr, "rmbd: failed to wait for events: %s\n",
				strerror(errno));
			return EXIT_FAIL;
		}
	}
	return 0;
}

static int monitor_run(unsigned int which, int argc, char **argv)
{
	struct keyword kw[] = {
		{ .name = "count", .has_value = true },
		{ }
	};
	struct rmbd_ctx *ctx;
	uint32_t count = 0;
	int ret;

	ret = parse_keywords(kw, argc, argv);
	if (ret)
		return ret;
	if (kw[0].seen && parse_uint(kw[0].value, 1, UINT32_MAX, &count))
		return usage_error("invalid count '%s' (1-%" PRIu32 ")",
				   kw[0].value, UINT32_MAX);

	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_events_subscribe(ctx, which, NULL);
	if (ret < 0)
		ret = request_error(ctx, "monitor", ret);
	else
		ret = monitor_loop(ctx, count);
	rmbd_close(ctx);
	return ret;
}

static int monitor_all(int argc, char **argv)
{
	return monitor_run(RMBD_EVENTS_ALL, argc, argv);
}

static int monitor_dev(int argc, char **argv)
{
	return monitor_run(RMBD_EVENTS_CLIENT, argc, argv);
}

static int monitor_session(int argc, char **argv)
{
	return monitor_run(RMBD_EVENTS_TARGET, argc, argv);
}

static const struct command monitor_cmds[] = {
	{ "all", monitor_all },
	{ "dev", monitor_dev },
	{ "session", monitor_session },
	{ "help", NULL },
	{ }
};

const struct object monitor_object = {
	.name	= "monitor",
	.help	= monitor_help,
	.cmds	= monitor_cmds,
	.default_takes_args = true,
};
