// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: configure rmbd exports, listeners and devices.
 *
 *   rmbd [OPTIONS] OBJECT { COMMAND | help }
 *
 * Exit status: 0 success, 1 a request failed, 2 usage error.  Usage errors
 * are found before any netlink traffic.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <linux/rmbd_proto.h>

#include "print.h"
#include "rmbd.h"

static void main_help(FILE *f);

static const struct object help_object = {
	.name	= "help",
	.help	= main_help,
};

static const struct object *const objects[] = {
	&export_object,
	&listener_object,
	&dev_object,
	&monitor_object,
	&host_object,
	&secret_object,
	&help_object,
	NULL
};

static void main_help(FILE *f)
{
	fputs("Usage: rmbd [ OPTIONS ] OBJECT { COMMAND | help }\n"
	      "       rmbd help [ OBJECT ]\n"
	      "where  OBJECT := { export | listener | dev | monitor | host |\n"
	      "                   secret }\n"
	      "       OPTIONS := { -j[son] | -p[retty] | -d[etails] |\n"
	      "                    -V[ersion] | -h[elp] }\n", f);
}

static int match_object(const char *word, const struct object **obj)
{
	const char *names[8];
	int i, k;

	for (i = 0; objects[i]; i++)
		names[i] = objects[i]->name;
	names[i] = NULL;
	k = match(names, word);
	if (k == -1)
		return usage_error("unknown object '%s'", word);
	if (k == -2)
		return usage_error("ambiguous object '%s'", word);
	*obj = objects[k];
	return 0;
}

static int run_object(const struct object *obj, int argc, char **argv)
{
	const struct command *cmd;
	const char *names[8];
	int i, k;

	cur_object = obj->name;
	if (argc < 1)
		return obj->cmds[0].fn(0, argv);

	for (i = 0; obj->cmds[i].name; i++)
		names[i] = obj->cmds[i].name;
	names[i] = NULL;
	k = match(names, argv[0]);
	if (k == -1 && obj->default_takes_args)
		return obj->cmds[0].fn(argc, argv);
	if (k == -1)
		return usage_error("unknown %s command '%s'", obj->name,
				   argv[0]);
	if (k == -2)
		return usage_error("ambiguous %s command '%s'", obj->name,
				   argv[0]);
	cmd = &obj->cmds[k];
	if (!cmd->fn) {
		if (argc > 1)
			return usage_error("unexpected argument '%s'",
					   argv[1]);
		obj->help(stdout);
		return 0;
	}
	return cmd->fn(argc - 1, argv + 1);
}

/*
 * rmbd -V: the CLI's version, the library's (the one loaded, which may
 * differ from the CLI's after a partial upgrade), the wire protocol's and
 * each module's, if loaded.
 */
static void print_versions(void)
{
	static const char *const mods[] = { "rmbd_target", "rmbd_client" };
	char path[64], ver[64];
	unsigned int i;

	printf("rmbd %s\n", RMBD_VERSION);
	printf("librmbd %s\n", rmbd_version());
	printf("protocol %u\n", RMBD_PROTO_VERSION);
	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/module/%s/version", mods[i]);
		f = fopen(path, "re");
		if (!f) {
			printf("%s %s\n", mods[i], errno == ENOENT ?
			       "not loaded" : "unknown");
			continue;
		}
		if (!fgets(ver, sizeof(ver), f))
			ver[0] = '\0';
		fclose(f);
		ver[strcspn(ver, "\n")] = '\0';
		printf("%s %s\n", mods[i], ver[0] ? ver : "unknown");
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "details", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const struct object *obj;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jpdVh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.json = true;
			opt.pretty = true;
			break;
		case 'd':
			opt.details = true;
			break;
		case 'V':
			print_versions();
			return 0;
		case 'h':
			main_help(stdout);
			return 0;
		default:
			if (optopt)
				return usage_error("invalid option '-%c'",
						   optopt);
			return usage_error("invalid option '%s'",
					   argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;
	print_init(opt.json, opt.pretty);

	if (argc < 1)
		return usage_error("missing object");
	ret = match_object(argv[0], &obj);
	if (ret)
		return ret;
	if (!obj->cmds) {
		/* rmbd help [OBJECT] */
		if (argc < 2) {
			main_help(stdout);
			return 0;
		}
		ret = match_object(argv[1], &obj);
		if (ret)
			return ret;
		if (argc > 2)
			return usage_error("unexpected argument '%s'",
					   argv[2]);
		obj->help(stdout);
		return 0;
	}
	return run_object(obj, argc - 1, argv + 1);
}
