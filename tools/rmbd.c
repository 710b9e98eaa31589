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
#include <stdlib.h>
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
	&config_object,
	&help_object,
	NULL
};

static void main_help(FILE *f)
{
	fputs("Usage: rmbd [ OPTIONS ] OBJECT { COMMAND | help }\n"
	      "       rmbd [ OPTIONS ] -b[atch] FILE [ -f[orce] ]\n"
	      "       rmbd help [ OBJECT ]\n"
	      "where  OBJECT := { export | listener | dev | monitor | host |\n"
	      "                   secret | config }\n"
	      "       OPTIONS := { -j[son] | -p[retty] | -d[etails] | -s[tats] |\n"
	      "                    -h[uman] | -t[imestamp] | -V[ersion] | -help }\n"
	      "       An option is -NAME, --NAME or a unique prefix of either "
	      "(-det);\n"
	      "       letters go together after one dash (-jd).\n"
	      "       -batch: one command a line of FILE (- for stdin), "
	      "without \"rmbd\";\n"
	      "       stops at the first that fails unless -force.\n", f);
}

static int match_object(const char *word, const struct object **obj)
{
	const char *names[sizeof(objects) / sizeof(objects[0])];
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
	if (argc < 1 && !obj->cmds[0].fn) {
		/* An object whose default is its help (config) */
		obj->help(stdout);
		return 0;
	}
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
	OPT_VERSION, OPT_HELP, OPT_BATCH, OPT_FORCE,
};

/* apply_opt(): the option takes the next word (-batch FILE) */
#define OPT_NEEDS_FILE	3

/* -batch FILE, and -force: go on after a command that failed */
static const char *batch_file;
static bool batch_force;

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
	[OPT_BATCH]	= "batch",
	[OPT_FORCE]	= "force",
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
	[OPT_BATCH]	= 'b',
	[OPT_FORCE]	= 'f',
};

static int opt_by_letter(char c)
{
	unsigned int i;

	for (i = 0; i < sizeof(opt_letters); i++)
		if (c && opt_letters[i] == c)
			return (int)i;
	return -1;
}

/* 1: go on; 0: done, exit 0 (help, version); OPT_NEEDS_FILE. */
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
	case OPT_BATCH:
		/* Its FILE is the next word (parse_opt()'s caller). */
		return OPT_NEEDS_FILE;
	case OPT_FORCE:
		batch_force = true;
		break;
	}
	return 1;
}

/*
 * One option word, as iproute2 takes them: "-json" or "--json", or any
 * unique prefix of the name ("-j", "-det", "--pre"), in any case
 * ("-Version"); a letter alone is its option's.  After one dash, letters
 * of options may be bundled ("-jd").  Returns 1 to go on, 0 to exit 0,
 * OPT_NEEDS_FILE for -batch, or EXIT_USAGE.
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
		/* -b takes the next word: last of a bundle ("-jb FILE") */
		if (ret == OPT_NEEDS_FILE && i + 1 < len)
			return usage_error("option '-b' must come last in '%s'",
					   arg);
		if (ret != 1)
			return ret;
	}
	return 1;
}

/* One command: OBJECT [ COMMAND [ ARGS ] ], or help. */
static int run_command(int argc, char **argv)
{
	const struct object *obj;
	int ret;

	cur_object = NULL;
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

/*
 * rmbd -batch FILE: each line a command as after "rmbd [ OPTIONS ]".
 * Stops at the first that fails, unless -force; then exits 1.
 */
static int run_batch(const char *file)
{
	char *line = NULL, *words[MAX_LINE_WORDS];
	unsigned long lineno = 0;
	size_t cap = 0;
	const char *why;
	int n, ret, rc = 0;
	FILE *f;

	f = strcmp(file, "-") ? fopen(file, "re") : stdin;
	if (!f) {
		fprintf(stderr, "rmbd: %s: cannot open: %s\n", file,
			strerror(errno));
		return EXIT_FAIL;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		n = split_words(line, words, &why);
		if (n < 0) {
			fprintf(stderr, "rmbd: %s:%lu: %s\n", file, lineno, why);
			ret = EXIT_USAGE;
		} else if (!n) {
			continue;
		} else {
			ret = run_command(n, words);
			fflush(stdout);
		}
		if (ret) {
			fprintf(stderr, "rmbd: %s:%lu: command failed\n", file,
				lineno);
			rc = EXIT_FAIL;
			if (!batch_force)
				break;
		}
	}
	if (ferror(f) && !rc) {
		fprintf(stderr, "rmbd: cannot read %s\n", file);
		rc = EXIT_FAIL;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
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
		if (ret == OPT_NEEDS_FILE) {
			if (argc < 2)
				return usage_error("option '%s' needs a file",
						   argv[0]);
			batch_file = argv[1];
			argc--;
			argv++;
		} else if (ret != 1) {
			return ret;
		}
		argc--;
		argv++;
	}
	print_init(opt.json, opt.pretty, opt.human);

	if (batch_file) {
		if (argc > 0)
			return usage_error("unexpected argument '%s' after -batch",
					   argv[0]);
		return run_batch(batch_file);
	}
	if (batch_force)
		return usage_error("-force goes with -batch");
	return run_command(argc, argv);
}
