// SPDX-License-Identifier: GPL-2.0
/*
 * swapverify: write an anonymous working set meant to be larger than the
 * memory the process may keep resident, so that most of it goes out to
 * swap, and check every byte of it when it comes back.
 *
 * A pass writes every page, then rereads the whole working set and
 * compares each page with what was written.  A page holds its index, the
 * pass and the seed, pseudo-random words drawn from (seed, pass, index)
 * and, in its last word, a checksum of the words before it.  The pass
 * number changes every page's data from one pass to the next, so that a
 * stale page coming back from swap is caught as well.
 *
 * Prints the first mismatches (page index, offset, expected and found
 * words and what the page holds instead) and a one-line summary.  Exit
 * status 0 when every byte matched, 1 on a mismatch, 2 on a usage error,
 * 3 when the memory cannot be mapped.  Transparent huge pages are used as
 * the system's settings allow, unless -n is given.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_MIB		(1UL << 20)	/* 1 TiB */
#define MAX_PASSES	1000
#define MAX_REPORTS	10		/* mismatching pages printed */

static const char *prog = "swapverify";

struct state {
	uint8_t *mem;
	size_t page_size;
	size_t nr_pages;
	uint64_t seed;
	uint64_t *expect;		/* one page */
	uint64_t bad_pages;
	uint64_t bad_bytes;
};

static void help(FILE *f)
{
	fprintf(f,
		"usage: %s [-m MiB] [-p PASSES] [-s SEED] [-n] [-w]\n"
		"  -m MiB     working set in MiB (default 64)\n"
		"  -p PASSES  write+verify passes (default 2)\n"
		"  -s SEED    seed of the data (default 1)\n"
		"  -n         no transparent huge pages (MADV_NOHUGEPAGE)\n"
		"  -w         after the last pass's writes, wait for SIGUSR1\n"
		"             before verifying\n"
		"Exit status: 0 all bytes matched, 1 mismatch, 2 usage error,\n"
		"3 the working set could not be mapped.\n", prog);
}

static void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	help(stderr);
	exit(2);
}

/* Parse a whole decimal (or 0x hex) number within [min, max]. */
static uint64_t parse_num(const char *opt, const char *s, uint64_t min,
			  uint64_t max)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-')
		usage_error("%s: not a non-negative number", opt);
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		usage_error("%s: not a number", opt);
	if (v < min || v > max) {
		fprintf(stderr, "%s: %s %s: out of range %" PRIu64 "..%" PRIu64 "\n",
			prog, opt, s, min, max);
		help(stderr);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* splitmix64: a good 64-bit mix of the page's identity. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t checksum(const uint64_t *w, size_t n)
{
	uint64_t c = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		c = (c ^ w[i]) * 0x100000001b3ULL;
	return c;
}

/* Fill @w (one page) with the data of page @idx in pass @pass. */
static void fill_page(const struct state *st, uint64_t *w, uint64_t idx,
		      uint64_t pass)
{
	size_t n = st->page_size / sizeof(*w), i;
	uint64_t x;

	x = mix64(st->seed ^ mix64(pass ^ mix64(idx)));
	w[0] = idx;
	w[1] = pass;
	w[2] = st->seed;
	for (i = 3; i < n - 1; i++) {
		/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
	w[n - 1] = checksum(w, n - 1);
}

static void write_pass(struct state *st, uint64_t pass)
{
	size_t i;

	for (i = 0; i < st->nr_pages; i++)
		fill_page(st, (uint64_t *)(st->mem + i * st->page_size), i, pass);
}

/* Say what a mismatching page holds instead of the expected data. */
static void describe(const struct state *st, const uint64_t *got, char *buf,
		     size_t len)
{
	size_t n = st->page_size / sizeof(*got), i;

	for (i = 0; i < n && !got[i]; i++)
		;
	if (i == n)
		snprintf(buf, len, "only zeros");
	else if (got[n - 1] == checksum(got, n - 1))
		snprintf(buf, len,
			 "the intact data of page %" PRIu64 ", pass %" PRIu64
			 ", seed %" PRIu64, got[0], got[1], got[2]);
	else
		snprintf(buf, len, "damaged data (checksum 0x%016" PRIx64
			 " where its words give 0x%016" PRIx64 ")",
			 got[n - 1], checksum(got, n - 1));
}

static void report(struct state *st, uint64_t idx, const uint64_t *got)
{
	const uint8_t *g = (const uint8_t *)got;
	const uint8_t *e = (const uint8_t *)st->expect;
	size_t i, first = SIZE_MAX, nbad = 0, w;
	char what[160];

	for (i = 0; i < st->page_size; i++) {
		if (g[i] == e[i])
			continue;
		if (first == SIZE_MAX)
			first = i;
		nbad++;
	}
	st->bad_pages++;
	st->bad_bytes += nbad;
	if (st->bad_pages > MAX_REPORTS)
		return;
	w = first / sizeof(*got);
	describe(st, got, what, sizeof(what));
	printf("%s: MISMATCH page %" PRIu64 " offset %zu: expected 0x%016"
	       PRIx64 ", got 0x%016" PRIx64 "; %zu bytes differ; page holds %s\n",
	       prog, idx, w * sizeof(*got), st->expect[w], got[w], nbad, what);
	if (st->bad_pages == MAX_REPORTS)
		printf("%s: further mismatches are counted, not printed\n", prog);
}

static void verify_pass(struct state *st, uint64_t pass)
{
	size_t i;

	for (i = 0; i < st->nr_pages; i++) {
		const uint64_t *got = (const uint64_t *)(st->mem + i * st->page_size);

		fill_page(st, st->expect, i, pass);
		if (memcmp(got, st->expect, st->page_size))
			report(st, i, got);
	}
}

static void wait_usr1(const sigset_t *set)
{
	int sig;

	printf("%s: pid %d waiting for SIGUSR1\n", prog, (int)getpid());
	fflush(stdout);
	while (sigwait(set, &sig) || sig != SIGUSR1)
		;
}

int main(int argc, char **argv)
{
	struct state st = { .seed = 1 };
	uint64_t mib = 64, passes = 2, pass, bad_before;
	bool wait = false, nohuge = false;
	double t0, t1, t2, t3, tw = 0, tv = 0;
	sigset_t set;
	long ps;
	int opt;

	while ((opt = getopt(argc, argv, "m:p:s:nwh")) != -1) {
		switch (opt) {
		case 'm':
			mib = parse_num("-m", optarg, 1, MAX_MIB);
			break;
		case 'p':
			passes = parse_num("-p", optarg, 1, MAX_PASSES);
			break;
		case 's':
			st.seed = parse_num("-s", optarg, 0, UINT64_MAX);
			break;
		case 'n':
			nohuge = true;
			break;
		case 'w':
			wait = true;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			help(stderr);
			return 2;
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);

	ps = sysconf(_SC_PAGESIZE);
	if (ps < 64 || ps % sizeof(uint64_t)) {
		fprintf(stderr, "%s: odd page size %ld\n", prog, ps);
		return 3;
	}
	st.page_size = ps;
	if (mib > SIZE_MAX >> 20) {
		fprintf(stderr, "%s: %" PRIu64 " MiB do not fit the address space\n",
			prog, mib);
		return 3;
	}
	st.nr_pages = (mib << 20) / st.page_size;

	/* Block SIGUSR1 before anyone may be told to send it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (wait && sigprocmask(SIG_BLOCK, &set, NULL)) {
		perror("sigprocmask");
		return 3;
	}

	st.expect = malloc(st.page_size);
	st.mem = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!st.expect || st.mem == MAP_FAILED) {
		fprintf(stderr, "%s: cannot map %" PRIu64 " MiB: %s\n", prog,
			mib, strerror(errno));
		return 3;
	}
	/*
	 * A kernel without transparent huge pages (no sysfs directory for
	 * them) refuses the advice with EINVAL: its pages are all small.
	 */
	if (nohuge && madvise(st.mem, mib << 20, MADV_NOHUGEPAGE) &&
	    !(errno == EINVAL &&
	      access("/sys/kernel/mm/transparent_hugepage", F_OK))) {
		perror("madvise MADV_NOHUGEPAGE");
		return 3;
	}

	t0 = now();
	for (pass = 1; pass <= passes; pass++) {
		t1 = now();
		write_pass(&st, pass);
		t2 = now();
		if (wait && pass == passes)
			wait_usr1(&set);
		bad_before = st.bad_pages;
		t3 = now();
		verify_pass(&st, pass);
		tw += t2 - t1;
		tv += now() - t3;
		printf("%s: pass %" PRIu64 ": written in %.1f s, verified in %.1f s, %"
		       PRIu64 " bad pages\n", prog, pass, t2 - t1, now() - t3,
		       st.bad_pages - bad_before);
		fflush(stdout);
	}
	printf("%s: %" PRIu64 " MiB, %" PRIu64 " passes, %" PRIu64
	       " mismatched bytes in %" PRIu64 " pages, %.1f s (write %.1f s, verify %.1f s)\n",
	       prog, mib, passes, st.bad_bytes, st.bad_pages, now() - t0, tw, tv);
	return st.bad_pages ? 1 : 0;
}
