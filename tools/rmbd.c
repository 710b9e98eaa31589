// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: configure rmbd exports, listeners and devices.
 *
 *   rmbd [OPTIONS] OBJECT { COMMAND | help }
 *
 * Exit status: 0 success, 1 a request failed, 2 usage error.  Usage errors
 * are found before any netlink traffic.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include "librmbd.h"
#include "print.h"

#define EXIT_FAIL	1
#define EXIT_USAGE	2

static struct {
	bool json;
	bool pretty;
	bool details;
} opt;

/* The object being parsed, for the hint of usage errors; NULL: none. */
static const char *cur_object;

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("rmbd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (cur_object)
		fprintf(stderr, "Try 'rmbd %s help'.\n", cur_object);
	else
		fputs("Try 'rmbd help'.\n", stderr);
	return EXIT_USAGE;
}

/* "failed to <what>: <strerror>[: <kernel message>]" */
static int request_error(struct rmbd_ctx *ctx, const char *what, int err)
{
	const char *msg = rmbd_errmsg(ctx);

	fprintf(stderr, "rmbd: failed to %s: %s", what, strerror(-err));
	if (msg && *msg)
		fprintf(stderr, ": %s", msg);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

static int open_ctx(struct rmbd_ctx **ctx)
{
	int ret;

	ret = rmbd_open(ctx);
	if (ret) {
		fprintf(stderr, "rmbd: failed to open netlink socket: %s\n",
			strerror(-ret));
		return EXIT_FAIL;
	}
	return 0;
}

/*
 * Unique prefix match of word in a NULL-terminated table: an exact match
 * wins.  Returns the index, -1 if none matches, -2 if several do.
 */
static int match(const char *const *table, const char *word)
{
	size_t len = strlen(word);
	int i, found = -1;

	if (!len)
		return -1;
	for (i = 0; table[i]; i++) {
		if (!strcmp(table[i], word))
			return i;
		if (!strncmp(table[i], word, len)) {
			if (found >= 0)
				found = -2;
			else if (found == -1)
				found = i;
		}
	}
	return found;
}

/* Keyword arguments: "keyword [value]" pairs after the positional ones. */
struct keyword {
	const char *name;
	bool has_value;
	bool seen;
	const char *value;
};

static int parse_keywords(struct keyword *kw, int argc, char **argv)
{
	const char *names[16];
	int i, n, k;

	for (n = 0; kw[n].name; n++)
		names[n] = kw[n].name;
	names[n] = NULL;

	for (i = 0; i < argc; i++) {
		k = match(names, argv[i]);
		if (k == -1)
			return usage_error("unknown keyword '%s'", argv[i]);
		if (k == -2)
			return usage_error("ambiguous keyword '%s'", argv[i]);
		if (kw[k].seen)
			return usage_error("duplicate keyword '%s'",
					   kw[k].name);
		kw[k].seen = true;
		if (!kw[k].has_value)
			continue;
		if (i + 1 >= argc)
			return usage_error("missing value for '%s'",
					   kw[k].name);
		kw[k].value = argv[++i];
	}
	return 0;
}

static int require(const struct keyword *kw)
{
	if (!kw->seen)
		return usage_error("missing keyword '%s'", kw->name);
	return 0;
}

/* Decimal, no sign, no junk, within min..max. */
static int parse_uint(const char *s, uint32_t min, uint32_t max,
		      uint32_t *val)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*val = (uint32_t)v;
	return 0;
}

static int parse_port(const struct keyword *kw, uint16_t *port)
{
	uint32_t v;

	*port = 0;
	if (!kw->seen)
		return 0;
	if (parse_uint(kw->value, 1, 65535, &v))
		return usage_error("invalid port '%s' (1-65535)", kw->value);
	*port = (uint16_t)v;
	return 0;
}

/* zero_ok: 0 goes to the kernel, which judges sizes; else it is refused. */
static int parse_size_kw(const struct keyword *kw, const char *what,
			 bool zero_ok, uint64_t *val)
{
	if (rmbd_parse_size(kw->value, val) || (!zero_ok && !*val))
		return usage_error("invalid %s '%s'", what, kw->value);
	return 0;
}

static int check_export_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= RMBD_EXPORT_NAME_MAX || name[0] == '.' ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789._-") != len)
		return usage_error("invalid export name '%s'", name);
	return 0;
}

static int check_addr(const char *addr)
{
	unsigned char buf[sizeof(struct in6_addr)];

	if (strlen(addr) >= RMBD_ADDR_MAX ||
	    (inet_pton(AF_INET, addr, buf) != 1 &&
	     inet_pton(AF_INET6, addr, buf) != 1))
		return usage_error("invalid address '%s'", addr);
	return 0;
}

static int no_more_args(int argc, char **argv)
{
	if (argc > 0)
		return usage_error("unexpected argument '%s'", argv[0]);
	return 0;
}

/* export */

static void print_export(const struct rmbd_export_info *e)
{
	print_open_object();
	print_string(PRINT_ANY, "name", "export %s", e->name);
	print_u64(PRINT_ANY, "size", "size %" PRIu64, e->size);
	print_u64(PRINT_ANY, "slab_size", "slab %" PRIu64, e->slab_size);
	print_u64(PRINT_ANY, "nr_slabs", "slabs %" PRIu64, e->nr_slabs);
	print_u64(PRINT_ANY, "sessions", "sessions %" PRIu64, e->sessions);
	print_u64(PRINT_ANY, "mapped", "mapped %" PRIu64, e->mapped);
	print_u64(PRINT_ANY, "mem", "mem %" PRIu64, e->mem);
	print_close_object();
}

static void export_help(FILE *f)
{
	fprintf(f,
		"Usage: rmbd export add NAME size SIZE [ slab SIZE ]\n"
		"       rmbd export del NAME [ force ]\n"
		"       rmbd export [ show [ NAME ] ]\n"
		"       rmbd export help\n"
		"where  NAME := 1-%d characters of [A-Za-z0-9._-], not "
		"starting with '.'\n"
		"       SIZE := NUMBER[K|M|G|T|P|E][iB], binary multiples "
		"(1K = 1024)\n",
		RMBD_EXPORT_NAME_MAX - 1);
}

static int export_add(int argc, char **argv)
{
	struct keyword kw[] = {
		{ .name = "size", .has_value = true },
		{ .name = "slab", .has_value = true },
		{ }
	};
	struct rmbd_export_info info;
	uint64_t size, slab = 0;
	struct rmbd_ctx *ctx;
	const char *name;
	int ret;

	if (argc < 1)
		return usage_error("missing export name");
	name = argv[0];
	ret = check_export_name(name);
	if (!ret)
		ret = parse_keywords(kw, argc - 1, argv + 1);
	if (!ret)
		ret = require(&kw[0]);
	if (!ret)
		ret = parse_size_kw(&kw[0], "size", true, &size);
	if (!ret && kw[1].seen)
		ret = parse_size_kw(&kw[1], "slab size", false, &slab);
	if (ret)
		return ret;

	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_export_add(ctx, name, size, slab,
			      opt.json ? &info : NULL);
	if (ret < 0) {
		ret = request_error(ctx, "add export", ret);
	} else {
		if (opt.json)
			print_export(&info);
		ret = 0;
	}
	rmbd_close(ctx);
	return ret;
}

static int export_del(int argc, char **argv)
{
	struct keyword kw[] = {
		{ .name = "force" },
		{ }
	};
	struct rmbd_ctx *ctx;
	const char *name;
	int ret;

	if (argc < 1)
		return usage_error("missing export name");
	name = argv[0];
	ret = check_export_name(name);
	if (!ret)
		ret = parse_keywords(kw, argc - 1, argv + 1);
	if (ret)
		return ret;

	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_export_del(ctx, name, kw[0].seen);
	ret = ret < 0 ? request_error(ctx, "delete export", ret) : 0;
	rmbd_close(ctx);
	return ret;
}

struct export_vec {
	struct rmbd_export_info *v;
	size_t n;
};

static int collect_export(const struct rmbd_export_info *e, void *arg)
{
	struct export_vec *vec = arg;
	struct rmbd_export_info *v;

	v = realloc(vec->v, (vec->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	vec->v = v;
	vec->v[vec->n++] = *e;
	return 0;
}

static int export_show(int argc, char **argv)
{
	struct export_vec vec = { NULL, 0 };
	const char *name = NULL;
	struct rmbd_ctx *ctx;
	uint64_t total;
	size_t i;
	int ret;

	if (argc > 0) {
		name = argv[0];
		ret = check_export_name(name);
		if (!ret)
			ret = no_more_args(argc - 1, argv + 1);
		if (ret)
			return ret;
	}

	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	if (name) {
		struct rmbd_export_info info;

		ret = rmbd_export_get(ctx, name, &info);
		if (!ret)
			ret = collect_export(&info, &vec);
		if (ret < 0)
			ret = request_error(ctx, "show export", ret);
	} else {
		ret = rmbd_export_list(ctx, collect_export, &vec, &total);
		if (ret < 0)
			ret = request_error(ctx, "list exports", ret);
	}
	if (!ret) {
		print_open_array();
		for (i = 0; i < vec.n; i++)
			print_export(&vec.v[i]);
		print_close_array();
		if (!name && opt.details && !opt.json)
			printf("total mem %" PRIu64 "\n", total);
	}
	free(vec.v);
	rmbd_close(ctx);
	return ret;
}

/* listener */

static void print_listener(const struct rmbd_listener_info *l)
{
	print_open_object();
	print_string(PRINT_ANY, "addr", "listener %s", l->addr);
	print_u64(PRINT_ANY, "port", "port %" PRIu64, l->port);
	print_close_object();
}

static void listener_help(FILE *f)
{
	fprintf(f,
		"Usage: rmbd listener add ADDR [ port PORT ]\n"
		"       rmbd listener del ADDR [ port PORT ]\n"
		"       rmbd listener [ show ]\n"
		"       rmbd listener help\n"
		"where  ADDR := an IPv4 or IPv6 address\n"
		"       PORT := 1-65535, default %d\n",
		RMBD_DEFAULT_PORT);
}

static int listener_parse(int argc, char **argv, const char **addr,
			  uint16_t *port)
{
	struct keyword kw[] = {
		{ .name = "port", .has_value = true },
		{ }
	};
	int ret;

	if (argc < 1)
		return usage_error("missing address");
	*addr = argv[0];
	ret = check_addr(*addr);
	if (!ret)
		ret = parse_keywords(kw, argc - 1, argv + 1);
	if (!ret)
		ret = parse_port(&kw[0], port);
	return ret;
}

static int listener_add(int argc, char **argv)
{
	struct rmbd_listener_info info;
	struct rmbd_ctx *ctx;
	const char *addr;
	uint16_t port;
	int ret;

	ret = listener_parse(argc, argv, &addr, &port);
	if (ret)
		return ret;
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_listener_add(ctx, addr, port, opt.json ? &info : NULL);
	if (ret < 0) {
		ret = request_error(ctx, "add listener", ret);
	} else {
		if (opt.json)
			print_listener(&info);
		ret = 0;
	}
	rmbd_close(ctx);
	return ret;
}

static int listener_del(int argc, char **argv)
{
	struct rmbd_ctx *ctx;
	const char *addr;
	uint16_t port;
	int ret;

	ret = listener_parse(argc, argv, &addr, &port);
	if (ret)
		return ret;
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_listener_del(ctx, addr, port);
	ret = ret < 0 ? request_error(ctx, "delete listener", ret) : 0;
	rmbd_close(ctx);
	return ret;
}

struct listener_vec {
	struct rmbd_listener_info *v;
	size_t n;
};

static int collect_listener(const struct rmbd_listener_info *l, void *arg)
{
	struct listener_vec *vec = arg;
	struct rmbd_listener_info *v;

	v = realloc(vec->v, (vec->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	vec->v = v;
	vec->v[vec->n++] = *l;
	return 0;
}

static int listener_show(int argc, char **argv)
{
	struct listener_vec vec = { NULL, 0 };
	struct rmbd_ctx *ctx;
	size_t i;
	int ret;

	ret = no_more_args(argc, argv);
	if (ret)
		return ret;
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_listener_list(ctx, collect_listener, &vec);
	if (ret < 0) {
		ret = request_error(ctx, "list listeners", ret);
	} else {
		print_open_array();
		for (i = 0; i < vec.n; i++)
			print_listener(&vec.v[i]);
		print_close_array();
	}
	free(vec.v);
	rmbd_close(ctx);
	return ret;
}

/* dev */

/* In text, a field at its default value shows only with -d. */
static enum print_mode print_unless_default(bool is_default)
{
	return is_default && !opt.details ? PRINT_JSON : PRINT_ANY;
}

static void print_dev(const struct rmbd_dev_info *d)
{
	print_open_object();
	print_u64(PRINT_JSON, "index", NULL, d->index);
	print_string(PRINT_ANY, "name", "%s:", d->name);
	print_u64(PRINT_ANY, "size", "size %" PRIu64, d->size);
	print_string(PRINT_ANY, "state", "state %s",
		     rmbd_dev_state_name(d->state));
	print_string(PRINT_ANY, "addr", "addr %s", d->addr);
	print_u64(PRINT_ANY, "port", "port %" PRIu64, d->port);
	print_string(PRINT_ANY, "export", "export %s", d->export_name);
	print_u64(PRINT_ANY, "queues", "queues %" PRIu64, d->nr_io_queues);
	print_u64(print_unless_default(!d->nr_poll_queues),
		  "poll_queues", "pollq %" PRIu64, d->nr_poll_queues);
	print_u64(PRINT_ANY, "depth", "depth %" PRIu64, d->queue_depth);
	print_u64(print_unless_default(d->reconnect_delay ==
				       RMBD_DEFAULT_RECONNECT_DELAY),
		  "reconnect_delay", "reconnect_delay %" PRIu64,
		  d->reconnect_delay);
	print_u64(print_unless_default(d->loss_timeout ==
				       RMBD_DEFAULT_LOSS_TIMEOUT),
		  "loss_timeout", "loss_timeout %" PRIu64, d->loss_timeout);
	print_u64(print_unless_default(!d->nr_reconnects),
		  "reconnects", "reconnects %" PRIu64, d->nr_reconnects);
	print_bool(PRINT_ANY, "shared", "shared", d->shared);
	print_u64(opt.details ? PRINT_ANY : PRINT_JSON, "slab_size",
		  "slab %" PRIu64, d->slab_size);
	print_close_object();
}

static void dev_help(FILE *f)
{
	fprintf(f,
		"Usage: rmbd dev connect addr ADDR export NAME [ port PORT ]\n"
		"                        [ queues N ] [ pollq N ] [ depth N ]\n"
		"                        [ reconnect_delay SECONDS ] "
		"[ loss_timeout SECONDS ]\n"
		"                        [ shared ]\n"
		"       rmbd dev disconnect DEV [ force ]\n"
		"       rmbd dev [ show [ DEV ] ]\n"
		"       rmbd dev help\n"
		"where  DEV := rmbdN | /dev/rmbdN | N\n"
		"       ADDR := the target's IPv4 or IPv6 address\n"
		"       PORT := 1-65535, default %d\n"
		"       queues: 1-%d, default one per online CPU\n"
		"       pollq: polled queues for io_uring hipri, 0-%d, default 0\n"
		"       depth: 1-%d, default %d\n"
		"       reconnect_delay: seconds between reconnect attempts, "
		"1-%d, default %d\n"
		"       loss_timeout: seconds I/O waits for a lost connection "
		"before it fails,\n"
		"                     0-%d (0: fail at once), default %d\n"
		"       shared: connect even if this host has a device on that "
		"export already\n",
		RMBD_DEFAULT_PORT, RMBD_MAX_IO_QUEUES, RMBD_MAX_IO_QUEUES,
		RMBD_MAX_QUEUE_DEPTH, RMBD_DEFAULT_QUEUE_DEPTH,
		RMBD_MAX_RECONNECT_DELAY, RMBD_DEFAULT_RECONNECT_DELAY,
		RMBD_MAX_LOSS_TIMEOUT, RMBD_DEFAULT_LOSS_TIMEOUT);
}

static int dev_connect(int argc, char **argv)
{
	struct keyword kw[] = {
		{ .name = "addr", .has_value = true },
		{ .name = "export", .has_value = true },
		{ .name = "port", .has_value = true },
		{ .name = "queues", .has_value = true },
		{ .name = "depth", .has_value = true },
		{ .name = "pollq", .has_value = true },
		{ .name = "reconnect_delay", .has_value = true },
		{ .name = "loss_timeout", .has_value = true },
		{ .name = "shared" },
		{ }
	};
	struct rmbd_connect_opts o = { 0 };
	struct rmbd_dev_info info;
	struct rmbd_ctx *ctx;
	int ret;

	ret = parse_keywords(kw, argc, argv);
	if (!ret)
		ret = require(&kw[0]);
	if (!ret)
		ret = require(&kw[1]);
	if (!ret)
		ret = check_addr(kw[0].value);
	if (!ret)
		ret = check_export_name(kw[1].value);
	if (!ret)
		ret = parse_port(&kw[2], &o.port);
	if (ret)
		return ret;
	if (kw[3].seen && parse_uint(kw[3].value, 1, RMBD_MAX_IO_QUEUES,
				     &o.nr_io_queues))
		return usage_error("invalid queues '%s' (1-%d)", kw[3].value,
				   RMBD_MAX_IO_QUEUES);
	if (kw[4].seen && parse_uint(kw[4].value, 1, RMBD_MAX_QUEUE_DEPTH,
				     &o.queue_depth))
		return usage_error("invalid depth '%s' (1-%d)", kw[4].value,
				   RMBD_MAX_QUEUE_DEPTH);
	if (kw[5].seen && parse_uint(kw[5].value, 0, RMBD_MAX_IO_QUEUES,
				     &o.nr_poll_queues))
		return usage_error("invalid pollq '%s' (0-%d)", kw[5].value,
				   RMBD_MAX_IO_QUEUES);
	if (kw[6].seen && parse_uint(kw[6].value, 1, RMBD_MAX_RECONNECT_DELAY,
				     &o.reconnect_delay))
		return usage_error("invalid reconnect_delay '%s' (1-%d)",
				   kw[6].value, RMBD_MAX_RECONNECT_DELAY);
	if (kw[7].seen && parse_uint(kw[7].value, 0, RMBD_MAX_LOSS_TIMEOUT,
				     &o.loss_timeout))
		return usage_error("invalid loss_timeout '%s' (0-%d)",
				   kw[7].value, RMBD_MAX_LOSS_TIMEOUT);
	o.has_loss_timeout = kw[7].seen;
	o.shared = kw[8].seen;
	o.addr = kw[0].value;
	o.export_name = kw[1].value;

	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_dev_connect(ctx, &o, &info);
	if (ret < 0) {
		ret = request_error(ctx, "connect device", ret);
	} else {
		if (opt.json)
			print_dev(&info);
		else
			printf("%s\n", info.name);
		ret = 0;
	}
	rmbd_close(ctx);
	return ret;
}

static int parse_dev_arg(int argc, char **argv, uint32_t *index)
{
	if (rmbd_parse_dev(argv[0], index))
		return usage_error("invalid device '%s'", argv[0]);
	return no_more_args(argc - 1, argv + 1);
}

static int dev_disconnect(int argc, char **argv)
{
	struct keyword kw[] = {
		{ .name = "force" },
		{ }
	};
	struct rmbd_ctx *ctx;
	uint32_t index;
	int ret;

	if (argc < 1)
		return usage_error("missing device");
	if (rmbd_parse_dev(argv[0], &index))
		return usage_error("invalid device '%s'", argv[0]);
	ret = parse_keywords(kw, argc - 1, argv + 1);
	if (ret)
		return ret;
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_dev_disconnect(ctx, index, kw[0].seen);
	ret = ret < 0 ? request_error(ctx, "disconnect device", ret) : 0;
	rmbd_close(ctx);
	return ret;
}

struct dev_vec {
	struct rmbd_dev_info *v;
	size_t n;
};

static int collect_dev(const struct rmbd_dev_info *d, void *arg)
{
	struct dev_vec *vec = arg;
	struct rmbd_dev_info *v;

	v = realloc(vec->v, (vec->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	vec->v = v;
	vec->v[vec->n++] = *d;
	return 0;
}

static int dev_show(int argc, char **argv)
{
	struct dev_vec vec = { NULL, 0 };
	struct rmbd_ctx *ctx;
	bool one = argc > 0;
	uint32_t index = 0;
	size_t i;
	int ret;

	if (one) {
		ret = parse_dev_arg(argc, argv, &index);
		if (ret)
			return ret;
	}
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	if (one) {
		struct rmbd_dev_info info;

		ret = rmbd_dev_get(ctx, index, &info);
		if (!ret)
			ret = collect_dev(&info, &vec);
		if (ret < 0)
			ret = request_error(ctx, "show device", ret);
	} else {
		ret = rmbd_dev_list(ctx, collect_dev, &vec);
		if (ret < 0)
			ret = request_error(ctx, "list devices", ret);
	}
	if (!ret) {
		print_open_array();
		for (i = 0; i < vec.n; i++)
			print_dev(&vec.v[i]);
		print_close_array();
	}
	free(vec.v);
	rmbd_close(ctx);
	return ret;
}

/* monitor */

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

/* In text, the fields of dev show that monitor prints only with -d. */
static enum print_mode print_detail(void)
{
	return opt.details ? PRINT_ANY : PRINT_JSON;
}

/*
 * Text: "dev NAME EVENT state STATE addr ADDR port PORT export NAME", with
 * -d followed by the other fields of dev show.  JSON: "type", "event" and
 * every key of dev show.
 */
static void print_dev_event(const struct rmbd_event *ev)
{
	const struct rmbd_dev_info *d = &ev->dev;
	const char *name = rmbd_dev_event_name(ev->event);

	print_open_object();
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
	print_u64(print_detail(), "size", "size %" PRIu64, d->size);
	print_u64(print_detail(), "queues", "queues %" PRIu64,
		  d->nr_io_queues);
	print_u64(print_detail(), "poll_queues", "pollq %" PRIu64,
		  d->nr_poll_queues);
	print_u64(print_detail(), "depth", "depth %" PRIu64, d->queue_depth);
	print_u64(print_detail(), "reconnect_delay",
		  "reconnect_delay %" PRIu64, d->reconnect_delay);
	print_u64(print_detail(), "loss_timeout", "loss_timeout %" PRIu64,
		  d->loss_timeout);
	print_u64(print_detail(), "reconnects", "reconnects %" PRIu64,
		  d->nr_reconnects);
	print_bool(print_detail(), "shared", "shared", d->shared);
	print_u64(print_detail(), "slab_size", "slab %" PRIu64, d->slab_size);
	print_close_object();
}

/*
 * Text: "session ID EVENT peer ADDR:PORT export NAME"; JSON: "type",
 * "event", "id", "peer", "export".  The id is in hex, as the target's
 * kernel log prints it, and a string in JSON (a number would not survive
 * parsers that read numbers as doubles).
 */
static void print_session_event(const struct rmbd_event *ev)
{
	const struct rmbd_session_info *s = &ev->session;
	const char *name = rmbd_session_event_name(ev->event);
	char id[17];

	snprintf(id, sizeof(id), "%" PRIx64, s->id);
	print_open_object();
	print_string(PRINT_JSON, "type", NULL, "session");
	print_string(PRINT_JSON, "event", NULL, name);
	print_string(PRINT_ANY, "id", "session %s", id);
	print_string(PRINT_TEXT, NULL, "%s", name);
	print_string(PRINT_ANY, "peer", "peer %s", s->peer);
	print_string(PRINT_ANY, "export", "export %s", s->export_name);
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
			if (ev.family == RMBD_EVENTS_CLIENT)
				print_dev_event(&ev);
			else
				print_session_event(&ev);
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

/* Dispatch */

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
};

struct object {
	const char *name;
	void (*help)(FILE *f);
	const struct command *cmds;	/* the first is the default */
	/* Arguments that are no command go to the default one. */
	bool default_takes_args;
};

static const struct command export_cmds[] = {
	{ "show", export_show },
	{ "add", export_add },
	{ "del", export_del },
	{ "help", NULL },
	{ }
};

static const struct command listener_cmds[] = {
	{ "show", listener_show },
	{ "add", listener_add },
	{ "del", listener_del },
	{ "help", NULL },
	{ }
};

static const struct command dev_cmds[] = {
	{ "show", dev_show },
	{ "connect", dev_connect },
	{ "disconnect", dev_disconnect },
	{ "help", NULL },
	{ }
};

static const struct command monitor_cmds[] = {
	{ "all", monitor_all },
	{ "dev", monitor_dev },
	{ "session", monitor_session },
	{ "help", NULL },
	{ }
};

static void main_help(FILE *f);

static const struct object objects[] = {
	{ "export", export_help, export_cmds, false },
	{ "listener", listener_help, listener_cmds, false },
	{ "dev", dev_help, dev_cmds, false },
	{ "monitor", monitor_help, monitor_cmds, true },
	{ "help", main_help, NULL, false },
	{ }
};

static void main_help(FILE *f)
{
	fputs("Usage: rmbd [ OPTIONS ] OBJECT { COMMAND | help }\n"
	      "       rmbd help [ OBJECT ]\n"
	      "where  OBJECT := { export | listener | dev | monitor }\n"
	      "       OPTIONS := { -j[son] | -p[retty] | -d[etails] |\n"
	      "                    -V[ersion] | -h[elp] }\n", f);
}

static int match_object(const char *word, const struct object **obj)
{
	const char *names[8];
	int i, k;

	for (i = 0; objects[i].name; i++)
		names[i] = objects[i].name;
	names[i] = NULL;
	k = match(names, word);
	if (k == -1)
		return usage_error("unknown object '%s'", word);
	if (k == -2)
		return usage_error("ambiguous object '%s'", word);
	*obj = &objects[k];
	return 0;
}

static int run_object(const struct object *obj, int argc, char **argv)
{
	const struct command *cmd;
	const char *names[8];
	int i, k;

	cur_object = obj->name;
	if (argc < 1)
		return obj->cmds[0].fn(0, argv);

	for (i = 0; obj->cmds[i].name; i++)
		names[i] = obj->cmds[i].name;
	names[i] = NULL;
	k = match(names, argv[0]);
	if (k == -1 && obj->default_takes_args)
		return obj->cmds[0].fn(argc, argv);
	if (k == -1)
		return usage_error("unknown %s command '%s'", obj->name,
				   argv[0]);
	if (k == -2)
		return usage_error("ambiguous %s command '%s'", obj->name,
				   argv[0]);
	cmd = &obj->cmds[k];
	if (!cmd->fn) {
		if (argc > 1)
			return usage_error("unexpected argument '%s'",
					   argv[1]);
		obj->help(stdout);
		return 0;
	}
	return cmd->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "details", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const struct object *obj;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jpdVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.json = true;
			opt.pretty = true;
			break;
		case 'd':
			opt.details = true;
			break;
		case 'V':
			printf("rmbd %s\n", LIBRMBD_VERSION);
			return 0;
		case 'h':
			main_help(stdout);
			return 0;
		default:
			if (optopt)
				return usage_error("invalid option '-%c'",
						   optopt);
			return usage_error("invalid option '%s'",
					   argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;
	print_init(opt.json, opt.pretty);

	if (argc < 1)
		return usage_error("missing object");
	ret = match_object(argv[0], &obj);
	if (ret)
		return ret;
	if (!obj->cmds) {
		/* rmbd help [OBJECT] */
		if (argc < 2) {
			main_help(stdout);
			return 0;
		}
		ret = match_object(argv[1], &obj);
		if (ret)
			return ret;
		if (argc > 2)
			return usage_error("unexpected argument '%s'",
					   argv[2]);
		obj->help(stdout);
		return 0;
	}
	return run_object(obj, argc - 1, argv + 1);
}
