// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: this machine's host identity (rmbd host).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "print.h"
#include "rmbd.h"

static void host_help(FILE *f)
{
	fputs("Usage: rmbd host [ show ]\n"
	      "       rmbd host help\n"
	      "The identity this machine gives a target when it connects a "
	      "device: the first\n"
	      "line of /etc/rmbd/hostid, else rmbd:uuid: and "
	      "/etc/machine-id as a UUID.\n", f);
}

static int host_show(int argc, char **argv)
{
	char host[RMBD_HOST_MAX];
	int ret;

	ret = no_more_args(argc, argv);
	if (ret)
		return ret;
	ret = rmbd_host_default(host, sizeof(host));
	if (ret) {
		fprintf(stderr, "rmbd: failed to show host: %s: %s\n",
			strerror(-ret), ret == -ENOENT ?
			"no /etc/rmbd/hostid and no /etc/machine-id" :
			"/etc/rmbd/hostid holds no valid host identity");
		return EXIT_FAIL;
	}
	print_open_object();
	print_string(PRINT_ANY, "host", "%s", host);
	print_close_object();
	return 0;
}

static const struct command host_cmds[] = {
	{ "show", host_show },
	{ "help", NULL },
	{ }
};

const struct object host_object = {
	.name	= "host",
	.help	= host_help,
	.cmds	= host_cmds,
};
