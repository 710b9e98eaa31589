// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rmbd-swap-generator: swap on an rmbd device, ordered after the device's
 * unit.  systemd's fstab generator ignores x-systemd.requires= on swap
 * entries (it honours it on mounts), so a swap entry naming
 * x-systemd.requires=rmbd-dev@NAME.service would be started before its
 * device is connected.  For each such entry of /etc/fstab ($SYSTEMD_FSTAB
 * if set) this generator writes two drop-ins into its normal directory
 * (the first of the three that systemd passes).  The swap unit requires
 * and comes after rmbd-dev@NAME.service, without the default dependencies:
 * their Before=swap.target, swap.target being part of sysinit.target,
 * which the network the device needs comes after, would make a cycle;
 * umount.target, the other one that matters, is restated.  The device unit
 * the swap binds to comes after rmbd-dev@NAME.service too, so that the
 * job waiting for the device, and its timeout, start once the device is
 * connected.  Units are named as systemd's fstab generator names them.  A
 * bad entry or option is reported on stderr and ignored: the exit status
 * is not 0 only when the output directory cannot be written.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PROG		"rmbd-swap-generator"
/* systemd's limit: a unit name is shorter than UNIT_NAME_MAX. */
#define UNIT_NAME_MAX	256
#define REQUIRES	"x-systemd.requires="
#define RMBD_PREFIX	"rmbd-dev@"
#define RMBD_SUFFIX	".service"
#define DROPIN		"50-rmbd.conf"
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *fstab_path;

static void __attribute__((format(printf, 2, 3)))
report(const struct mntent *me, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": %s: %s: ", fstab_path, me->mnt_fsname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * The length of the valid UTF-8 sequence of two or more bytes at @s, else
 * 0; as systemd's utf8_encoded_valid_unichar(), which encode_devnode_name()
 * uses to keep such characters as they are.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned int c, min;
	int len, i;

	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		c = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		c = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		c = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong, beyond Unicode, UTF-16 surrogates, non-characters. */
	if (c < min || c >= 0x110000 || (c & 0xfffff800) == 0xd800 ||
	    (c >= 0xfdd0 && c <= 0xfdef) || (c & 0xfffe) == 0xfffe)
		return 0;
	return len;
}

static bool devnode_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
	       (c >= 'a' && c <= 'z') || (c && strchr("#+-.:=@_", c));
}

/*
 * The device node of an fstab source, as systemd's
 * fstab_node_to_udev_node(): LABEL=, UUID=, PARTUUID= and PARTLABEL=
 * become the /dev/disk/by-* link that udev makes, the tag's value
 * stripped of one pair of enclosing quotes and encoded as udev encodes
 * it; anything else is the path itself.  Returns a string to free.
 */
static char *udev_node(const char *src)
{
	static const struct {
		const char *tag, *dir;
	} tags[] = {
		{ "LABEL=", "label" },
		{ "UUID=", "uuid" },
		{ "PARTUUID=", "partuuid" },
		{ "PARTLABEL=", "partlabel" },
	};
	const char *val = NULL, *dir = NULL;
	size_t i, len, n;
	char *out, *p;

	for (i = 0; i < ARRAY_SIZE(tags); i++) {
		len = strlen(tags[i].tag);
		if (!strncmp(src, tags[i].tag, len)) {
			val = src + len;
			dir = tags[i].dir;
			break;
		}
	}
	if (!val)
		return strdup(src);

	len = strlen(val);
	if (len >= 2 && (val[0] == '"' || val[0] == '\'') &&
	    val[len - 1] == val[0]) {
		val++;
		len -= 2;
	}
	out = malloc(strlen("/dev/disk/by-/") + strlen(dir) + 4 * len + 1);
	if (!out)
		return NULL;
	p = out + sprintf(out, "/dev/disk/by-%s/", dir);
	for (i = 0; i < len; i++) {
		n = utf8_len((const unsigned char *)val + i);
		if (n > len - i)
			n = 0;
		if (n) {
			memcpy(p, val + i, n);
			p += n;
			i += n - 1;
		} else if (devnode_char(val[i])) {
			*p++ = val[i];
		} else {
			p += sprintf(p, "\\x%02x", (unsigned char)val[i]);
		}
	}
	*p = '\0';
	return out;
}

/*
 * The unit of @path with @suffix, as systemd's unit_name_from_path(): the
 * path without empty and "." components (".." is refused), without its
 * leading and trailing '/', each '/' a '-', each byte but [A-Za-z0-9:_.]
 * and a leading '.' as \xNN; "/" is "-".  Returns -EINVAL for a path
 * that has no unit name, -ENAMETOOLONG when the name would be too long.
 */
static int unit_from_path(const char *path, const char *suffix, char *buf,
			  size_t size)
{
	const char *c = path, *end;
	size_t len, n = 0;
	bool first = true;

	if (size < UNIT_NAME_MAX)
		return -EINVAL;
	for (;;) {
		while (*c == '/')
			c++;
		if (!*c)
			break;
		end = strchr(c, '/');
		if (!end)
			end = c + strlen(c);
		len = end - c;
		if (len == 2 && !strncmp(c, "..", 2))
			return -EINVAL;
		if (len == 1 && *c == '.') {
			c = end;
			continue;
		}
		if (!first)
			buf[n++] = '-';
		for (; c < end; c++) {
			/* Room for an escaped byte and a '-' or the NUL. */
			if (n + 5 > UNIT_NAME_MAX)
				return -ENAMETOOLONG;
			if ((*c >= '0' && *c <= '9') ||
			    (*c >= 'A' && *c <= 'Z') ||
			    (*c >= 'a' && *c <= 'z') ||
			    *c == ':' || *c == '_' || (*c == '.' && n))
				buf[n++] = *c;
			else
				n += sprintf(buf + n, "\\x%02x",
					     (unsigned char)*c);
		}
		first = false;
	}
	if (first) {
		if (*path != '/')
			return -EINVAL;
		buf[n++] = '-';
	}
	if (n + strlen(suffix) >= UNIT_NAME_MAX)
		return -ENAMETOOLONG;
	strcpy(buf + n, suffix);
	return 0;
}

/*
 * Whether @name is rmbd-dev@INSTANCE.service with an instance that
 * systemd takes: [A-Za-z0-9:_.@\\-], and a name shorter than
 * UNIT_NAME_MAX.
 */
static bool rmbd_unit_valid(const char *name)
{
	size_t len = strlen(name), plen = strlen(RMBD_PREFIX);
	size_t slen = strlen(RMBD_SUFFIX), i;
	char c;

	if (len >= UNIT_NAME_MAX || len <= plen + slen ||
	    strcmp(name + len - slen, RMBD_SUFFIX))
		return false;
	for (i = plen; i < len - slen; i++) {
		c = name[i];
		if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
		      (c >= 'a' && c <= 'z') || strchr(":-_.@\\", c)))
			return false;
	}
	return true;
}

/*
 * The rmbd-dev@ units of the entry's x-systemd.requires= options, into
 * @units (at most @max, each once); others are reported and left out.
 * Returns how many there are.  Modifies @opts.
 */
static int rmbd_units(const struct mntent *me, char *opts, char **units,
		      int max)
{
	char *opt, *val;
	int n = 0, i;

	while ((opt = strsep(&opts, ","))) {
		if (strncmp(opt, REQUIRES, strlen(REQUIRES)))
			continue;
		val = opt + strlen(REQUIRES);
		if (!*val) {
			report(me, REQUIRES " is empty: ignored");
			continue;
		}
		if (strncmp(val, RMBD_PREFIX, strlen(RMBD_PREFIX))) {
			report(me, "%s%s: not an rmbd-dev@ unit, ignored",
			       REQUIRES, val);
			continue;
		}
		if (!rmbd_unit_valid(val)) {
			report(me, "%s%s: not a valid rmbd-dev@NAME.service name, ignored",
			       REQUIRES, val);
			continue;
		}
		for (i = 0; i < n && strcmp(units[i], val); i++)
			;
		if (i == n && n < max)
			units[n++] = val;
	}
	return n;
}

/*
 * Writes DIR/UNIT.d/50-rmbd.conf: the swap unit's (@swap) or the device
 * unit's dependencies on @units.  Returns 0, -EEXIST when the file is
 * there already, or another -errno (reported).
 */
static int write_dropin(const char *dir, const char *unit, bool swap,
			char **units, int n)
{
	char path[PATH_MAX];
	FILE *f;
	int fd, i, err;

	if (snprintf(path, sizeof(path), "%s/%s.d", dir, unit) >=
	    (int)sizeof(path)) {
		fprintf(stderr, PROG ": %s/%s.d: path too long\n", dir, unit);
		return -ENAMETOOLONG;
	}
	if (mkdir(path, 0755) && errno != EEXIST) {
		err = -errno;
		fprintf(stderr, PROG ": cannot create %s: %s\n", path,
			strerror(errno));
		return err;
	}
	strcat(path, "/" DROPIN);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		if (err != -EEXIST)
			fprintf(stderr, PROG ": cannot create %s: %s\n", path,
				strerror(errno));
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out_unlink;
	}
	fputs("[Unit]\n", f);
	if (swap)
		fputs("DefaultDependencies=no\n", f);
	for (i = 0; i < n; i++) {
		if (swap)
			fprintf(f, "Requires=%s\n", units[i]);
		fprintf(f, "After=%s\n", units[i]);
	}
	if (swap)
		fputs("Conflicts=umount.target\nBefore=umount.target\n", f);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	if (!err)
		return 0;
out_unlink:
	fprintf(stderr, PROG ": cannot write %s: %s\n", path, strerror(-err));
	unlink(path);
	return err;
}

/* Returns -1 when the output directory could not be written, else 0. */
static int add_swap(const char *dir, const struct mntent *me)
{
	char swap[UNIT_NAME_MAX], device[UNIT_NAME_MAX];
	char *opts, *what, **units;
	int n, max, err, ret = 0;

	/* No more units than options: a comma between each two. */
	max = 1;
	for (opts = me->mnt_opts; *opts; opts++)
		max += *opts == ',';
	opts = strdup(me->mnt_opts);
	units = calloc(max, sizeof(*units));
	what = udev_node(me->mnt_fsname);
	if (!opts || !units || !what) {
		report(me, "out of memory, ignored");
		goto out_free;
	}
	n = rmbd_units(me, opts, units, max);
	if (!n)
		goto out_free;

	err = unit_from_path(what, ".swap", swap, sizeof(swap));
	if (!err)
		err = unit_from_path(what, ".device", device, sizeof(device));
	if (err) {
		report(me, "%s: no unit name (%s), ignored", what,
		       err == -ENAMETOOLONG ? "too long" : "not a normalized path");
		goto out_free;
	}

	err = write_dropin(dir, swap, true, units, n);
	if (err == -EEXIST) {
		report(me, "%s: in an earlier entry already, ignored", swap);
		goto out_free;
	}
	if (err) {
		ret = -1;
		goto out_free;
	}
	/* A swap file binds to no device unit, a node below /dev does. */
	if (what[0] != '/' || strncmp(swap, "dev-", 4))
		goto out_free;
	err = write_dropin(dir, device, false, units, n);
	if (err)
		ret = -1;
out_free:
	free(what);
	free(units);
	free(opts);
	return ret;
}

int main(int argc, char **argv)
{
	struct mntent *me;
	FILE *f;
	int ret = 0;

	/* systemd passes three directories; one will do for a test. */
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "Usage: " PROG " NORMAL-DIR [EARLY-DIR LATE-DIR]\n");
		return 1;
	}
	fstab_path = getenv("SYSTEMD_FSTAB");
	if (!fstab_path || !*fstab_path)
		fstab_path = "/etc/fstab";

	f = setmntent(fstab_path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		fprintf(stderr, PROG ": cannot open %s: %s\n", fstab_path,
			strerror(errno));
		return 0;
	}
	while ((me = getmntent(f)))
		if (!strcmp(me->mnt_type, "swap") && add_swap(argv[1], me))
			ret = 1;
	endmntent(f);
	return ret;
}
