// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: argument parsing and error reporting shared by the objects.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmbd.h"

struct rmbd_opts opt;
const char *cur_object;

int usage_error(const char *fmt, ...)
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

/*
 * "failed to <what>: <strerror>[: <kernel message>]"; for a module that
 * is not loaded, "failed to <what>: <the library's message> (modprobe
 * <module>)".
 */
int request_error(struct rmbd_ctx *ctx, const char *what, int err)
{
	unsigned int missing = err == -ENOENT ? rmbd_missing_modules(ctx) : 0;
	const char *msg = rmbd_errmsg(ctx);

	if (missing) {
		fprintf(stderr, "rmbd: failed to %s: %s (modprobe %s)\n", what,
			msg, missing == RMBD_EVENTS_ALL ?
			"-a rmbd-client rmbd-target" :
			missing == RMBD_EVENTS_CLIENT ? "rmbd-client" :
			"rmbd-target");
		return EXIT_FAIL;
	}

	fprintf(stderr, "rmbd: failed to %s: %s", what, strerror(-err));
	if (msg && *msg)
		fprintf(stderr, ": %s", msg);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

int open_ctx(struct rmbd_ctx **ctx)
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
int match(const char *const *table, const char *word)
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


int parse_keywords(struct keyword *kw, int argc, char **argv)
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

int require(const struct keyword *kw)
{
	if (!kw->seen)
		return usage_error("missing keyword '%s'", kw->name);
	return 0;
}

/* Decimal, no sign, no junk, within min..max. */
int parse_uint(const char *s, uint32_t min, uint32_t max, uint32_t *val)
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

int parse_port(const struct keyword *kw, uint16_t *port)
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

/*
 * zero_ok: 0 goes to the kernel, which judges sizes; else it is refused.
 * A size past 64 bits is too large, not invalid.
 */
int parse_size_kw(const struct keyword *kw, const char *what, bool zero_ok,
		  uint64_t *val)
{
	int ret = rmbd_parse_size(kw->value, val);

	if (ret == -ERANGE)
		return usage_error("%s '%s' is too large", what, kw->value);
	if (ret || (!zero_ok && !*val))
		return usage_error("invalid %s '%s'", what, kw->value);
	return 0;
}

int check_export_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= RMBD_EXPORT_NAME_MAX || name[0] == '.' ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789._-") != len)
		return usage_error("invalid export name '%s'", name);
	return 0;
}

/*
 * An IPv4 or IPv6 address, a link-local IPv6 one with a scope as the
 * kernel takes it for rdma_cm: fe80::1%eth0 (an interface, which must
 * exist) or fe80::1%2 (its index, decimal).  As in the kernel, a name
 * wins over a number.  The kernel gets the address as given, and looks
 * the interface up itself.
 */
int check_addr(const char *addr)
{
	const char *scope = strchr(addr, '%');
	size_t len = scope ? (size_t)(scope - addr) : strlen(addr);
	char ip[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	uint32_t index;

	if (strlen(addr) >= RMBD_ADDR_MAX || len >= sizeof(ip))
		return usage_error("invalid address '%s'", addr);
	memcpy(ip, addr, len);
	ip[len] = '\0';
	if (!scope) {
		if (inet_pton(AF_INET, ip, &a6) != 1 &&
		    inet_pton(AF_INET6, ip, &a6) != 1)
			return usage_error("invalid address '%s'", addr);
		return 0;
	}
	scope++;
	if ((inet_pton(AF_INET, ip, &a6) != 1 &&
	     inet_pton(AF_INET6, ip, &a6) != 1) || !*scope ||
	    strlen(scope) >= IF_NAMESIZE ||
	    strspn(scope, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			  "0123456789._-") != strlen(scope))
		return usage_error("invalid address '%s'", addr);
	if (inet_pton(AF_INET6, ip, &a6) != 1 || !IN6_IS_ADDR_LINKLOCAL(&a6))
		return usage_error("invalid address '%s': only a link-local IPv6 address (fe80::/10) takes a scope",
				   addr);
	if (if_nametoindex(scope))
		return 0;
	if (strspn(scope, "0123456789") != strlen(scope))
		return usage_error("invalid address '%s': no interface '%s'",
				   addr, scope);
	if (scope[0] == '0' || parse_uint(scope, 1, UINT32_MAX, &index))
		return usage_error("invalid address '%s': an interface index is 1-%" PRIu32,
				   addr, UINT32_MAX);
	return 0;
}

int no_more_args(int argc, char **argv)
{
	if (argc > 0)
		return usage_error("unexpected argument '%s'", argv[0]);
	return 0;
}

int vec_push(struct vec *vec, const void *item)
{
	char *v;

	v = realloc(vec->v, (vec->n + 1) * vec->size);
	if (!v)
		return -ENOMEM;
	memcpy(v + vec->n * vec->size, item, vec->size);
	vec->v = v;
	vec->n++;
	return 0;
}

int read_secret_kw(const struct keyword *kw, uint8_t *buf, size_t *len)
{
	int ret = rmbd_secret_read(kw->value, buf, len);

	if (ret == -EPERM)
		return usage_error("secret file '%s' may be read by others than its owner (chmod 600)",
				   kw->value);
	if (ret == -EINVAL)
		return usage_error("secret file '%s' does not start with a line of 64 to 128 hex digits",
				   kw->value);
	if (ret)
		return usage_error("cannot read secret file '%s': %s",
				   kw->value, strerror(-ret));
	return 0;
}

/*
 * Split @line into words, in place: blanks separate them, '#' at the
 * start of a word starts a comment, "..." and '...' quote, and a
 * backslash takes the next character as it is.  The number of words, or
 * -1 with @why set.
 */
int split_words(char *line, char **words, const char **why)
{
	char *in = line, *out = line, quote;
	int n = 0;

	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\n' || *in == '\r')
			in++;
		if (!*in || *in == '#')
			return n;
		if (n == MAX_LINE_WORDS) {
			*why = "too many words";
			return -1;
		}
		words[n++] = out;
		quote = 0;
		for (; *in; in++) {
			if (quote && *in == quote) {
				quote = 0;
			} else if (!quote && (*in == '"' || *in == '\'')) {
				quote = *in;
			} else if (*in == '\\' && quote != '\'') {
				if (!in[1] || in[1] == '\n')
					break;
				*out++ = *++in;
			} else if (!quote && (*in == ' ' || *in == '\t' ||
					      *in == '\n' || *in == '\r')) {
				break;
			} else {
				*out++ = *in;
			}
		}
		if (quote) {
			*why = "unterminated quote";
			return -1;
		}
		if (*in)
			in++;
		*out++ = '\0';
	}
}
