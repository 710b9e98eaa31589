// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: the target's listeners (rmbd listener).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "rmbd.h"

static void print_listener(const struct rmbd_listener_info *l)
{
	print_open_object();
	print_string(PRINT_ANY, "addr", "listener %s", l->addr);
	print_u64(PRINT_ANY, "port", "port %" PRIu64, l->port);
	print_u64(PRINT_ANY, "max_sessions", "max_sessions %" PRIu64,
		  l->max_sessions);
	print_u64(PRINT_ANY, "sessions", "sessions %" PRIu64, l->sessions);
	print_close_object();
}

static void listener_help(FILE *f)
{
	fprintf(f,
		"Usage: rmbd listener add ADDR [ port PORT ] [ max_sessions N ]\n"
		"       rmbd listener del ADDR [ port PORT ]\n"
		"       rmbd listener [ show ]\n"
		"       rmbd listener help\n"
		"where  ADDR := an IPv4 or IPv6 address; a link-local IPv6 one "
		"with its scope,\n"
		"               an interface's name or index: fe80::1%%eth0, "
		"fe80::1%%2\n"
		"       PORT := 1-65535, default %d\n"
		"       N    := sessions it holds at once, opened or not: 1-%d, default %d\n",
		RMBD_DEFAULT_PORT, RMBD_MAX_SESSIONS, RMBD_LISTENER_SESSIONS);
}

/* max_sessions NULL: del, which takes no max_sessions. */
static int listener_parse(int argc, char **argv, const char **addr,
			  uint16_t *port, uint32_t *max_sessions)
{
	struct keyword kw[] = {
		{ .name = "port", .has_value = true },
		{ .name = max_sessions ? "max_sessions" : NULL,
		  .has_value = true },
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
	if (ret || !max_sessions)
		return ret;
	*max_sessions = 0;
	if (kw[1].seen &&
	    parse_uint(kw[1].value, 1, RMBD_MAX_SESSIONS, max_sessions))
		return usage_error("invalid max_sessions '%s' (1-%d)",
				   kw[1].value, RMBD_MAX_SESSIONS);
	return 0;
}

int listener_add_parse(int argc, char **argv, struct listener_req *r)
{
	return listener_parse(argc, argv, &r->addr, &r->port,
			      &r->max_sessions);
}

static int listener_add(int argc, char **argv)
{
	struct rmbd_listener_info info;
	struct listener_req r;
	struct rmbd_ctx *ctx;
	int ret;

	ret = listener_add_parse(argc, argv, &r);
	if (ret)
		return ret;
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_listener_add(ctx, r.addr, r.port, r.max_sessions,
				opt.json ? &info : NULL);
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

	ret = listener_parse(argc, argv, &addr, &port, NULL);
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

static int collect_listener(const struct rmbd_listener_info *l, void *arg)
{
	return vec_push(arg, l);
}

static int listener_show(int argc, char **argv)
{
	struct vec vec = { .size = sizeof(struct rmbd_listener_info) };
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
			print_listener((struct rmbd_listener_info *)vec.v + i);
		print_close_array();
	}
	free(vec.v);
	rmbd_close(ctx);
	return ret;
}

static const struct command listener_cmds[] = {
	{ "show", listener_show },
	{ "add", listener_add },
	{ "del", listener_del },
	{ "help", NULL },
	{ }
};

const struct object listener_object = {
	.name	= "listener",
	.help	= listener_help,
	.cmds	= listener_cmds,
};
