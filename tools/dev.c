// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: the client's devices (rmbd dev).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "rmbd.h"

/* In text, a field at its default value shows only with -d. */
static enum print_mode print_unless_default(bool is_default)
{
	return is_default && !opt.details ? PRINT_JSON : PRINT_ANY;
}

/*
 * One leg of a device: a line of its own below the device's in text (with
 * -d), an object of "legs" in JSON.
 */
static void print_leg(const struct rmbd_leg_info *l)
{
	if (!print_is_json())
		fputs("    ", stdout);
	print_open_object();
	print_u64(PRINT_ANY, "index", "leg %" PRIu64, l->index);
	print_string(PRINT_ANY, "state", "state %s",
		     rmbd_leg_state_name(l->state));
	print_string(PRINT_ANY, "addr", "addr %s", l->addr);
	print_u64(PRINT_ANY, "port", "port %" PRIu64, l->port);
	print_string(PRINT_ANY, "export", "export %s", l->export_name);
	print_size(PRINT_ANY, "size", "size %s", l->size);
	print_u64(PRINT_ANY, "nr_slabs", "nr_slabs %" PRIu64, l->nr_slabs);
	print_size(PRINT_ANY, "slab_size", "slab_size %s", l->slab_size);
	print_u64(PRINT_ANY, "reconnects", "reconnects %" PRIu64,
		  l->nr_reconnects);
	print_size(l->dirty ? PRINT_ANY : PRINT_JSON, "dirty", "dirty %s",
		   l->dirty);
	print_close_object();
}

/*
 * Where a pool's extents lie (with -d): the first extents until the
 * pattern repeats, each with its legs and the byte offset there.  Extent
 * e + P * j (P of them in the pattern) is on the same legs as extent e,
 * P * R / N extents further on each.
 */
static void print_placement(const struct rmbd_dev_info *d)
{
	uint64_t e, period, extents, offset;
	uint32_t leg, a = d->copies, b = d->nr_legs, t;
	unsigned int k;

	if (d->layout != RMBD_LAYOUT_POOL || !d->extent_size || !d->copies)
		return;
	while (b) {
		t = a % b;
		a = b;
		b = t;
	}
	extents = d->size / d->extent_size;
	period = d->nr_legs / a;
	if (period > extents)
		period = extents;
	if (!print_is_json())
		fputs("    placement: ", stdout);
	print_open_object_key("placement");
	print_size(PRINT_ANY, "extent_size", "extent_size %s",
		   d->extent_size);
	print_u64(PRINT_ANY, "extents", "extents %" PRIu64, extents);
	print_u64(PRINT_ANY, "period", "period %" PRIu64, period);
	print_size(PRINT_ANY, "period_leg_bytes", "period_leg_bytes %s",
		   period * d->copies / d->nr_legs * d->extent_size);
	if (!print_is_json())
		print_close_object();
	print_open_array_key("pattern");
	for (e = 0; e < period; e++) {
		if (!print_is_json())
			fputs("      ", stdout);
		print_open_object();
		print_u64(PRINT_ANY, "extent", "extent %" PRIu64, e);
		print_size(PRINT_ANY, "start", "start %s", e * d->extent_size);
		print_open_array_key("copies");
		for (k = 0; k < d->copies; k++) {
			if (rmbd_dev_place(d, e, k, &leg, &offset))
				break;
			if (print_is_json())
				print_open_object();
			print_u64(PRINT_ANY, "leg", "leg %" PRIu64, leg);
			print_size(PRINT_ANY, "offset", "offset %s", offset);
			if (print_is_json())
				print_close_object();
		}
		print_close_array();
		print_close_object();
	}
	print_close_array();
	if (print_is_json())
		print_close_object();
}

/*
 * The spares not used yet: a line each with -d, "spares" in JSON (an
 * empty array when none is left).
 */
void print_spares(const struct rmbd_dev_info *d)
{
	const struct rmbd_leg_info *l;
	uint32_t i;

	if (!d->nr_spares && !print_is_json())
		return;
	print_open_array_key("spares");
	for (i = 0; i < d->nr_spares; i++) {
		l = &d->spares[i];
		if (!print_is_json())
			fputs("    ", stdout);
		print_open_object();
		print_u64(PRINT_ANY, "index", "spare %" PRIu64, l->index);
		print_string(PRINT_ANY, "addr", "addr %s", l->addr);
		print_u64(PRINT_ANY, "port", "port %" PRIu64, l->port);
		print_string(PRINT_ANY, "export", "export %s", l->export_name);
		print_close_object();
	}
	print_close_array();
}

void print_legs(const struct rmbd_dev_info *d)
{
	uint32_t i;

	if (print_is_json())
		print_open_array_key("legs");
	for (i = 0; i < d->nr_legs; i++)
		print_leg(&d->legs[i]);
	if (print_is_json())
		print_close_array();
}

/* A live device with a leg that does not hold every write */
bool dev_degraded(const struct rmbd_dev_info *d)
{
	uint32_t i;

	for (i = 0; i < d->nr_legs; i++)
		if (d->legs[i].state != RMBD_LEG_STATE_UP)
			return d->state == RMBD_DEV_STATE_LIVE;
	return false;
}

static void print_counters(const struct rmbd_dev_counters *c)
{
	print_u64(PRINT_ANY, "reads", "reads %" PRIu64, c->reads);
	print_size(PRINT_ANY, "read_bytes", "read_bytes %s", c->read_bytes);
	print_u64(PRINT_ANY, "writes", "writes %" PRIu64, c->writes);
	print_size(PRINT_ANY, "write_bytes", "write_bytes %s", c->write_bytes);
	print_u64(PRINT_ANY, "discards", "discards %" PRIu64, c->discards);
	print_size(PRINT_ANY, "discard_bytes", "discard_bytes %s",
		   c->discard_bytes);
	print_u64(PRINT_ANY, "errors", "errors %" PRIu64, c->errors);
	print_u64(PRINT_ANY, "requeues", "requeues %" PRIu64, c->requeues);
	print_u64(PRINT_ANY, "timeouts", "timeouts %" PRIu64, c->timeouts);
	print_u64(PRINT_ANY, "in_flight", "in_flight %" PRIu64, c->in_flight);
}

/*
 * -s: the device's counters, "stats" in JSON, an indented line in text;
 * then each hardware queue's, if there (rmbd dev show DEV).
 */
static void print_dev_stats(const struct rmbd_dev_stats *st)
{
	const struct rmbd_dev_counters *q;
	uint32_t i;

	if (!st || !st->valid)
		return;
	if (!print_is_json())
		fputs("    ", stdout);
	print_open_object_key("stats");
	print_string(PRINT_TEXT, NULL, "%s", "stats");
	print_counters(&st->total);
	print_u64(PRINT_ANY, "reconnects", "reconnects %" PRIu64,
		  st->total.reconnects);
	if (!print_is_json())
		print_close_object();
	if (st->nr_queues) {
		print_open_array_key("queues");
		for (i = 0; i < st->nr_queues; i++) {
			q = &st->queues[i];
			if (!print_is_json())
				fputs("    ", stdout);
			print_open_object();
			print_u64(PRINT_ANY, "index", "queue %" PRIu64,
				  q->queue);
			print_bool(PRINT_ANY, "poll", "poll", q->poll);
			print_counters(q);
			print_close_object();
		}
		print_close_array();
	}
	if (print_is_json())
		print_close_object();
}

static void print_dev(const struct rmbd_dev_info *d,
		      const struct rmbd_dev_stats *st)
{
	print_open_object();
	print_u64(PRINT_JSON, "index", NULL, d->index);
	print_string(PRINT_ANY, "name", "%s:", d->name);
	print_size(PRINT_ANY, "size", "size %s", d->size);
	print_string(PRINT_ANY, "state", "state %s",
		     rmbd_dev_state_name(d->state));
	print_string(PRINT_ANY, "addr", "addr %s", d->addr);
	print_u64(PRINT_ANY, "port", "port %" PRIu64, d->port);
	print_string(PRINT_ANY, "export", "export %s", d->export_name);
	print_u64(PRINT_ANY, "queues", "queues %" PRIu64, d->nr_io_queues);
	print_u64(print_unless_default(!d->nr_poll_queues),
		  "poll_queues", "poll_queues %" PRIu64, d->nr_poll_queues);
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
	print_string(d->host[0] ? PRINT_ANY : PRINT_JSON, "host", "host %s",
		     d->host);
	print_bool(PRINT_ANY, "auth", "auth", d->auth);
	print_bool(PRINT_ANY, "read_only", "read_only", d->read_only);
	print_size(opt.details ? PRINT_ANY : PRINT_JSON, "slab_size",
		   "slab_size %s", d->slab_size);
	/* A device of one leg has no copies to speak of, in text */
	print_string(d->nr_legs > 1 ? PRINT_ANY : PRINT_JSON, "layout",
		     "layout %s", rmbd_layout_name(d->layout));
	print_u64(d->layout == RMBD_LAYOUT_POOL ? PRINT_ANY : PRINT_JSON,
		  "copies", "copies %" PRIu64, d->copies);
	print_u64(d->nr_legs > 1 ? PRINT_TEXT : PRINT_JSON, NULL,
		  "legs %" PRIu64, d->nr_legs);
	print_bool(PRINT_ANY, "degraded", "degraded", dev_degraded(d));
	if (print_is_json()) {
		print_dev_stats(st);
		print_legs(d);
		print_spares(d);
		print_placement(d);
		print_close_object();
	} else {
		print_close_object();
		print_dev_stats(st);
		if (opt.details) {
			print_legs(d);
			print_spares(d);
			print_placement(d);
		}
	}
}

static void dev_help(FILE *f)
{
	fprintf(f,
		"Usage: rmbd dev connect LEG [ LEG ... ] [ spare LEG ... ]\n"
		"                        [ layout { mirror | pool [ copies R ] } ]\n"
		"                        [ queues N ] [ pollq N ] [ depth N ]\n"
		"                        [ reconnect_delay SECONDS ] "
		"[ loss_timeout SECONDS ]\n"
		"                        [ shared ] [ read_only ] [ host HOST ] "
		"[ secret-file FILE ]\n"
		"       rmbd dev disconnect DEV [ force ]\n"
		"       rmbd dev replace DEV [ leg ] N with LEG\n"
		"       rmbd dev [ show [ DEV ] ]\n"
		"       rmbd dev help\n"
		"where  LEG := addr ADDR export NAME [ port PORT ]\n"
		"       DEV := rmbdN | /dev/rmbdN | N\n"
		"       ADDR := the target's IPv4 or IPv6 address; a link-local "
		"IPv6 one with\n"
		"               its scope, an interface's name or index: "
		"fe80::1%%eth0\n"
		"       PORT := 1-65535, default %d\n"
		"       LEG: a target's export; with several (at most %d), "
		"each holds a copy\n"
		"            of the device (layout mirror): the device lives "
		"on while one is up;\n"
		"            or (layout pool) the device is cut into extents "
		"(the smallest\n"
		"            slab size), each held by R legs (copies, 1 to the "
		"legs, default 2)\n"
		"       spare LEG: at most %d; a leg failed for good, or down for "
		"loss_timeout,\n"
		"            is replaced by the first (as by dev replace)\n"
		"       queues: 1-%d, default one per online CPU\n"
		"       pollq: polled queues for io_uring hipri, 0-%d, default 0\n"
		"       depth: 1-%d, default %d\n"
		"       reconnect_delay: seconds between reconnect attempts, "
		"1-%d, default %d\n"
		"       loss_timeout: seconds I/O waits for a lost connection "
		"before it fails,\n"
		"                     0-%d (0: fail at once), default %d\n"
		"       shared: connect even if this host has a device on that "
		"export already\n"
		"               (the target's export must be shared)\n"
		"       read_only: the device only reads; the target's RDMA "
		"device refuses writes\n"
		"       host: the host identity to give the target, default "
		"this machine's\n"
		"             (rmbd host)\n"
		"       replace: leg N of DEV goes, a new leg to LEG takes its "
		"place, and the\n"
		"                device's data (of a pool: the extents the leg "
		"holds) is copied\n"
		"                to it in the background (resync)\n",
		RMBD_DEFAULT_PORT, RMBD_MAX_LEGS, RMBD_MAX_SPARES,
		RMBD_MAX_IO_QUEUES,
		RMBD_MAX_IO_QUEUES,
		RMBD_MAX_QUEUE_DEPTH, RMBD_DEFAULT_QUEUE_DEPTH,
		RMBD_MAX_RECONNECT_DELAY, RMBD_DEFAULT_RECONNECT_DELAY,
		RMBD_MAX_LOSS_TIMEOUT, RMBD_DEFAULT_LOSS_TIMEOUT);
}

/* The keywords of dev connect; the first three are a leg's. */
enum {
	KW_ADDR, KW_EXPORT, KW_PORT, KW_QUEUES, KW_DEPTH, KW_POLLQ,
	KW_RECONNECT_DELAY, KW_LOSS_TIMEOUT, KW_SHARED, KW_HOST, KW_SECRET,
	KW_READ_ONLY, KW_LAYOUT, KW_COPIES, KW_SPARE,
};

#define MAX_GIVEN	(RMBD_MAX_LEGS + RMBD_MAX_SPARES)

/*
 * The legs of dev connect: each addr, export and port goes to the leg
 * being given, or starts the next one when that leg has it already (so
 * "addr A export E addr B export F" is two legs, and the keywords of one
 * leg come in any order); "spare" starts a spare leg.  The spares go to
 * @spares, the other keywords are left in @rest.
 */
static int parse_legs(struct keyword *kw, int argc, char **argv,
		      struct rmbd_leg_opts *legs, unsigned int *nr_legs,
		      struct rmbd_leg_opts *spares, unsigned int *nr_spares,
		      char **rest, int *nr_rest)
{
	const char *names[16], *port[MAX_GIVEN] = { NULL };
	struct keyword pk = { .name = "port", .seen = true };
	struct rmbd_leg_opts given[MAX_GIVEN] = { { 0 } };
	bool spare[MAX_GIVEN] = { false }, next_spare = false;
	unsigned int n = 0, i, nl = 0, ns = 0;
	const char **field;
	int k, a, ret;

	for (k = 0; kw[k].name; k++)
		names[k] = kw[k].name;
	names[k] = NULL;
	*nr_rest = 0;
	for (a = 0; a < argc; a++) {
		k = match(names, argv[a]);
		if (k == KW_SPARE) {
			next_spare = true;
			continue;
		}
		if (k < KW_ADDR || k > KW_PORT) {
			rest[(*nr_rest)++] = argv[a];
			if (k >= 0 && kw[k].has_value && a + 1 < argc)
				rest[(*nr_rest)++] = argv[++a];
			continue;
		}
		if (a + 1 >= argc)
			return usage_error("missing value for '%s'",
					   kw[k].name);
		if (!n)
			n = 1;
		field = k == KW_ADDR ? &given[n - 1].addr :
			k == KW_EXPORT ? &given[n - 1].export_name : &port[n - 1];
		/* A spare starts a leg, unless it is the first and empty */
		if (*field || (next_spare && (given[n - 1].addr ||
					      given[n - 1].export_name ||
					      port[n - 1]))) {
			if (n == MAX_GIVEN)
				return usage_error("too many legs and spares (at most %d legs and %d spares)",
						   RMBD_MAX_LEGS,
						   RMBD_MAX_SPARES);
			n++;
			field = k == KW_ADDR ? &given[n - 1].addr :
				k == KW_EXPORT ? &given[n - 1].export_name :
				&port[n - 1];
		}
		if (next_spare)
			spare[n - 1] = true;
		next_spare = false;
		*field = argv[++a];
	}
	if (next_spare)
		return usage_error("'spare' is followed by no leg");
	if (!n)
		return usage_error("missing keyword 'addr'");
	for (i = 0; i < n; i++) {
		if (!given[i].addr || !given[i].export_name) {
			if (n == 1)
				return usage_error("missing keyword '%s'",
						   given[i].addr ? "export" :
						   "addr");
			return usage_error("%s %u: missing keyword '%s'",
					   spare[i] ? "spare" : "leg",
					   spare[i] ? ns : nl,
					   given[i].addr ? "export" : "addr");
		}
		ret = check_addr(given[i].addr);
		if (!ret)
			ret = check_export_name(given[i].export_name);
		pk.value = port[i];
		if (!ret && port[i])
			ret = parse_port(&pk, &given[i].port);
		if (ret)
			return ret;
		if (spare[i] && ns == RMBD_MAX_SPARES)
			return usage_error("too many spares (at most %d)",
					   RMBD_MAX_SPARES);
		if (!spare[i] && nl == RMBD_MAX_LEGS)
			return usage_error("too many legs (at most %d)",
					   RMBD_MAX_LEGS);
		if (spare[i])
			spares[ns++] = given[i];
		else
			legs[nl++] = given[i];
	}
	if (!nl)
		return usage_error("missing keyword 'addr'");
	*nr_legs = nl;
	*nr_spares = ns;
	return 0;
}

int dev_connect_parse(int argc, char **argv, struct connect_req *r)
{
	struct keyword kw[] = {
		[KW_ADDR] = { .name = "addr", .has_value = true },
		[KW_EXPORT] = { .name = "export", .has_value = true },
		[KW_PORT] = { .name = "port", .has_value = true },
		[KW_QUEUES] = { .name = "queues", .has_value = true },
		[KW_DEPTH] = { .name = "depth", .has_value = true },
		[KW_POLLQ] = { .name = "pollq", .has_value = true },
		[KW_RECONNECT_DELAY] = { .name = "reconnect_delay",
					 .has_value = true },
		[KW_LOSS_TIMEOUT] = { .name = "loss_timeout",
				      .has_value = true },
		[KW_SHARED] = { .name = "shared" },
		[KW_HOST] = { .name = "host", .has_value = true },
		[KW_SECRET] = { .name = "secret-file", .has_value = true },
		[KW_READ_ONLY] = { .name = "read_only" },
		[KW_LAYOUT] = { .name = "layout", .has_value = true },
		[KW_COPIES] = { .name = "copies", .has_value = true },
		[KW_SPARE] = { .name = "spare" },
		{ }
	};
	struct rmbd_connect_opts *o = &r->o;
	size_t secret_len = 0;
	char **rest;
	int nr_rest, ret;

	memset(r, 0, sizeof(*r));

	rest = calloc(argc + 1, sizeof(*rest));
	if (!rest) {
		fprintf(stderr, "rmbd: %s\n", strerror(ENOMEM));
		return EXIT_FAIL;
	}
	ret = parse_legs(kw, argc, argv, r->legs, &r->nr_legs, r->spares,
			 &r->nr_spares, rest, &nr_rest);
	if (!ret)
		ret = parse_keywords(kw, nr_rest, rest);
	free(rest);
	if (ret)
		return ret;
	if (kw[KW_QUEUES].seen &&
	    parse_uint(kw[KW_QUEUES].value, 1, RMBD_MAX_IO_QUEUES,
		       &o->nr_io_queues))
		return usage_error("invalid queues '%s' (1-%d)",
				   kw[KW_QUEUES].value, RMBD_MAX_IO_QUEUES);
	if (kw[KW_DEPTH].seen &&
	    parse_uint(kw[KW_DEPTH].value, 1, RMBD_MAX_QUEUE_DEPTH,
		       &o->queue_depth))
		return usage_error("invalid depth '%s' (1-%d)",
				   kw[KW_DEPTH].value, RMBD_MAX_QUEUE_DEPTH);
	if (kw[KW_POLLQ].seen &&
	    parse_uint(kw[KW_POLLQ].value, 0, RMBD_MAX_IO_QUEUES,
		       &o->nr_poll_queues))
		return usage_error("invalid pollq '%s' (0-%d)",
				   kw[KW_POLLQ].value, RMBD_MAX_IO_QUEUES);
	if (kw[KW_RECONNECT_DELAY].seen &&
	    parse_uint(kw[KW_RECONNECT_DELAY].value, 1,
		       RMBD_MAX_RECONNECT_DELAY, &o->reconnect_delay))
		return usage_error("invalid reconnect_delay '%s' (1-%d)",
				   kw[KW_RECONNECT_DELAY].value,
				   RMBD_MAX_RECONNECT_DELAY);
	if (kw[KW_LOSS_TIMEOUT].seen &&
	    parse_uint(kw[KW_LOSS_TIMEOUT].value, 0, RMBD_MAX_LOSS_TIMEOUT,
		       &o->loss_timeout))
		return usage_error("invalid loss_timeout '%s' (0-%d)",
				   kw[KW_LOSS_TIMEOUT].value,
				   RMBD_MAX_LOSS_TIMEOUT);
	o->has_loss_timeout = kw[KW_LOSS_TIMEOUT].seen;
	o->shared = kw[KW_SHARED].seen;
	o->read_only = kw[KW_READ_ONLY].seen;
	if (kw[KW_HOST].seen && !rmbd_valid_host(kw[KW_HOST].value))
		return usage_error("invalid host identity '%s'",
				   kw[KW_HOST].value);
	o->host = kw[KW_HOST].value;
	if (kw[KW_LAYOUT].seen) {
		if (!strcmp(kw[KW_LAYOUT].value, "mirror"))
			o->layout = RMBD_LAYOUT_MIRROR;
		else if (!strcmp(kw[KW_LAYOUT].value, "pool"))
			o->layout = RMBD_LAYOUT_POOL;
		else
			return usage_error("invalid layout '%s' (mirror, pool)",
					   kw[KW_LAYOUT].value);
	}
	if (kw[KW_COPIES].seen) {
		unsigned int copies;

		if (o->layout != RMBD_LAYOUT_POOL)
			return usage_error("copies belongs to layout pool");
		if (parse_uint(kw[KW_COPIES].value, 1, r->nr_legs, &copies))
			return usage_error("invalid copies '%s' (1-%u, the legs)",
					   kw[KW_COPIES].value, r->nr_legs);
		o->copies = copies;
	}
	if (kw[KW_SECRET].seen) {
		ret = read_secret_kw(&kw[KW_SECRET], r->secret, &secret_len);
		if (ret)
			return ret;
		o->secret = r->secret;
		o->secret_len = secret_len;
	}
	if (r->nr_legs == 1 && !r->nr_spares) {
		o->addr = r->legs[0].addr;
		o->port = r->legs[0].port;
		o->export_name = r->legs[0].export_name;
	} else {
		o->legs = r->legs;
		o->nr_legs = r->nr_legs;
		o->spares = r->spares;
		o->nr_spares = r->nr_spares;
	}
	return 0;
}

static int dev_connect(int argc, char **argv)
{
	char host[RMBD_HOST_MAX];
	struct rmbd_dev_info info;
	struct connect_req r;
	struct rmbd_ctx *ctx;
	int ret;

	ret = dev_connect_parse(argc, argv, &r);
	if (ret)
		return ret;

	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_dev_connect(ctx, &r.o, &info);
	if (ret == -EACCES &&
	    !strcmp(rmbd_errmsg(ctx),
		    "the target does not allow this host to use the export") &&
	    (r.o.host || !rmbd_host_default(host, sizeof(host)))) {
		/* The names the kernel's message cannot give. */
		fprintf(stderr, "rmbd: failed to connect device: %s: host %s is not allowed to use export %s\n",
			strerror(EACCES), r.o.host ? r.o.host : host,
			r.legs[0].export_name);
		ret = EXIT_FAIL;
	} else if (ret < 0) {
		ret = request_error(ctx, "connect device", ret);
	} else {
		if (opt.json)
			print_dev(&info, NULL);
		else
			printf("%s\n", info.name);
		ret = 0;
	}
	rmbd_close(ctx);
	memset(r.secret, 0, sizeof(r.secret));
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

/* rmbd dev replace DEV [ leg ] N with addr ADDR export NAME [ port PORT ] */
static int dev_replace(int argc, char **argv)
{
	struct keyword kw[] = {
		{ .name = "addr", .has_value = true },
		{ .name = "export", .has_value = true },
		{ .name = "port", .has_value = true },
		{ }
	};
	struct rmbd_leg_opts to = { };
	struct rmbd_dev_info info;
	struct rmbd_ctx *ctx;
	uint32_t index, leg;
	int ret;

	if (argc < 1)
		return usage_error("missing device");
	if (rmbd_parse_dev(argv[0], &index))
		return usage_error("invalid device '%s'", argv[0]);
	argc--;
	argv++;
	if (argc && !strcmp(argv[0], "leg")) {
		argc--;
		argv++;
	}
	if (argc < 1)
		return usage_error("missing leg");
	if (parse_uint(argv[0], 0, RMBD_MAX_LEGS - 1, &leg))
		return usage_error("invalid leg '%s' (0-%d)", argv[0],
				   RMBD_MAX_LEGS - 1);
	if (argc < 2 || strcmp(argv[1], "with"))
		return usage_error("missing keyword 'with' after the leg");
	ret = parse_keywords(kw, argc - 2, argv + 2);
	if (!ret)
		ret = require(&kw[0]);
	if (!ret)
		ret = require(&kw[1]);
	if (!ret)
		ret = check_addr(kw[0].value);
	if (!ret)
		ret = check_export_name(kw[1].value);
	if (!ret && kw[2].seen)
		ret = parse_port(&kw[2], &to.port);
	if (ret)
		return ret;
	to.addr = kw[0].value;
	to.export_name = kw[1].value;
	ret = open_ctx(&ctx);
	if (ret)
		return ret;
	ret = rmbd_dev_replace(ctx, index, leg, &to, &info);
	if (ret < 0) {
		ret = request_error(ctx, "replace leg", ret);
	} else {
		if (opt.json)
			print_dev(&info, NULL);
		ret = 0;
	}
	rmbd_close(ctx);
	return ret;
}

/* A device as dev show lists it, with the totals of its counters (-s) */
struct dev_entry {
	struct rmbd_dev_info info;
	bool valid;
	struct rmbd_dev_counters total;
};

static int collect_dev(const struct rmbd_dev_info *d, void *arg)
{
	struct dev_entry e = { .info = *d };

	return vec_push(arg, &e);
}

static int collect_dev_stats(const struct rmbd_dev_info *d,
			     const struct rmbd_dev_stats *st, void *arg)
{
	struct dev_entry e = { .info = *d, .valid = st->valid,
			       .total = st->total };

	return vec_push(arg, &e);
}

static int dev_show(int argc, char **argv)
{
	struct vec vec = { .size = sizeof(struct dev_entry) };
	struct rmbd_dev_stats *st = NULL;
	struct rmbd_dev_info info;
	struct dev_entry *e;
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
	if (opt.stats) {
		st = calloc(1, sizeof(*st));
		if (!st) {
			fprintf(stderr, "rmbd: out of memory\n");
			return 1;
		}
	}
	ret = open_ctx(&ctx);
	if (ret) {
		free(st);
		return ret;
	}
	if (one) {
		ret = st ? rmbd_dev_get_stats(ctx, index, &info, st) :
		      rmbd_dev_get(ctx, index, &info);
		if (!ret)
			ret = collect_dev(&info, &vec);
		if (ret < 0)
			ret = request_error(ctx, "show device", ret);
	} else {
		ret = st ? rmbd_dev_list_stats(ctx, collect_dev_stats, &vec) :
		      rmbd_dev_list(ctx, collect_dev, &vec);
		if (ret < 0)
			ret = request_error(ctx, "list devices", ret);
	}
	if (!ret) {
		print_open_array();
		for (i = 0; i < vec.n; i++) {
			e = (struct dev_entry *)vec.v + i;
			/* A list has each device's totals, not its queues'. */
			if (st && !one) {
				st->valid = e->valid;
				st->total = e->total;
				st->nr_queues = 0;
			}
			print_dev(&e->info, st);
		}
		print_close_array();
	}
	free(vec.v);
	free(st);
	rmbd_close(ctx);
	return ret;
}

static const struct command dev_cmds[] = {
	{ "show", dev_show },
	{ "connect", dev_connect },
	{ "disconnect", dev_disconnect },
	{ "replace", dev_replace },
	{ "help", NULL },
	{ }
};

const struct object dev_object = {
	.name	= "dev",
	.help	= dev_help,
	.cmds	= dev_cmds,
};
