// SPDX-License-Identifier: GPL-2.0
/*
 * scatterio: 1 MiB direct writes and reads of 256 scattered pages each.
 *
 *   scatterio DEV THREADS MIB
 *
 * THREADS threads write the first MIB MiB of DEV (a block device), each
 * MiB in one pwritev() of 256 iovecs of 4 KiB taken from every other page
 * of a buffer whose pages were touched in order, so that no two are
 * physically adjacent and the request keeps 256 segments (fio's buffers
 * merge into a few).  Then they read every MiB back the same way and
 * compare.  Prints "N MiB written and verified" and exits 0, or says what
 * differs or failed and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGES	256
#define PG	4096
#define MIB	(1 << 20)

static const char *dev;
static unsigned int threads, mib;

struct worker {
	pthread_t thread;
	unsigned int k;
	int failed;
};

static unsigned char *scattered(struct iovec *iov)
{
	unsigned char *buf = mmap(NULL, 2 * PAGES * PG, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned int i;

	if (buf == MAP_FAILED)
		return NULL;
	/* In order: then the pages used, every other one, are not adjacent */
	memset(buf, 0xa5, 2 * PAGES * PG);
	for (i = 0; i < PAGES; i++) {
		iov[i].iov_base = buf + 2 * i * PG;
		iov[i].iov_len = PG;
	}
	return buf;
}

static void fill(struct iovec *iov, unsigned int m, unsigned int pass)
{
	unsigned int i, j;

	for (i = 0; i < PAGES; i++)
		for (j = 0; j < PG / 8; j++)
			((uint64_t *)iov[i].iov_base)[j] =
				((uint64_t)pass << 56) ^ ((uint64_t)m << 32) ^
				(i * PG / 8 + j);
}

/* One MiB at MiB @m, written from or read into @iov; 0 or -1. */
static int xfer(int fd, struct iovec *iov, unsigned int m, int write)
{
	ssize_t n = write ? pwritev(fd, iov, PAGES, (off_t)m * MIB) :
			    preadv(fd, iov, PAGES, (off_t)m * MIB);

	if (n == MIB)
		return 0;
	fprintf(stderr, "%s of MiB %u: %zd (%s)\n", write ? "write" : "read",
		m, n, n < 0 ? strerror(errno) : "short");
	return -1;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct iovec wr[PAGES], rd[PAGES];
	unsigned char *wbuf, *rbuf;
	unsigned int m, i;
	int fd;

	wbuf = scattered(wr);
	rbuf = scattered(rd);
	fd = open(dev, O_RDWR | O_DIRECT);
	if (!wbuf || !rbuf || fd < 0) {
		fprintf(stderr, "thread %u: %s\n", w->k, strerror(errno));
		w->failed = 1;
		return NULL;
	}
	for (m = w->k; m < mib && !w->failed; m += threads) {
		fill(wr, m, 1);
		w->failed = xfer(fd, wr, m, 1);
	}
	for (m = w->k; m < mib && !w->failed; m += threads) {
		fill(wr, m, 1);
		w->failed = xfer(fd, rd, m, 0);
		for (i = 0; i < PAGES && !w->failed; i++) {
			if (memcmp(wr[i].iov_base, rd[i].iov_base, PG)) {
				fprintf(stderr, "MiB %u, page %u: read back other data\n",
					m, i);
				w->failed = 1;
			}
		}
	}
	close(fd);
	munmap(wbuf, 2 * PAGES * PG);
	munmap(rbuf, 2 * PAGES * PG);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker *w;
	unsigned int k;
	int failed = 0;

	if (argc != 4 || !(threads = atoi(argv[2])) || !(mib = atoi(argv[3]))) {
		fprintf(stderr, "usage: scatterio DEV THREADS MIB\n");
		return 2;
	}
	dev = argv[1];
	w = calloc(threads, sizeof(*w));
	if (!w)
		return 1;
	for (k = 0; k < threads; k++) {
		w[k].k = k;
		if (pthread_create(&w[k].thread, NULL, work, &w[k])) {
			fprintf(stderr, "cannot start thread %u\n", k);
			return 1;
		}
	}
	for (k = 0; k < threads; k++) {
		pthread_join(w[k].thread, NULL);
		failed |= w[k].failed;
	}
	if (failed)
		return 1;
	printf("%u MiB written and verified\n", mib);
	return 0;
}
