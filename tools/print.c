// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A tiny JSON writer and its text twin.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "print.h"

#define PRINT_MAX_DEPTH	8

static struct {
	bool json;
	bool pretty;
	bool human;
	int depth;
	bool first[PRINT_MAX_DEPTH + 1];	/* no member yet at depth */
	bool text_first;			/* no field yet on the line */
} pr;

void print_init(bool json, bool pretty, bool human)
{
	pr.json = json;
	pr.pretty = pretty;
	pr.human = human;
	pr.depth = 0;
	pr.first[0] = true;
	pr.text_first = true;
}

bool print_is_json(void)
{
	return pr.json;
}

/* Pretty: a new line, indented; at depth 0 only if always (a close). */
static void json_indent(bool always)
{
	int i;

	if (!pr.pretty || (pr.depth == 0 && !always))
		return;
	putchar('\n');
	for (i = 0; i < pr.depth; i++)
		fputs("    ", stdout);
}

/* Before a member: a comma unless it is the first one. */
static void json_member(void)
{
	if (!pr.first[pr.depth])
		putchar(',');
	pr.first[pr.depth] = false;
	json_indent(false);
}

static void json_string(const char *s)
{
	const unsigned char *p;

	putchar('"');
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", stdout);
			break;
		case '\\':
			fputs("\\\\", stdout);
			break;
		case '\n':
			fputs("\\n", stdout);
			break;
		case '\t':
			fputs("\\t", stdout);
			break;
		default:
			if (*p < 0x20)
				printf("\\u%04x", *p);
			else
				putchar(*p);
		}
	}
	putchar('"');
}

static void json_open(char c)
{
	json_member();
	putchar(c);
	if (pr.depth < PRINT_MAX_DEPTH)
		pr.depth++;
	pr.first[pr.depth] = true;
}

static void json_close(char c)
{
	bool empty = pr.first[pr.depth];

	if (pr.depth > 0)
		pr.depth--;
	if (!empty)
		json_indent(true);
	putchar(c);
	if (pr.depth == 0) {
		putchar('\n');
		pr.first[0] = true;
	}
}

static void json_key(const char *key)
{
	json_member();
	json_string(key);
	putchar(':');
	if (pr.pretty)
		putchar(' ');
}

void print_open_array(void)
{
	if (pr.json)
		json_open('[');
}

void print_open_array_key(const char *key)
{
	if (!pr.json)
		return;
	json_key(key);
	putchar('[');
	if (pr.depth < PRINT_MAX_DEPTH)
		pr.depth++;
	pr.first[pr.depth] = true;
}

void print_open_object_key(const char *key)
{
	if (!pr.json) {
		pr.text_first = true;
		return;
	}
	json_key(key);
	putchar('{');
	if (pr.depth < PRINT_MAX_DEPTH)
		pr.depth++;
	pr.first[pr.depth] = true;
}

void print_close_array(void)
{
	if (pr.json)
		json_close(']');
}

void print_open_object(void)
{
	if (pr.json)
		json_open('{');
	else
		pr.text_first = true;
}

void print_close_object(void)
{
	if (pr.json) {
		json_close('}');
	} else {
		putchar('\n');
		pr.text_first = true;
	}
}

static bool text_field(enum print_mode mode, const char *fmt)
{
	if (pr.json || mode == PRINT_JSON || !fmt)
		return false;
	if (!pr.text_first)
		putchar(' ');
	pr.text_first = false;
	return true;
}

void print_string(enum print_mode mode, const char *key, const char *fmt,
		  const char *val)
{
	if (pr.json) {
		if (mode == PRINT_TEXT || !key)
			return;
		json_key(key);
		json_string(val);
	} else if (text_field(mode, fmt)) {
		printf(fmt, val);
	}
}

/* JSON true or false; in text, @word only when @val is true. */
void print_bool(enum print_mode mode, const char *key, const char *word,
		bool val)
{
	if (pr.json) {
		if (mode == PRINT_TEXT || !key)
			return;
		json_key(key);
		fputs(val ? "true" : "false", stdout);
	} else if (val && text_field(mode, word)) {
		fputs(word, stdout);
	}
}

void print_u64(enum print_mode mode, const char *key, const char *fmt,
	       uint64_t val)
{
	if (pr.json) {
		if (mode == PRINT_TEXT || !key)
			return;
		json_key(key);
		printf("%" PRIu64, val);
	} else if (text_field(mode, fmt)) {
		printf(fmt, val);
	}
}

/*
 * JSON: "key": [ "v", ... ]; text: "word v,v" when there are any (word
 * may be NULL: nothing in text).
 */
void print_strings(const char *key, const char *word, const char *v,
		   size_t stride, size_t n)
{
	size_t i;

	if (pr.json) {
		json_key(key);
		putchar('[');
		pr.depth++;
		pr.first[pr.depth] = true;
		for (i = 0; i < n; i++) {
			json_member();
			json_string(v + i * stride);
		}
		json_close(']');
	} else if (n && word && text_field(PRINT_TEXT, word)) {
		fputs(word, stdout);
		for (i = 0; i < n; i++)
			printf("%c%s", i ? ',' : ' ', v + i * stride);
	}
}

/*
 * Human: in the largest binary unit (K, M, G, T, P, E) in which it is at
 * least 1, rounded to three significant digits or to whole units,
 * whichever is finer, without trailing zeros: 512, 64K, 1.5G, 1.01G, 16G,
 * 1023M.
 */
void format_size(char *buf, size_t len, uint64_t bytes, bool human)
{
	static const char units[] = "KMGTPE";
	unsigned int u = 0, shift = 10, sh, scale, decimals;
	uint64_t whole, frac, r;

	if (!human || bytes < 1024) {
		snprintf(buf, len, "%" PRIu64, bytes);
		return;
	}
	while (u < sizeof(units) - 2 && bytes >> (shift + 10)) {
		u++;
		shift += 10;
	}
	whole = bytes >> shift;
	decimals = whole < 10 ? 2 : whole < 100 ? 1 : 0;
	scale = decimals == 2 ? 100 : decimals == 1 ? 10 : 1;
	/* The part below the unit, to 20 bits: enough to round it */
	r = bytes & ((1ULL << shift) - 1);
	sh = shift;
	if (sh > 20) {
		r >>= sh - 20;
		sh = 20;
	}
	frac = (r * scale + (1ULL << (sh - 1))) >> sh;
	if (frac == scale) {
		whole++;
		frac = 0;
	}
	if (whole == 1024 && u < sizeof(units) - 2) {
		whole = 1;
		u++;
	}
	while (decimals && frac % 10 == 0) {
		frac /= 10;
		decimals--;
	}
	if (decimals)
		snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 "%c", whole,
			 (int)decimals, frac, units[u]);
	else
		snprintf(buf, len, "%" PRIu64 "%c", whole, units[u]);
}

/* A number of bytes: in JSON always exact; in text as format_size(). */
void print_size(enum print_mode mode, const char *key, const char *fmt,
		uint64_t val)
{
	char buf[32];

	if (pr.json) {
		print_u64(mode, key, fmt, val);
	} else if (text_field(mode, fmt)) {
		format_size(buf, sizeof(buf), val, pr.human);
		printf(fmt, buf);
	}
}
