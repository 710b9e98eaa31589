// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd: configure rmbd exports, listeners and devices.
 *
 *   rmbd [OPTIONS] OBJECT { COMMAND | help }
 *
 * Exit status: 0 success, 1 a request failed, 2 usage error.  Usage errors
 * are found before any netlink traffic.
 */
#include <ctype.h>
#include <errno.h>
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
	      "       OPTIONS := { -j[son] | -p[retty] | -d[etails] | -s[tats] |\n"
	      "                    -h[uman] | -t[imestamp] | -V[ersion] | -help }\n"
	      "       An option is -NAME, --NAME or a unique prefix of either "
	      "(-det);\n"
	      "       letters go together after one dash (-jd).\n", f);
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

/* The options before the object. */
enum global_opt {
	OPT_JSON, OPT_PRETTY, OPT_DETAILS, OPT_STATS, OPT_HUMAN, OPT_TIMESTAMP,
	OPT_VERSION, OPT_HELP,
};

/*
 * Their names, and the letters that stand for them alone or bundled
 * ("-jd"): -h is -human, as in ip(8), and -help has no letter.
 */
static const char *const opt_names[] = {
	[OPT_JSON]	= "json",
	[OPT_PRETTY]	= "pretty",
	[OPT_DETAILS]	= "details",
	[OPT_STATS]	= "stats",
	[OPT_HUMAN]	= "human",
	[OPT_TIMESTAMP]	= "timestamp",
	[OPT_VERSION]	= "version",
	[OPT_HELP]	= "help",
	NULL
};

static const char opt_letters[] = {
	[OPT_JSON]	= 'j',
	[OPT_PRETTY]	= 'p',
	[OPT_DETAILS]	= 'd',
	[OPT_STATS]	= 's',
	[OPT_HUMAN]	= 'h',
	[OPT_TIMESTAMP]	= 't',
	[OPT_VERSION]	= 'V',
	[OPT_HELP]	= '\0',
};

static int opt_by_letter(char c)
{
	unsigned int i;

	for (i = 0; i < sizeof(opt_letters); i++)
		if (c && opt_letters[i] == c)
			return (int)i;
	return -1;
}

/* 1: go on; 0: done, exit 0 (help, version). */
static int apply_opt(int o)
{
	switch (o) {
	case OPT_JSON:
		opt.json = true;
		break;
	case OPT_PRETTY:
		opt.json = true;
		opt.pretty = true;
		break;
	case OPT_DETAILS:
		opt.details = true;
		break;
	case OPT_STATS:
		opt.stats = true;
		break;
	case OPT_HUMAN:
		opt.human = true;
		break;
	case OPT_TIMESTAMP:
		opt.timestamp = true;
		break;
	case OPT_VERSION:
		print_versions();
		return 0;
	case OPT_HELP:
		main_help(stdout);
		return 0;
	}
	return 1;
}

/*
 * One option word, as iproute2 takes them: "-json" or "--json", or any
 * unique prefix of the name ("-j", "-det", "--pre"), in any case
 * ("-Version"); a letter alone is its option's.  After one dash, letters
 * of options may be bundled ("-jd").  Returns 1 to go on, 0 to exit 0,
 * or EXIT_USAGE.
 */
static int parse_opt(const char *arg)
{
	const char *w = arg + 1;
	bool dashes = false;
	char lower[16];
	size_t i, len;
	int o, ret;

	if (*w == '-') {
		w++;
		dashes = true;
	}
	len = strlen(w);
	if (!len || len >= sizeof(lower))
		return usage_error("invalid option '%s'", arg);
	if (len == 1) {
		o = opt_by_letter(*w);
		if (o >= 0)
			return apply_opt(o);
	}
	for (i = 0; i <= len; i++)
		lower[i] = (char)tolower((unsigned char)w[i]);
	o = match(opt_names, lower);
	if (o >= 0)
		return apply_opt(o);
	if (o == -2)
		return usage_error("ambiguous option '%s'", arg);
	for (i = 0; !dashes && i < len; i++)
		if (opt_by_letter(w[i]) < 0)
			break;
	if (dashes || i < len)
		return usage_error("invalid option '%s'", arg);
	for (i = 0; i < len; i++) {
		ret = apply_opt(opt_by_letter(w[i]));
		if (ret != 1)
			return ret;
	}
	return 1;
}

int main(int argc, char **argv)
{
	const struct object *obj;
	int ret;

	argc--;
	argv++;
	while (argc > 0 && argv[0][0] == '-' && argv[0][1]) {
		if (!strcmp(argv[0], "--")) {
			argc--;
			argv++;
			break;
		}
		ret = parse_opt(argv[0]);
		if (ret != 1)
			return ret;
		argc--;
		argv++;
	}
	print_init(opt.json, opt.pretty, opt.human);

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
