/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One print path for text and JSON output, after iproute2's print_*().
 */
#ifndef _RMBD_PRINT_H
#define _RMBD_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum print_mode {
	PRINT_ANY,	/* text with fmt and JSON with key */
	PRINT_TEXT,	/* text only */
	PRINT_JSON,	/* JSON only */
};

/* human: sizes in text in binary units (print_size()) */
void print_init(bool json, bool pretty, bool human);
bool print_is_json(void);

/* JSON only: [ ]. */
void print_open_array(void);
void print_close_array(void);
/* JSON only: "key": [ inside an object; print_close_array() ends it. */
void print_open_array_key(const char *key);
/*
 * JSON: "key": { inside an object, a line in text; print_close_object()
 * ends it.
 */
void print_open_object_key(const char *key);
/* An object: { } in JSON, a line in text. */
void print_open_object(void);
void print_close_object(void);

/*
 * In text, fmt prints the field; fields of one line are separated by one
 * space.  In JSON, key names it.
 */
void print_string(enum print_mode mode, const char *key, const char *fmt,
		  const char *val);
void print_strings(const char *key, const char *word, const char *v,
		   size_t stride, size_t n);
void print_bool(enum print_mode mode, const char *key, const char *word,
		bool val);
void print_u64(enum print_mode mode, const char *key, const char *fmt,
	       uint64_t val);

/*
 * A number of bytes, fmt with %s: in text with -h as "1.5G" (see
 * format_size()), else as a number, which JSON always has.
 */
void print_size(enum print_mode mode, const char *key, const char *fmt,
		uint64_t val);
/* bytes as text into buf: human, in binary units ("1.5G"); else digits. */
void format_size(char *buf, size_t len, uint64_t bytes, bool human);

#endif /* _RMBD_PRINT_H */
