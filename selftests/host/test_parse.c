// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * TAP test of rmbd_parse_size() and rmbd_parse_dev().
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "librmbd.h"

struct size_case {
	const char *in;
	int ret;
	uint64_t bytes;
};

static const struct size_case size_cases[] = {
	{ "0", 0, 0 },
	{ "4096", 0, 4096 },
	{ "007", 0, 7 },
	{ "64K", 0, 65536 },
	{ "64k", 0, 65536 },
	{ "512M", 0, 536870912ULL },
	{ "1G", 0, 1073741824ULL },
	{ "1GiB", 0, 1073741824ULL },
	{ "3MiB", 0, 3145728ULL },
	{ "2T", 0, 2199023255552ULL },
	{ "1P", 0, 1125899906842624ULL },
	{ "15E", 0, 17293822569102704640ULL },
	{ "18446744073709551615", 0, UINT64_MAX },
	{ "16E", -ERANGE, 0 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "17179869184G", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "K", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "-1G", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ " 1", -EINVAL, 0 },
	{ "1 ", -EINVAL, 0 },
	{ "1G ", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1X", -EINVAL, 0 },
	{ "1B", -EINVAL, 0 },
	{ "1GB", -EINVAL, 0 },
	{ "1Gi", -EINVAL, 0 },
	{ "1Gib", -EINVAL, 0 },
	{ "1GiBB", -EINVAL, 0 },
	{ "1KK", -EINVAL, 0 },
	{ "1G1", -EINVAL, 0 },
	{ "abc", -EINVAL, 0 },
};

struct dev_case {
	const char *in;
	int ret;
	uint32_t index;
};

static const struct dev_case dev_cases[] = {
	{ "0", 0, 0 },
	{ "3", 0, 3 },
	{ "rmbd3", 0, 3 },
	{ "rmbd0", 0, 0 },
	{ "rmbd42", 0, 42 },
	{ "/dev/rmbd3", 0, 3 },
	{ "/dev/rmbd17", 0, 17 },
	{ "4294967295", 0, UINT32_MAX },
	{ "rmbd4294967295", 0, UINT32_MAX },
	{ "4294967296", -ERANGE, 0 },
	{ "rmbd99999999999", -ERANGE, 0 },
	{ "", -EINVAL, 0 },
	{ "rmbd", -EINVAL, 0 },
	{ "/dev/rmbd", -EINVAL, 0 },
	{ "/dev/3", -EINVAL, 0 },
	{ "/dev/sda", -EINVAL, 0 },
	{ "rmbd03", -EINVAL, 0 },
	{ "03", -EINVAL, 0 },
	{ "rmbd-1", -EINVAL, 0 },
	{ "-1", -EINVAL, 0 },
	{ "+1", -EINVAL, 0 },
	{ "rmbd3p1", -EINVAL, 0 },
	{ "rmbd 3", -EINVAL, 0 },
	{ "nbd0", -EINVAL, 0 },
	{ "rmbdx", -EINVAL, 0 },
	{ "3 ", -EINVAL, 0 },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
	size_t i, n = 0, failed = 0;

	printf("1..%zu\n", ARRAY_SIZE(size_cases) + ARRAY_SIZE(dev_cases));

	for (i = 0; i < ARRAY_SIZE(size_cases); i++) {
		const struct size_case *c = &size_cases[i];
		uint64_t bytes = 0xdeadbeef;
		int ret = rmbd_parse_size(c->in, &bytes);
		/* On failure the output must be left alone. */
		uint64_t want = c->ret ? 0xdeadbeef : c->bytes;
		int ok = ret == c->ret && bytes == want;

		failed += !ok;
		printf("%sok %zu - rmbd_parse_size(\"%s\") = %d, %" PRIu64 "\n",
		       ok ? "" : "not ", ++n, c->in, c->ret, want);
		if (!ok)
			printf("# got %d, %" PRIu64 "\n", ret, bytes);
	}

	for (i = 0; i < ARRAY_SIZE(dev_cases); i++) {
		const struct dev_case *c = &dev_cases[i];
		uint32_t index = 0xdeadbeef;
		int ret = rmbd_parse_dev(c->in, &index);
		uint32_t want = c->ret ? 0xdeadbeef : c->index;
		int ok = ret == c->ret && index == want;

		failed += !ok;
		printf("%sok %zu - rmbd_parse_dev(\"%s\") = %d, %" PRIu32 "\n",
		       ok ? "" : "not ", ++n, c->in, c->ret, want);
		if (!ok)
			printf("# got %d, %" PRIu32 "\n", ret, index);
	}
	return failed ? 1 : 0;
}
