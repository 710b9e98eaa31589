// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: the target's exports (rmbd export).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "rmbd.h"

/*
 * One session of an export (rmbd export show -d): a line of its own
 * below the export's in text, an object of "session_list" in JSON.
 */
static void print_session(const struct rmbd_session_info *s)
{
	char id[17];

	snprintf(id, sizeof(id), "%" PRIx64, s->id);
	if (!print_is_json())
		fputs("    ", stdout);
	print_open_object();
	print_string(PRINT_ANY, "id", "session %s", id);
	print_string(PRINT_ANY, "host", "host %s", s->host[0] ? s->host : "-");
	print_string(PRINT_ANY, "peer", "peer %s", s->peer);
	print_bool(PRINT_ANY, "up", NULL, s->up);
	print_string(PRINT_TEXT, NULL, "%s", s->up ? "up" : "authenticating");
	print_bool(PRINT_ANY, "auth", "auth", s->auth);
	print_bool(PRINT_ANY, "read_only", "read_only", s->read_only);
	/* Its slab registrations: in text with -s */
	print_u64(opt.stats ? PRINT_ANY : PRINT_JSON, "mapped",
		  "mapped %" PRIu64, s->mapped);
	print_size(opt.stats ? PRINT_ANY : PRINT_JSON, "mapped_bytes",
		   "mapped_bytes %s", s->mapped_bytes);
	print_close_object();
}

/* Sessions of all exports, for -d; NULL without. */
static const struct vec *export_sessions;

static void print_export(const struct rmbd_export_info *e)
{
	const struct rmbd_session_info *si;
	size_t i;

	print_open_object();
	print_string(PRINT_ANY, "name", "export %s", e->name);
	print_size(PRINT_ANY, "size", "size %s", e->size);
	print_size(PRINT_ANY, "slab_size", "slab_size %s", e->slab_size);
	print_u64(PRINT_ANY, "nr_slabs", "nr_slabs %" PRIu64, e->nr_slabs);
	print_u64(PRINT_ANY, "sessions", "sessions %" PRIu64, e->sessions);
	print_u64(PRINT_ANY, "mapped", "mapped %" PRIu64, e->mapped);
	print_size(PRINT_ANY, "mem", "mem %s", e->mem);
	print_bool(PRINT_ANY, "any_host", "any_host", e->any_host);
	print_bool(PRINT_ANY, "shared", "shared", e->shared);
	print_bool(PRINT_ANY, "read_only", "read_only", e->read_only);
	print_strings("hosts", "hosts", e->hosts[0], sizeof(e->hosts[0]),
		      e->nr_hosts);
	print_strings("auth_hosts", "auth_hosts", e->auth_hosts[0],
		      sizeof(e->auth_hosts[0]), e->nr_auth_hosts);
	if (!export_sessions) {
		print_close_object();
		return;
	}
	if (print_is_json())
		print_open_array_key("session_list");
	else
		print_close_object();
	for (i = 0; i < export_sessions->n; i++) {
		si = (const struct rmbd_session_info *)export_sessions->v + i;
		if (!strcmp(si->export_name, e->name))
			print_session(si);
	}
	if (print_is_json()) {
		print_close_array();
		print_close_object();
	}
}

static void export_help(FILE *f)
{
	fprintf(f,
		"Usage: rmbd export add NAME size SIZE [ slab SIZE ]\n"
		"                       [ hosts HOST[,HOST...] | any_host ]\n"
		"                       [ shared ] [ read_only ]\n"
		"       rmbd export del NAME [ force ]\n"
		"       rmbd export host add NAME HOST [ secret-file FILE ]\n"
		"       rmbd export host del NAME HOST\n"
		"       rmbd export [ show [ NAME ] ]\n"
		"       rmbd export help\n"
		"where  NAME := 1-%d characters of [A-Za-z0-9._-], not "
		"starting with '.'\n"
		"       SIZE := NUMBER[K|M|G|T|P|E][iB], any case, binary "
		"multiples (1K = 1024)\n"
		"       HOST := a host identity (rmbd host shows this "
		"machine's): 1-%d characters\n"
		"               of [A-Za-z0-9._:-], not starting with '.' "
		"or '-'\n"
		"       An export that names no host and is not any_host "
		"refuses every host\n"
		"       until one is added.  One host holds an export at a "
		"time unless it is\n"
		"       shared; read_only: no session may write.\n",
		RMBD_EXPORT_NAME_MAX - 1, RMBD_HOST_MAX - 1);
}

int export_add_parse(int argc, char **argv, struct export_req *r)
{
	struct keyword kw[] = {
		{ .name = "size", .has_value = true },
		{ .name = "slab", .has_value = true },
		{ .name = "hosts", .has_value = true },
		{ .name = "any_host" },
		{ .name = "shared" },
		{ .name = "read_only" },
		{ }
	};
	struct rmbd_export_opts *o = &r->o;
	uint64_t size, slab = 0;
	char *h, *save;
	int ret;

	memset(r, 0, sizeof(*r));
	if (argc < 1)
		return usage_error("missing export name");
	ret = check_export_name(argv[0]);
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
	if (kw[2].seen && kw[3].seen)
		return usage_error("hosts and any_host exclude each other");
	if (kw[2].seen) {
		if (strlen(kw[2].value) >= sizeof(r->list))
			return usage_error("hosts: too long a list");
		strcpy(r->list, kw[2].value);
		for (h = strtok_r(r->list, ",", &save); h;
		     h = strtok_r(NULL, ",", &save)) {
			if (!rmbd_valid_host(h))
				return usage_error("invalid host identity '%s'",
						   h);
			if (o->nr_hosts == RMBD_MAX_EXPORT_HOSTS)
				return usage_error("more than %d hosts",
						   RMBD_MAX_EXPORT_HOSTS);
			r->hosts[o->nr_hosts++] = h;
		}
		if (!o->nr_hosts)
			return usage_error("hosts: no host in '%s'",
					   kw[2].value);
	}
	o->name = argv[0];
	o->size = size;
	o->slab_size = slab;
	o->any_host = kw[3].seen;
	o->shared = kw[4].seen;
	o->read_only = kw[5].seen;
	o->hosts = r->hosts;
	return 0;
}

static int export_add(int argc, char **argv)
{
	struct rmbd_export_info info;
	struct export_req r;
	struct rmbd_ctx *ctx;
	int ret;

	ret = export_add_parse(argc, argv, &r);
	if (ret)
		return ret;
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_export_create(ctx, &r.o, opt.json ? &info : NULL);
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

static int collect_export(const struct rmbd_export_info *e, void *arg)
{
	return vec_push(arg, e);
}

static int collect_session(const struct rmbd_session_info *s, void *arg)
{
	return vec_push(arg, s);
}

static int export_show(int argc, char **argv)
{
	struct vec sessions = { .size = sizeof(struct rmbd_session_info) };
	struct vec vec = { .size = sizeof(struct rmbd_export_info) };
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
	/* The sessions after the exports: a session of a new export is left
	 * out, one of a deleted export not shown. */
	if (!ret && opt.details) {
		ret = rmbd_session_list(ctx, name, collect_session, &sessions);
		if (ret < 0)
			ret = request_error(ctx, "list sessions", ret);
		else
			export_sessions = &sessions;
	}
	if (!ret) {
		print_open_array();
		for (i = 0; i < vec.n; i++)
			print_export((struct rmbd_export_info *)vec.v + i);
		print_close_array();
		if (!name && opt.details && !opt.json) {
			char buf[32];

			format_size(buf, sizeof(buf), total, opt.human);
			printf("total mem %s\n", buf);
		}
	}
	export_sessions = NULL;
	free(sessions.v);
	free(vec.v);
	rmbd_close(ctx);
	return ret;
}

/* NAME HOST [ secret-file FILE ] of export host add, or of del (!add) */
static int host_parse(int argc, char **argv, bool add, struct host_req *r)
{
	struct keyword kw[] = {
		{ .name = "secret-file", .has_value = true },
		{ }
	};
	int ret;

	memset(r, 0, sizeof(*r));
	if (argc < 1)
		return usage_error("missing export name");
	ret = check_export_name(argv[0]);
	if (ret)
		return ret;
	if (argc < 2)
		return usage_error("missing host identity");
	if (!rmbd_valid_host(argv[1]))
		return usage_error("invalid host identity '%s'", argv[1]);
	ret = add ? parse_keywords(kw, argc - 2, argv + 2) :
		    no_more_args(argc - 2, argv + 2);
	if (!ret && kw[0].seen)
		ret = read_secret_kw(&kw[0], r->secret, &r->secret_len);
	if (ret)
		return ret;
	r->export_name = argv[0];
	r->host = argv[1];
	r->has_secret = kw[0].seen;
	return 0;
}

int export_host_add_parse(int argc, char **argv, struct host_req *r)
{
	return host_parse(argc, argv, true, r);
}

/* rmbd export host { add | del } NAME HOST [ secret-file FILE ] */
static int export_host(int argc, char **argv)
{
	static const char *const verbs[] = { "add", "del", NULL };
	struct rmbd_ctx *ctx;
	struct host_req r;
	int ret, verb;

	if (argc < 1)
		return usage_error("missing host command (add or del)");
	verb = match(verbs, argv[0]);
	if (verb < 0)
		return usage_error("unknown export host command '%s'",
				   argv[0]);
	ret = host_parse(argc - 1, argv + 1, !verb, &r);
	if (ret)
		return ret;

	ret = open_ctx(&ctx);
	if (!ret) {
		ret = verb ? rmbd_export_host_del(ctx, r.export_name, r.host) :
			     rmbd_export_host_add(ctx, r.export_name, r.host,
						  r.has_secret ? r.secret : NULL,
						  r.secret_len);
		ret = ret < 0 ? request_error(ctx, verb ? "remove host" :
					      "add host", ret) : 0;
		rmbd_close(ctx);
	}
	memset(r.secret, 0, sizeof(r.secret));
	return ret;
}

static const struct command export_cmds[] = {
	{ "show", export_show },
	{ "add", export_add },
	{ "del", export_del },
	{ "host", export_host },
	{ "help", NULL },
	{ }
};

const struct object export_object = {
	.name	= "export",
	.help	= export_help,
	.cmds	= export_cmds,
};
