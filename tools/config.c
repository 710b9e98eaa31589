// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: config files (rmbd config).
 *
 * A config file holds rmbd commands, one a line, as -batch reads them,
 * but only those that make something: listener add, export add, export
 * host add and dev connect.  apply makes what the file says and is not
 * there yet, and leaves what is there alone: applying a file twice
 * changes nothing.  What is there and differs from the file (an export of
 * another size, a device with other options) is a conflict, which apply
 * reports before it changes anything.  remove undoes the file: devices
 * (found by their legs), hosts, exports and listeners, last line first.
 * check compares and changes nothing.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "print.h"
#include "rmbd.h"

enum cfg_kind { CFG_LISTENER, CFG_EXPORT, CFG_HOST, CFG_DEV };

/* What a line finds */
enum cfg_state {
	CFG_PRESENT,	/* there as the file says */
	CFG_MISSING,	/* not there: apply makes it */
	CFG_HOSTS,	/* an export that lacks hosts of its "hosts" */
	CFG_CONFLICT,	/* there, and not as the file says */
};

struct cfg_line {
	unsigned long lineno;
	enum cfg_kind kind;
	char *text;			/* the line, split in place */
	union {
		struct listener_req l;
		struct export_req e;
		struct host_req h;
		struct connect_req d;
	};
	enum cfg_state state;
	char why[256];			/* the conflict, or a note */
	/* CFG_DEV: the device it found or made, "" for none */
	char dev[32];
	uint32_t dev_index;
};

struct cfg {
	const char *file;
	uint32_t wait;			/* apply: seconds a connect is tried */
	/* One allocation a line: a parsed request points into its own line */
	struct cfg_line **lines;
	size_t n;
	struct rmbd_ctx *ctx;
	/* What is there, read when a line needs it */
	bool have_listeners, have_exports, have_devs;
	struct vec listeners, exports, devs;
};

static void cfg_free(struct cfg *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->lines[i]->kind == CFG_HOST)
			memset(c->lines[i]->h.secret, 0,
			       sizeof(c->lines[i]->h.secret));
		if (c->lines[i]->kind == CFG_DEV)
			memset(c->lines[i]->d.secret, 0,
			       sizeof(c->lines[i]->d.secret));
		free(c->lines[i]->text);
		free(c->lines[i]);
	}
	free(c->lines);
	free(c->listeners.v);
	free(c->exports.v);
	free(c->devs.v);
	if (c->ctx)
		rmbd_close(c->ctx);
}

/* Which command the words are: the kind, or a usage error. */
static int line_kind(int n, char **w, enum cfg_kind *kind, int *skip)
{
	static const char *const objs[] = { "listener", "export", "dev", NULL };
	static const char *const add[] = { "add", NULL };
	static const char *const host[] = { "host", NULL };
	static const char *const connect[] = { "connect", NULL };
	int o;

	o = match(objs, w[0]);
	if (o < 0)
		goto bad;
	cur_object = objs[o];
	if (n < 2)
		goto bad;
	if (o == 0 && match(add, w[1]) == 0) {
		*kind = CFG_LISTENER;
		*skip = 2;
		return 0;
	}
	if (o == 1 && match(add, w[1]) == 0) {
		*kind = CFG_EXPORT;
		*skip = 2;
		return 0;
	}
	if (o == 1 && match(host, w[1]) == 0 && n > 2 &&
	    match(add, w[2]) == 0) {
		*kind = CFG_HOST;
		*skip = 3;
		return 0;
	}
	if (o == 2 && match(connect, w[1]) == 0) {
		*kind = CFG_DEV;
		*skip = 2;
		return 0;
	}
bad:
	cur_object = "config";
	return usage_error("a config file holds only listener add, export add, export host add and dev connect, not '%s%s%s'",
			   w[0], n > 1 ? " " : "", n > 1 ? w[1] : "");
}

/* Read and parse the whole file: a usage error anywhere changes nothing. */
static int cfg_read(struct cfg *c)
{
	char *line = NULL, *words[MAX_LINE_WORDS];
	unsigned long lineno = 0;
	struct cfg_line *l, **grown;
	size_t cap = 0, alloc = 0;
	const char *why;
	int n, skip = 0, ret = 0;
	FILE *f;

	f = strcmp(c->file, "-") ? fopen(c->file, "re") : stdin;
	if (!f) {
		fprintf(stderr, "rmbd: %s: cannot open: %s\n", c->file,
			strerror(errno));
		return EXIT_FAIL;
	}
	while (!ret && getline(&line, &cap, f) >= 0) {
		lineno++;
		if (c->n == alloc) {
			alloc = alloc ? 2 * alloc : 8;
			grown = realloc(c->lines, alloc * sizeof(*grown));
			if (!grown) {
				fprintf(stderr, "rmbd: %s\n", strerror(ENOMEM));
				ret = EXIT_FAIL;
				break;
			}
			c->lines = grown;
		}
		l = calloc(1, sizeof(*l));
		if (l)
			l->text = strdup(line);
		if (!l || !l->text) {
			free(l);
			fprintf(stderr, "rmbd: %s\n", strerror(ENOMEM));
			ret = EXIT_FAIL;
			break;
		}
		c->lines[c->n++] = l;
		l->lineno = lineno;
		n = split_words(l->text, words, &why);
		if (n < 0) {
			fprintf(stderr, "rmbd: %s:%lu: %s\n", c->file, lineno,
				why);
			ret = EXIT_USAGE;
			break;
		}
		if (!n) {
			/* A blank line or a comment */
			free(l->text);
			free(l);
			c->n--;
			continue;
		}
		ret = line_kind(n, words, &l->kind, &skip);
		if (!ret) {
			n -= skip;
			switch (l->kind) {
			case CFG_LISTENER:
				ret = listener_add_parse(n, words + skip, &l->l);
				break;
			case CFG_EXPORT:
				ret = export_add_parse(n, words + skip, &l->e);
				break;
			case CFG_HOST:
				ret = export_host_add_parse(n, words + skip,
							    &l->h);
				break;
			case CFG_DEV:
				ret = dev_connect_parse(n, words + skip, &l->d);
				break;
			}
		}
		if (ret)
			fprintf(stderr, "rmbd: %s:%lu: invalid line\n",
				c->file, lineno);
	}
	if (!ret && ferror(f)) {
		fprintf(stderr, "rmbd: cannot read %s\n", c->file);
		ret = EXIT_FAIL;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	cur_object = NULL;
	return ret;
}

/*
 * Whether two addresses are the same: as the kernel parses them (an IPv6
 * address in any spelling, a scope by name or index), else as strings.
 */
static bool same_addr(const char *a, const char *b)
{
	char ca[RMBD_ADDR_MAX], cb[RMBD_ADDR_MAX], *sa, *sb;
	unsigned char na[16], nb[16];
	unsigned int ia = 0, ib = 0;
	int fam;

	if (!strcmp(a, b))
		return true;
	snprintf(ca, sizeof(ca), "%s", a);
	snprintf(cb, sizeof(cb), "%s", b);
	sa = strchr(ca, '%');
	sb = strchr(cb, '%');
	if (sa) {
		*sa++ = '\0';
		ia = if_nametoindex(sa);
		if (!ia)
			ia = (unsigned int)strtoul(sa, NULL, 10);
	}
	if (sb) {
		*sb++ = '\0';
		ib = if_nametoindex(sb);
		if (!ib)
			ib = (unsigned int)strtoul(sb, NULL, 10);
	}
	fam = strchr(ca, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(fam, ca, na) != 1 || inet_pton(fam, cb, nb) != 1)
		return false;
	return ia == ib && !memcmp(na, nb, fam == AF_INET6 ? 16 : 4);
}

static uint16_t port_or_default(uint16_t port)
{
	return port ? port : RMBD_DEFAULT_PORT;
}

static int push_listener(const struct rmbd_listener_info *l, void *arg)
{
	return vec_push(arg, l);
}

static int push_export(const struct rmbd_export_info *e, void *arg)
{
	return vec_push(arg, e);
}

static int push_dev(const struct rmbd_dev_info *d, void *arg)
{
	return vec_push(arg, d);
}

static int cfg_ctx(struct cfg *c)
{
	return c->ctx ? 0 : open_ctx(&c->ctx);
}

/* Read what is there, as the lines need it: 0 or EXIT_FAIL. */
static int cfg_load(struct cfg *c, enum cfg_kind kind)
{
	uint64_t total;
	int ret = cfg_ctx(c);

	if (ret)
		return ret;
	switch (kind) {
	case CFG_LISTENER:
		if (c->have_listeners)
			return 0;
		c->listeners.size = sizeof(struct rmbd_listener_info);
		ret = rmbd_listener_list(c->ctx, push_listener, &c->listeners);
		if (ret < 0)
			return request_error(c->ctx, "list listeners", ret);
		c->have_listeners = true;
		return 0;
	case CFG_EXPORT:
	case CFG_HOST:
		if (c->have_exports)
			return 0;
		c->exports.size = sizeof(struct rmbd_export_info);
		ret = rmbd_export_list(c->ctx, push_export, &c->exports,
				       &total);
		if (ret < 0)
			return request_error(c->ctx, "list exports", ret);
		c->have_exports = true;
		return 0;
	case CFG_DEV:
		if (c->have_devs)
			return 0;
		c->devs.size = sizeof(struct rmbd_dev_info);
		ret = rmbd_dev_list(c->ctx, push_dev, &c->devs);
		if (ret < 0)
			return request_error(c->ctx, "list devices", ret);
		c->have_devs = true;
		return 0;
	}
	return 0;
}

static const struct rmbd_listener_info *find_listener(struct cfg *c,
						      const struct listener_req *r)
{
	const struct rmbd_listener_info *l = c->listeners.v;
	size_t i;

	for (i = 0; i < c->listeners.n; i++)
		if (same_addr(l[i].addr, r->addr) &&
		    l[i].port == port_or_default(r->port))
			return &l[i];
	return NULL;
}

static const struct rmbd_export_info *find_export(struct cfg *c,
						  const char *name)
{
	const struct rmbd_export_info *e = c->exports.v;
	size_t i;

	for (i = 0; i < c->exports.n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

static bool in_list(const char *host, const char (*list)[RMBD_HOST_MAX],
		    uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], host))
			return true;
	return false;
}

/* Whether the file names host for export, in its hosts or a host line */
static bool file_names_host(const struct cfg *c, const char *export,
			    const char *host)
{
	const struct cfg_line *l;
	size_t i;
	uint32_t k;

	for (i = 0; i < c->n; i++) {
		l = c->lines[i];
		if (l->kind == CFG_HOST && !strcmp(l->h.export_name, export) &&
		    !strcmp(l->h.host, host))
			return true;
		if (l->kind != CFG_EXPORT || strcmp(l->e.o.name, export))
			continue;
		for (k = 0; k < l->e.o.nr_hosts; k++)
			if (!strcmp(l->e.hosts[k], host))
				return true;
	}
	return false;
}

static void conflict(struct cfg_line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void conflict(struct cfg_line *l, const char *fmt, ...)
{
	va_list ap;

	l->state = CFG_CONFLICT;
	va_start(ap, fmt);
	vsnprintf(l->why, sizeof(l->why), fmt, ap);
	va_end(ap);
}

static const char *on_off(bool b)
{
	return b ? "on" : "off";
}

static void plan_listener(struct cfg *c, struct cfg_line *l)
{
	const struct rmbd_listener_info *li = find_listener(c, &l->l);
	uint32_t want = l->l.max_sessions ? l->l.max_sessions :
			RMBD_LISTENER_SESSIONS;

	if (!li)
		l->state = CFG_MISSING;
	else if (li->max_sessions != want)
		conflict(l, "it takes max_sessions %u, the file says %u",
			 li->max_sessions, want);
	else
		l->state = CFG_PRESENT;
}

static void plan_export(struct cfg *c, struct cfg_line *l)
{
	const struct rmbd_export_info *e = find_export(c, l->e.o.name);
	const struct rmbd_export_opts *o = &l->e.o;
	char has[32], want[32];
	uint32_t i;

	if (!e) {
		l->state = CFG_MISSING;
		return;
	}
	l->state = CFG_PRESENT;
	if (e->size != o->size) {
		format_size(has, sizeof(has), e->size, true);
		format_size(want, sizeof(want), o->size, true);
		return conflict(l, "its size is %s, the file says %s", has,
				want);
	}
	if (o->slab_size && e->slab_size != o->slab_size) {
		format_size(has, sizeof(has), e->slab_size, true);
		format_size(want, sizeof(want), o->slab_size, true);
		return conflict(l, "its slab size is %s, the file says %s", has,
				want);
	}
	if (e->any_host != o->any_host)
		return conflict(l, "any_host is %s, the file says %s",
				on_off(e->any_host), on_off(o->any_host));
	if (e->shared != o->shared)
		return conflict(l, "shared is %s, the file says %s",
				on_off(e->shared), on_off(o->shared));
	if (e->read_only != o->read_only)
		return conflict(l, "read_only is %s, the file says %s",
				on_off(e->read_only), on_off(o->read_only));
	for (i = 0; i < e->nr_hosts; i++)
		if (!file_names_host(c, e->name, e->hosts[i]))
			return conflict(l, "it allows host %s, which the file does not name",
					e->hosts[i]);
	for (i = 0; i < o->nr_hosts; i++) {
		if (in_list(l->e.hosts[i], e->auth_hosts, e->nr_auth_hosts))
			return conflict(l, "host %s has a secret, the file gives none",
					l->e.hosts[i]);
		if (!in_list(l->e.hosts[i], e->hosts, e->nr_hosts))
			l->state = CFG_HOSTS;
	}
}

static void plan_host(struct cfg *c, struct cfg_line *l)
{
	const struct rmbd_export_info *e = find_export(c, l->h.export_name);
	bool auth;

	if (!e || !in_list(l->h.host, e->hosts, e->nr_hosts)) {
		l->state = CFG_MISSING;
		return;
	}
	auth = in_list(l->h.host, e->auth_hosts, e->nr_auth_hosts);
	if (auth && !l->h.has_secret)
		return conflict(l, "the host has a secret, the file gives none");
	if (!auth && l->h.has_secret)
		return conflict(l, "the host has no secret, the file gives one");
	l->state = CFG_PRESENT;
}

/* Whether leg @k goes to (addr, port, export) */
static bool is_leg(const struct rmbd_leg_opts *k, const char *addr,
		   uint16_t port, const char *export)
{
	return same_addr(k->addr, addr) && port_or_default(k->port) == port &&
	       !strcmp(k->export_name, export);
}

/* Leg @i of the request's legs, then spares */
static const struct rmbd_leg_opts *req_leg(const struct connect_req *r,
					   unsigned int i)
{
	return i < r->nr_legs ? &r->legs[i] : &r->spares[i - r->nr_legs];
}

/* Whether (addr, port, export) is a leg or a spare of the request */
static bool req_names(const struct connect_req *r, const char *addr,
		      uint16_t port, const char *export)
{
	unsigned int i;

	for (i = 0; i < r->nr_legs + r->nr_spares; i++)
		if (is_leg(req_leg(r, i), addr, port, export))
			return true;
	return false;
}

/* Leg @i of the device's legs, then spares */
static const struct rmbd_leg_info *dev_leg(const struct rmbd_dev_info *d,
					   uint32_t i)
{
	return i < d->nr_legs ? &d->legs[i] : &d->spares[i - d->nr_legs];
}

/* Whether device d has a leg or a spare on leg k of the request */
static bool dev_has(const struct rmbd_dev_info *d, const struct rmbd_leg_opts *k)
{
	const struct rmbd_leg_info *li;
	uint32_t i;

	if (!d->nr_legs)
		return is_leg(k, d->addr, d->port, d->export_name);
	for (i = 0; i < d->nr_legs + d->nr_spares; i++) {
		li = dev_leg(d, i);
		if (is_leg(k, li->addr, li->port, li->export_name))
			return true;
	}
	return false;
}

/* Whether device d is on any leg or spare of the request */
static bool dev_overlaps(const struct rmbd_dev_info *d,
			 const struct connect_req *r)
{
	unsigned int i;

	for (i = 0; i < r->nr_legs + r->nr_spares; i++)
		if (dev_has(d, req_leg(r, i)))
			return true;
	return false;
}

/* The device's options against the request's: a conflict, or none. */
static void compare_dev(struct cfg_line *l, const struct rmbd_dev_info *d)
{
	const struct connect_req *r = &l->d;
	const struct rmbd_connect_opts *o = &r->o;
	uint8_t layout = o->layout ? o->layout : RMBD_LAYOUT_MIRROR;
	uint32_t cpus = (uint32_t)get_nprocs_conf();
	char host[RMBD_HOST_MAX];
	const struct rmbd_leg_info *li;
	uint32_t i, want;

	if (d->state == RMBD_DEV_STATE_FAILED)
		return conflict(l, "%s has failed: disconnect it first", d->name);
	if (d->layout && d->layout != layout)
		return conflict(l, "%s is a %s, the file says %s", d->name,
				rmbd_layout_name(d->layout),
				rmbd_layout_name(layout));
	if (d->nr_legs && d->nr_legs != r->nr_legs)
		return conflict(l, "%s has %u leg%s, the file says %u",
				d->name, d->nr_legs, d->nr_legs == 1 ? "" : "s",
				r->nr_legs);
	if (layout == RMBD_LAYOUT_POOL && d->copies &&
	    d->copies != (o->copies ? o->copies : 2))
		return conflict(l, "%s keeps %u copies, the file says %u",
				d->name, d->copies, o->copies ? o->copies : 2);
	for (i = 0; i < d->nr_legs + d->nr_spares; i++) {
		li = dev_leg(d, i);
		if (!req_names(r, li->addr, li->port, li->export_name))
			return conflict(l, "%s has a %s on addr %s export %s, which the file does not name",
					d->name, i < d->nr_legs ? "leg" : "spare",
					li->addr, li->export_name);
	}
	if (o->read_only && !d->read_only)
		return conflict(l, "%s writes, the file says read_only", d->name);
	if (d->shared != o->shared)
		return conflict(l, "shared is %s on %s, the file says %s",
				on_off(d->shared), d->name, on_off(o->shared));
	if (!o->host && rmbd_host_default(host, sizeof(host)))
		host[0] = '\0';
	if (d->host[0] && strcmp(d->host, o->host ? o->host : host))
		return conflict(l, "%s gives host %s, the file %s", d->name,
				d->host, o->host ? o->host : host);
	if (d->auth != !!o->secret)
		return conflict(l, "%s %s, the file %s", d->name,
				d->auth ? "authenticates" : "does not authenticate",
				o->secret ? "gives a secret" : "gives no secret");
	/* The kernel gives no more queues of a kind than CPUs */
	want = o->nr_io_queues < cpus ? o->nr_io_queues : cpus;
	if (o->nr_io_queues && d->nr_io_queues != want)
		return conflict(l, "%s has %u queues, the file says %u",
				d->name, d->nr_io_queues, o->nr_io_queues);
	want = o->nr_poll_queues < cpus ? o->nr_poll_queues : cpus;
	if (d->nr_poll_queues != want)
		return conflict(l, "%s has %u poll queues, the file says %u",
				d->name, d->nr_poll_queues, o->nr_poll_queues);
	/* ... and a shallower queue than asked where the RDMA device must */
	want = o->queue_depth ? o->queue_depth : RMBD_DEFAULT_QUEUE_DEPTH;
	if (d->queue_depth > want)
		return conflict(l, "%s has depth %u, the file says %u",
				d->name, d->queue_depth, want);
	if (d->queue_depth < want)
		snprintf(l->why, sizeof(l->why),
			 "%s has depth %u, the file says %u (as deep as its RDMA device allows?)",
			 d->name, d->queue_depth, want);
	want = o->reconnect_delay ? o->reconnect_delay :
	       RMBD_DEFAULT_RECONNECT_DELAY;
	if (d->reconnect_delay && d->reconnect_delay != want)
		return conflict(l, "%s has reconnect_delay %u, the file says %u",
				d->name, d->reconnect_delay, want);
	want = o->has_loss_timeout ? o->loss_timeout :
	       RMBD_DEFAULT_LOSS_TIMEOUT;
	if (d->loss_timeout != want)
		return conflict(l, "%s has loss_timeout %u, the file says %u",
				d->name, d->loss_timeout, want);
	/* A leg the device no longer has: a spare or replace took over */
	for (i = 0; i < r->nr_legs; i++)
		if (!dev_has(d, &r->legs[i]))
			snprintf(l->why, sizeof(l->why),
				 "%s no longer has leg addr %s export %s (replaced)",
				 d->name, r->legs[i].addr,
				 r->legs[i].export_name);
}

static void plan_dev(struct cfg *c, struct cfg_line *l)
{
	const struct rmbd_dev_info *d = c->devs.v, *found = NULL;
	size_t i;

	for (i = 0; i < c->devs.n; i++) {
		if (!dev_overlaps(&d[i], &l->d))
			continue;
		if (found)
			return conflict(l, "its legs are on two devices, %s and %s",
					found->name, d[i].name);
		found = &d[i];
	}
	if (!found) {
		l->state = CFG_MISSING;
		return;
	}
	snprintf(l->dev, sizeof(l->dev), "%s", found->name);
	l->dev_index = found->index;
	l->state = CFG_PRESENT;
	compare_dev(l, found);
}

/* Whether line a and line b (a before b) make the same thing */
static bool same_thing(const struct cfg_line *a, const struct cfg_line *b,
		       const char **what)
{
	unsigned int i;

	if (a->kind == CFG_LISTENER && b->kind == CFG_LISTENER) {
		*what = "listener";
		return same_addr(a->l.addr, b->l.addr) &&
		       port_or_default(a->l.port) == port_or_default(b->l.port);
	}
	if (a->kind == CFG_EXPORT && b->kind == CFG_EXPORT) {
		*what = "export";
		return !strcmp(a->e.o.name, b->e.o.name);
	}
	if (b->kind == CFG_HOST && (a->kind == CFG_HOST ||
				    a->kind == CFG_EXPORT)) {
		*what = "host of the export";
		if (a->kind == CFG_HOST)
			return !strcmp(a->h.export_name, b->h.export_name) &&
			       !strcmp(a->h.host, b->h.host);
		if (strcmp(a->e.o.name, b->h.export_name))
			return false;
		for (i = 0; i < a->e.o.nr_hosts; i++)
			if (!strcmp(a->e.hosts[i], b->h.host))
				return true;
		return false;
	}
	if (a->kind == CFG_DEV && b->kind == CFG_DEV) {
		*what = "leg";
		for (i = 0; i < b->d.nr_legs + b->d.nr_spares; i++) {
			const struct rmbd_leg_opts *k = req_leg(&b->d, i);

			if (req_names(&a->d, k->addr, port_or_default(k->port),
				      k->export_name))
				return true;
		}
	}
	return false;
}

/*
 * A thing made twice (an export, a listener, a host of an export, a leg
 * of a device) is an error of the file: the second would be refused
 * halfway through apply.  0 or a usage error.
 */
static int cfg_dups(const struct cfg *c)
{
	const char *what;
	size_t i, k;

	const struct cfg_line *a, *b;

	for (i = 0; i < c->n; i++) {
		b = c->lines[i];
		for (k = 0; k < i; k++) {
			a = c->lines[k];
			if (same_thing(a, b, &what)) {
				fprintf(stderr, "rmbd: %s:%lu: the %s is on line %lu already\n",
					c->file, b->lineno, what, a->lineno);
				return EXIT_USAGE;
			}
			if (a->kind == CFG_HOST && b->kind == CFG_EXPORT &&
			    !strcmp(a->h.export_name, b->e.o.name)) {
				fprintf(stderr, "rmbd: %s:%lu: export %s is added on line %lu, after its host\n",
					c->file, a->lineno, b->e.o.name,
					b->lineno);
				return EXIT_USAGE;
			}
		}
	}
	return 0;
}

/* Compare each line with what is there: 0, or EXIT_FAIL (a request). */
static int cfg_plan(struct cfg *c)
{
	struct cfg_line *l;
	size_t i;
	int ret;

	for (i = 0; i < c->n; i++) {
		l = c->lines[i];
		ret = cfg_load(c, l->kind);
		if (ret)
			return ret;
		switch (l->kind) {
		case CFG_LISTENER:
			plan_listener(c, l);
			break;
		case CFG_EXPORT:
			plan_export(c, l);
			break;
		case CFG_HOST:
			plan_host(c, l);
			break;
		case CFG_DEV:
			plan_dev(c, l);
			break;
		}
	}
	return 0;
}

/* What a line is about, for messages: "export foo", "rmbd0 (...)" */
static void describe(const struct cfg_line *l, char *buf, size_t len)
{
	const struct connect_req *r = &l->d;

	switch (l->kind) {
	case CFG_LISTENER:
		snprintf(buf, len, "listener %s port %u", l->l.addr,
			 port_or_default(l->l.port));
		break;
	case CFG_EXPORT:
		snprintf(buf, len, "export %s", l->e.o.name);
		break;
	case CFG_HOST:
		snprintf(buf, len, "export %s host %s", l->h.export_name,
			 l->h.host);
		break;
	case CFG_DEV:
		snprintf(buf, len, "%s%saddr %s port %u export %s%s%s",
			 l->dev, l->dev[0] ? " (" : "", r->legs[0].addr,
			 port_or_default(r->legs[0].port),
			 r->legs[0].export_name,
			 r->nr_legs + r->nr_spares > 1 ? " ..." : "",
			 l->dev[0] ? ")" : "");
		break;
	}
}

static const char *const kind_names[] = {
	[CFG_LISTENER] = "listener",
	[CFG_EXPORT] = "export",
	[CFG_HOST] = "host",
	[CFG_DEV] = "dev",
};

/* One line's outcome: text "WHAT: RESULT", or an object in JSON. */
static void report(const struct cfg *c, const struct cfg_line *l,
		   const char *result)
{
	char what[160];

	describe(l, what, sizeof(what));
	if (l->state == CFG_CONFLICT || !strcmp(result, "failed"))
		fprintf(stderr, "rmbd: %s:%lu: %s: %s%s%s\n", c->file,
			l->lineno, what, result, l->why[0] ? ": " : "",
			l->why);
	else if (l->why[0])
		fprintf(stderr, "rmbd: %s:%lu: note: %s\n", c->file,
			l->lineno, l->why);
	if (!print_is_json()) {
		if (l->state != CFG_CONFLICT && strcmp(result, "failed"))
			printf("%s: %s\n", what, result);
		return;
	}
	print_open_object();
	print_u64(PRINT_JSON, "line", NULL, l->lineno);
	print_string(PRINT_JSON, "object", NULL, kind_names[l->kind]);
	switch (l->kind) {
	case CFG_LISTENER:
		print_string(PRINT_JSON, "addr", NULL, l->l.addr);
		print_u64(PRINT_JSON, "port", NULL, port_or_default(l->l.port));
		break;
	case CFG_EXPORT:
		print_string(PRINT_JSON, "export", NULL, l->e.o.name);
		break;
	case CFG_HOST:
		print_string(PRINT_JSON, "export", NULL, l->h.export_name);
		print_string(PRINT_JSON, "host", NULL, l->h.host);
		break;
	case CFG_DEV:
		if (l->dev[0])
			print_string(PRINT_JSON, "dev", NULL, l->dev);
		print_string(PRINT_JSON, "addr", NULL, l->d.legs[0].addr);
		print_string(PRINT_JSON, "export", NULL,
			     l->d.legs[0].export_name);
		break;
	}
	print_string(PRINT_JSON, "result", NULL, result);
	if (l->why[0])
		print_string(PRINT_JSON, l->state == CFG_CONFLICT ||
			     !strcmp(result, "failed") ? "reason" : "note",
			     NULL, l->why);
	print_close_object();
}

/* The library's error of a request, as the line's reason */
static void failed(struct cfg *c, struct cfg_line *l, int err)
{
	const char *msg = rmbd_errmsg(c->ctx);

	snprintf(l->why, sizeof(l->why), "%s%s%s", strerror(-err),
		 msg && *msg ? ": " : "", msg ? msg : "");
}

/* Errors of a connect that a target still coming up gives */
static bool transient(struct cfg *c, int err)
{
	switch (err) {
	case -ENOENT:
		/* no export of that name yet, unless the module is missing */
		return !rmbd_missing_modules(c->ctx);
	case -EACCES:		/* its host not added yet */
	case -EAGAIN:
	case -ECONNREFUSED:	/* no listener yet */
	case -ECONNRESET:
	case -ETIMEDOUT:
	case -EHOSTUNREACH:	/* no route, no RDMA device yet */
	case -ENETUNREACH:
	case -EADDRNOTAVAIL:
	case -ENODEV:
		return true;
	}
	return false;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Connect the line's device, trying for c->wait seconds: 0 or -errno */
static int connect_dev(struct cfg *c, struct cfg_line *l)
{
	double until = now() + c->wait;
	struct rmbd_dev_info info;
	int ret, tries = 0;

	for (;;) {
		ret = rmbd_dev_connect(c->ctx, &l->d.o, &info);
		if (!ret) {
			snprintf(l->dev, sizeof(l->dev), "%s", info.name);
			l->dev_index = info.index;
			return 0;
		}
		if (!transient(c, ret) || now() + 1 > until)
			return ret;
		if (!tries++)
			fprintf(stderr, "rmbd: %s:%lu: %s: %s, trying again for up to %u s\n",
				c->file, l->lineno, l->d.legs[0].addr,
				strerror(-ret), c->wait);
		sleep(1);
	}
}

/*
 * Add the line's listener, trying for c->wait seconds while its address
 * is not there yet (the network still coming up): 0 or -errno
 */
static int add_listener(struct cfg *c, struct cfg_line *l)
{
	double until = now() + c->wait;
	int ret, tries = 0;

	for (;;) {
		ret = rmbd_listener_add(c->ctx, l->l.addr, l->l.port,
					l->l.max_sessions, NULL);
		if ((ret != -EADDRNOTAVAIL && ret != -ENODEV) ||
		    now() + 1 > until)
			return ret;
		if (!tries++)
			fprintf(stderr, "rmbd: %s:%lu: %s: %s, trying again for up to %u s\n",
				c->file, l->lineno, l->l.addr, strerror(-ret),
				c->wait);
		sleep(1);
	}
}

/* Make a missing line's object: 0, or -errno with l->why set */
static int make(struct cfg *c, struct cfg_line *l)
{
	const struct rmbd_export_info *e;
	uint32_t i;
	int ret = 0;

	switch (l->kind) {
	case CFG_LISTENER:
		ret = add_listener(c, l);
		break;
	case CFG_EXPORT:
		if (l->state == CFG_MISSING) {
			ret = rmbd_export_create(c->ctx, &l->e.o, NULL);
			break;
		}
		/* CFG_HOSTS: add the hosts of "hosts" it lacks */
		e = find_export(c, l->e.o.name);
		for (i = 0; !ret && e && i < l->e.o.nr_hosts; i++)
			if (!in_list(l->e.hosts[i], e->hosts, e->nr_hosts))
				ret = rmbd_export_host_add(c->ctx, l->e.o.name,
							   l->e.hosts[i], NULL,
							   0);
		break;
	case CFG_HOST:
		ret = rmbd_export_host_add(c->ctx, l->h.export_name, l->h.host,
					   l->h.has_secret ? l->h.secret : NULL,
					   l->h.secret_len);
		break;
	case CFG_DEV:
		ret = connect_dev(c, l);
		break;
	}
	if (ret < 0)
		failed(c, l, ret);
	return ret;
}

static const char *const made[] = {
	[CFG_LISTENER] = "added",
	[CFG_EXPORT] = "added",
	[CFG_HOST] = "added",
	[CFG_DEV] = "connected",
};

/*
 * FILE and the keywords after it, the file read and compared with what
 * is there: 0, or the exit status with c freed.
 */
static int cfg_start(int argc, char **argv, struct keyword *kw,
		     struct cfg *c)
{
	int ret;

	memset(c, 0, sizeof(*c));
	if (argc < 1)
		return usage_error("missing config file");
	c->file = argv[0];
	ret = parse_keywords(kw, argc - 1, argv + 1);
	if (!ret && kw[0].name && kw[0].seen &&
	    parse_uint(kw[0].value, 0, RMBD_MAX_LOSS_TIMEOUT, &c->wait))
		ret = usage_error("invalid wait '%s' (0-%d seconds)",
				  kw[0].value, RMBD_MAX_LOSS_TIMEOUT);
	if (!ret)
		ret = cfg_read(c);
	if (!ret)
		ret = cfg_dups(c);
	if (!ret)
		ret = cfg_plan(c);
	if (ret)
		cfg_free(c);
	return ret;
}

/*
 * rmbd config apply FILE [ wait SECONDS ]: every conflict first, and then
 * nothing changes; else what is missing, in the file's order, stopping
 * at the first that fails.
 */
static int config_apply(int argc, char **argv)
{
	struct keyword kw[] = {
		{ .name = "wait", .has_value = true },
		{ }
	};
	bool bad = false;
	struct cfg c;
	size_t i;
	int ret;

	ret = cfg_start(argc, argv, kw, &c);
	if (ret)
		return ret;
	print_open_array();
	for (i = 0; i < c.n; i++) {
		if (c.lines[i]->state != CFG_CONFLICT)
			continue;
		report(&c, c.lines[i], "conflict");
		bad = true;
	}
	for (i = 0; !bad && i < c.n; i++) {
		struct cfg_line *l = c.lines[i];

		if (l->state == CFG_PRESENT) {
			report(&c, l, "unchanged");
			continue;
		}
		if (make(&c, l) < 0) {
			report(&c, l, "failed");
			bad = true;
			break;
		}
		report(&c, l, l->state == CFG_HOSTS ? "hosts added" :
			      made[l->kind]);
	}
	print_close_array();
	cfg_free(&c);
	return bad ? EXIT_FAIL : 0;
}

/* rmbd config check FILE: exit 0 when everything is as the file says */
static int config_check(int argc, char **argv)
{
	struct keyword kw[] = { { } };
	bool differs = false;
	struct cfg c;
	size_t i;
	int ret;

	ret = cfg_start(argc, argv, kw, &c);
	if (ret)
		return ret;
	print_open_array();
	for (i = 0; i < c.n; i++) {
		struct cfg_line *l = c.lines[i];

		report(&c, l, l->state == CFG_PRESENT ? "unchanged" :
			      l->state == CFG_CONFLICT ? "conflict" :
			      l->state == CFG_HOSTS ? "hosts missing" :
			      "missing");
		differs |= l->state != CFG_PRESENT;
	}
	print_close_array();
	cfg_free(&c);
	return differs ? EXIT_FAIL : 0;
}

/* Whether a line of the file adds export @name */
static bool file_adds_export(const struct cfg *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (c->lines[i]->kind == CFG_EXPORT &&
		    !strcmp(c->lines[i]->e.o.name, name))
			return true;
	return false;
}

/*
 * Undo one line: 0 absent, 1 undone, 2 left to its export, or -errno
 * with l->why set
 */
static int undo(struct cfg *c, struct cfg_line *l)
{
	const struct rmbd_export_info *e;
	int ret = 1;

	switch (l->kind) {
	case CFG_LISTENER:
		if (!find_listener(c, &l->l))
			return 0;
		ret = rmbd_listener_del(c->ctx, l->l.addr, l->l.port);
		break;
	case CFG_EXPORT:
		if (!find_export(c, l->e.o.name))
			return 0;
		ret = rmbd_export_del(c->ctx, l->e.o.name, false);
		break;
	case CFG_HOST:
		e = find_export(c, l->h.export_name);
		if (!e || !in_list(l->h.host, e->hosts, e->nr_hosts))
			return 0;
		/*
		 * Deleted with its export, if the file adds that: not
		 * before, which would end the host's sessions even when the
		 * export, in use, stays.
		 */
		if (file_adds_export(c, l->h.export_name))
			return 2;
		ret = rmbd_export_host_del(c->ctx, l->h.export_name,
					   l->h.host);
		break;
	case CFG_DEV:
		if (!l->dev[0])
			return 0;
		ret = rmbd_dev_disconnect(c->ctx, l->dev_index, false);
		break;
	}
	if (ret < 0) {
		failed(c, l, ret);
		return ret;
	}
	return 1;
}

/*
 * rmbd config remove FILE: the last line first, each device of the file
 * disconnected (one found on any of its legs), each host, export and
 * listener deleted; what is not there is left; goes on after a failure.
 */
static int config_remove(int argc, char **argv)
{
	static const char *const undone[] = {
		[CFG_LISTENER] = "deleted",
		[CFG_EXPORT] = "deleted",
		[CFG_HOST] = "deleted",
		[CFG_DEV] = "disconnected",
	};
	struct keyword kw[] = { { } };
	bool bad = false;
	struct cfg c;
	size_t i;
	int ret;

	ret = cfg_start(argc, argv, kw, &c);
	if (ret)
		return ret;
	print_open_array();
	for (i = c.n; i-- > 0;) {
		struct cfg_line *l = c.lines[i];

		/* The device of a line in conflict is still the file's */
		l->why[0] = '\0';
		if (l->state == CFG_CONFLICT)
			l->state = CFG_PRESENT;
		ret = undo(&c, l);
		if (ret < 0)
			bad = true;
		report(&c, l, ret < 0 ? "failed" : ret == 2 ? "with its export" :
			      ret ? undone[l->kind] : "absent");
	}
	print_close_array();
	cfg_free(&c);
	return bad ? EXIT_FAIL : 0;
}

static void config_help(FILE *f)
{
	fputs("Usage: rmbd config apply FILE [ wait SECONDS ]\n"
	      "       rmbd config check FILE\n"
	      "       rmbd config remove FILE\n"
	      "       rmbd config help\n"
	      "where  FILE := rmbd commands, one a line, as for -batch (- for "
	      "stdin): only\n"
	      "               listener add, export add, export host add and "
	      "dev connect\n"
	      "       apply: makes what FILE says and is not there; leaves "
	      "what is there;\n"
	      "              changes nothing when something there differs "
	      "from FILE\n"
	      "       wait: a connect that finds no target (yet), or a "
	      "listener whose address\n"
	      "             is not there yet, is tried again for SECONDS\n"
	      "       check: exit 0 when everything is as FILE says, else 1\n"
	      "       remove: undoes FILE, its last line first: devices "
	      "(by their legs),\n"
	      "               hosts, exports, listeners\n", f);
}

static const struct command config_cmds[] = {
	{ "help", NULL },
	{ "apply", config_apply },
	{ "check", config_check },
	{ "remove", config_remove },
	{ }
};

const struct object config_object = {
	.name	= "config",
	.help	= config_help,
	.cmds	= config_cmds,
};
