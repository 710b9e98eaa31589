// SPDX-License-Identifier: GPL-2.0
/*
 * failnth.so: an LD_PRELOAD shim for the fault-injection test.  It arms
 * the kernel's per-task fault counter (/proc/thread-self/fail-nth) right
 * before the program sends its first generic netlink request to a family
 * other than the controller, so that the N-th fault point the kernel passes
 * from there on (a slab or page allocation, see failslab and
 * fail_page_alloc) fails, and not one in exec, the dynamic loader or libnl's
 * family lookup.
 *
 *   RMBD_FAILNTH=N            fail the N-th fault point after arming
 *   RMBD_FAILNTH_REPORT=FILE  at exit, if it armed, write "armed N LEFT"
 *                             (LEFT > 0: the N-th point was never reached);
 *                             a program that never armed (say, timeout(1)
 *                             around the one that did) writes nothing
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/netlink.h>
#include <linux/genetlink.h>

static int armed;
static int nth_fd = -1;
static unsigned int nth;

/* Arm on the first generic netlink message that is not for the controller. */
static void maybe_arm(int fd, const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	struct sockaddr_nl sa;
	socklen_t salen = sizeof(sa);
	const char *env;
	char num[16];
	int n;

	if (armed || !buf || len < sizeof(*nlh))
		return;
	if (getsockname(fd, (struct sockaddr *)&sa, &salen) ||
	    sa.nl_family != AF_NETLINK)
		return;
	if (nlh->nlmsg_type <= GENL_ID_CTRL)
		return;
	env = getenv("RMBD_FAILNTH");
	if (!env)
		return;
	armed = 1;
	nth = strtoul(env, NULL, 0);
	/* Open first: the open itself allocates and must not count. */
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		return;
	n = snprintf(num, sizeof(num), "%u", nth);
	if (write(nth_fd, num, n) != n) {
		close(nth_fd);
		nth_fd = -1;
	}
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	static ssize_t (*real)(int, const struct msghdr *, int);

	if (!real)
		real = dlsym(RTLD_NEXT, "sendmsg");
	if (msg && msg->msg_iovlen > 0)
		maybe_arm(fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len);
	return real(fd, msg, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags,
	       const struct sockaddr *to, socklen_t tolen)
{
	static ssize_t (*real)(int, const void *, size_t, int,
			       const struct sockaddr *, socklen_t);

	if (!real)
		real = dlsym(RTLD_NEXT, "sendto");
	maybe_arm(fd, buf, len);
	return real(fd, buf, len, flags, to, tolen);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	return sendto(fd, buf, len, flags, NULL, 0);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("RMBD_FAILNTH_REPORT");
	char num[16] = "";
	FILE *f;

	if (!path || !armed)
		return;
	/* Read the counter before anything else allocates. */
	if (nth_fd >= 0 && pread(nth_fd, num, sizeof(num) - 1, 0) < 0)
		num[0] = 0;
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "armed %u %s", nth, num[0] ? num : "?\n");
	fclose(f);
}
