// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TAP test of format_size() of the rmbd CLI (tools/print.c): sizes as -h
 * prints them in text, and as they are without it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "print.h"

struct size_case {
	uint64_t bytes;
	bool human;
	const char *want;
};

static const struct size_case cases[] = {
	{ 0, true, "0" },
	{ 1023, true, "1023" },
	{ 1024, true, "1K" },
	{ 1536, true, "1.5K" },
	{ 65536, true, "64K" },
	{ 1048575, true, "1M" },		/* 1023.999K rounds up */
	{ 1073217536, true, "1G" },		/* 1023.5M rounds up */
	{ 1072693248, true, "1023M" },
	{ 2097152, true, "2M" },
	{ 1082130432, true, "1.01G" },		/* 1G + 8M */
	{ 1073741824ULL * 3 / 2, true, "1.5G" },
	{ 1073741824ULL * 16, true, "16G" },
	{ 1073741824ULL * 16 + 536870912, true, "16.5G" },
	{ 1073741824ULL * 100 + 536870912, true, "101G" },
	{ 1073741824ULL * 640, true, "640G" },
	{ 1099511627776ULL, true, "1T" },
	{ 1125899906842624ULL, true, "1P" },
	{ 1152921504606846976ULL, true, "1E" },
	{ UINT64_MAX, true, "16E" },
	{ 1073741824ULL * 3 / 2, false, "1610612736" },
	{ UINT64_MAX, false, "18446744073709551615" },
};

int main(void)
{
	size_t i, n = sizeof(cases) / sizeof(cases[0]);
	int failed = 0;
	char buf[32];

	printf("1..%zu\n", n);
	for (i = 0; i < n; i++) {
		const struct size_case *c = &cases[i];
		bool ok;

		format_size(buf, sizeof(buf), c->bytes, c->human);
		ok = !strcmp(buf, c->want);
		failed += !ok;
		printf("%sok %zu - format_size(%" PRIu64 ", %s) = %s\n",
		       ok ? "" : "not ", i + 1, c->bytes,
		       c->human ? "human" : "exact", buf);
		if (!ok)
			printf("# want %s\n", c->want);
	}
	return failed ? 1 : 0;
}
