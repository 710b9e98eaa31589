/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rmbd: what the object files of the command line tool share: the
 * global options, argument parsing and error reporting (utils.c), and
 * the objects (export.c, listener.c, dev.c, monitor.c, host.c, secret.c,
 * config.c).
 */
#ifndef _RMBD_TOOL_H
#define _RMBD_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "librmbd.h"

#define EXIT_FAIL	1
#define EXIT_USAGE	2

struct rmbd_opts {
	bool json;
	bool pretty;
	bool details;
	/* -s: statistics (counters) where the object has them */
	bool stats;
	/* -h: sizes in text in binary units */
	bool human;
	/* -t: monitor stamps each event with the time it came */
	bool timestamp;
};

extern struct rmbd_opts opt;
/* The object being parsed, for the hint of usage errors; NULL: none. */
extern const char *cur_object;

/* Keyword arguments: "keyword [value]" pairs after the positional ones. */
struct keyword {
	const char *name;
	bool has_value;
	bool seen;
	const char *value;
};

/* The usage errors print a hint and return EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "failed to <what>: <strerror>[: <kernel message>]"; returns EXIT_FAIL. */
int request_error(struct rmbd_ctx *ctx, const char *what, int err);
int open_ctx(struct rmbd_ctx **ctx);
int match(const char *const *table, const char *word);
int parse_keywords(struct keyword *kw, int argc, char **argv);
int require(const struct keyword *kw);
int parse_uint(const char *s, uint32_t min, uint32_t max, uint32_t *val);
int parse_port(const struct keyword *kw, uint16_t *port);
int parse_size_kw(const struct keyword *kw, const char *what, bool zero_ok,
		  uint64_t *val);
int check_export_name(const char *name);
int check_addr(const char *addr);
int no_more_args(int argc, char **argv);
/* The secret in the file of keyword kw (secret-file), or a usage error. */
int read_secret_kw(const struct keyword *kw, uint8_t *buf, size_t *len);

/* Words of a line of a command file (-batch, config), at most this many */
#define MAX_LINE_WORDS	64

/*
 * Split @line into words, in place: blanks separate them, '#' at the
 * start of a word starts a comment, "..." and '...' quote, and a
 * backslash takes the next character as it is.  The number of words, or
 * -1 with @why set.
 */
int split_words(char *line, char **words, const char **why);

/* A growing array of what a list call returns, items of @size bytes. */
struct vec {
	void *v;
	size_t n;
	size_t size;
};

/* Append a copy of @item: 0, or -ENOMEM. */
int vec_push(struct vec *vec, const void *item);

/*
 * A device's legs (dev.c): in JSON a "legs" array; in text one line each,
 * indented, after the device's line.
 */
void print_legs(const struct rmbd_dev_info *d);
void print_spares(const struct rmbd_dev_info *d);
/* Whether a live device has a leg that does not hold every write (dev.c) */
bool dev_degraded(const struct rmbd_dev_info *d);

/*
 * The commands a config file holds (config.c), parsed by their objects
 * into what they ask for; the pointers inside point into the request
 * itself and into the words parsed, which must outlive it.
 */
struct listener_req {
	const char *addr;
	uint16_t port;			/* 0: the default */
	uint32_t max_sessions;		/* 0: the default */
};

struct export_req {
	struct rmbd_export_opts o;
	const char *hosts[RMBD_MAX_EXPORT_HOSTS];
	char list[RMBD_MAX_EXPORT_HOSTS * RMBD_HOST_MAX];
};

struct host_req {
	const char *export_name;
	const char *host;
	bool has_secret;
	uint8_t secret[RMBD_SECRET_MAX];
	size_t secret_len;
};

struct connect_req {
	struct rmbd_connect_opts o;
	/* The legs and spares, also when o has one target's addr instead */
	struct rmbd_leg_opts legs[RMBD_MAX_LEGS];
	unsigned int nr_legs;
	struct rmbd_leg_opts spares[RMBD_MAX_SPARES];
	unsigned int nr_spares;
	uint8_t secret[RMBD_SECRET_MAX];
};

/* 0, or a usage error (EXIT_USAGE) */
int listener_add_parse(int argc, char **argv, struct listener_req *r);
int export_add_parse(int argc, char **argv, struct export_req *r);
/* export host add NAME HOST [ secret-file FILE ]: argv from NAME */
int export_host_add_parse(int argc, char **argv, struct host_req *r);
int dev_connect_parse(int argc, char **argv, struct connect_req *r);

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

extern const struct object export_object;
extern const struct object listener_object;
extern const struct object dev_object;
extern const struct object monitor_object;
extern const struct object host_object;
extern const struct object secret_object;
extern const struct object config_object;

#endif /* _RMBD_TOOL_H */
