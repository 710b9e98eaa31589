// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: secrets for host authentication (rmbd secret).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "print.h"
#include "rmbd.h"

static void secret_help(FILE *f)
{
	fputs("Usage: rmbd secret generate FILE\n"
	      "       rmbd secret help\n"
	      "Writes a new random secret of 32 bytes, as 64 hex digits, to "
	      "FILE, which must\n"
	      "not exist; only its owner may read it.  Give the same file to "
	      "'rmbd export host\n"
	      "add ... secret-file FILE' on the target and to 'rmbd dev "
	      "connect ... secret-file\n"
	      "FILE' on the client.\n", f);
}

static int secret_generate(int argc, char **argv)
{
	uint8_t secret[RMBD_SECRET_MIN];
	char hex[2 * sizeof(secret) + 2];
	size_t i;
	int fd, ret;

	if (argc < 1)
		return usage_error("missing file");
	ret = no_more_args(argc - 1, argv + 1);
	if (ret)
		return ret;
	ret = rmbd_secret_generate(secret, sizeof(secret));
	if (ret) {
		fprintf(stderr, "rmbd: failed to generate secret: %s\n",
			strerror(-ret));
		return EXIT_FAIL;
	}
	for (i = 0; i < sizeof(secret); i++)
		snprintf(hex + 2 * i, 3, "%02x", secret[i]);
	hex[2 * sizeof(secret)] = '\n';
	memset(secret, 0, sizeof(secret));
	fd = open(argv[0], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "rmbd: failed to generate secret: %s: %s\n",
			argv[0], strerror(errno));
		memset(hex, 0, sizeof(hex));
		return EXIT_FAIL;
	}
	ret = write(fd, hex, 2 * sizeof(secret) + 1) ==
	      (ssize_t)(2 * sizeof(secret) + 1) ? 0 : -errno;
	memset(hex, 0, sizeof(hex));
	if (close(fd) && !ret)
		ret = -errno;
	if (ret) {
		fprintf(stderr, "rmbd: failed to generate secret: %s: %s\n",
			argv[0], strerror(-ret));
		unlink(argv[0]);
		return EXIT_FAIL;
	}
	return 0;
}

static const struct command secret_cmds[] = {
	{ "generate", secret_generate },
	{ "help", NULL },
	{ }
};

const struct object secret_object = {
	.name	= "secret",
	.help	= secret_help,
	.cmds	= secret_cmds,
};
