/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the VM tests' RDMA programs (rmbd-peer, rmbd-liar) share: their
 * messages.  Each defines TOOL_NAME before it includes this.
 */
#ifndef RMBD_SELFTESTS_TOOL_H
#define RMBD_SELFTESTS_TOOL_H

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>

/* A reason on stderr, after what was said on stdout; returns 1. */
static inline int __attribute__((format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(TOOL_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* One line on stdout, flushed: the test reads it as it comes. */
static inline void __attribute__((format(printf, 1, 2)))
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static inline int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

#endif
