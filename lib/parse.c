// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * librmbd: parsers of sizes and device names, names of events; no kernel
 * needed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "librmbd.h"

/* Decimal digits only; -EINVAL if none or junk, -ERANGE on overflow. */
static int rmbd_parse_decimal(const char *s, const char **end, uint64_t *val)
{
	uint64_t v = 0;
	const char *p;

	for (p = s; *p >= '0' && *p <= '9'; p++) {
		unsigned int digit = (unsigned int)(*p - '0');

		if (v > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	if (p == s)
		return -EINVAL;
	*end = p;
	*val = v;
	return 0;
}

int rmbd_parse_size(const char *s, uint64_t *bytes)
{
	static const char suffixes[] = "KMGTPE";
	const char *end, *pos;
	unsigned int shift;
	uint64_t v;
	int ret;

	if (!s)
		return -EINVAL;
	ret = rmbd_parse_decimal(s, &end, &v);
	if (ret)
		return ret;
	if (*end == '\0') {
		*bytes = v;
		return 0;
	}

	pos = *end >= 'a' && *end <= 'z' ?
		strchr(suffixes, *end - 'a' + 'A') : strchr(suffixes, *end);
	if (!pos || !*pos)
		return -EINVAL;
	end++;
	if (*end && strcasecmp(end, "ib"))
		return -EINVAL;

	shift = 10 * (unsigned int)(pos - suffixes + 1);
	if (v > (UINT64_MAX >> shift))
		return -ERANGE;
	*bytes = v << shift;
	return 0;
}

int rmbd_parse_dev(const char *s, uint32_t *index)
{
	const char *end;
	uint64_t v;
	int ret;

	if (!s)
		return -EINVAL;
	if (!strncmp(s, "/dev/", 5)) {
		s += 5;
		if (strncmp(s, "rmbd", 4))
			return -EINVAL;
	}
	if (!strncmp(s, "rmbd", 4))
		s += 4;
	/* Device names have no leading zeros. */
	if (s[0] == '0' && s[1] != '\0')
		return -EINVAL;
	ret = rmbd_parse_decimal(s, &end, &v);
	if (ret)
		return ret;
	if (*end)
		return -EINVAL;
	if (v > UINT32_MAX)
		return -ERANGE;
	*index = (uint32_t)v;
	return 0;
}

const char *rmbd_dev_event_name(uint8_t event)
{
	switch (event) {
	case RMBD_DEV_EVENT_CONNECTED:
		return "connected";
	case RMBD_DEV_EVENT_LINK_DOWN:
		return "link-down";
	case RMBD_DEV_EVENT_RECONNECTING:
		return "reconnecting";
	case RMBD_DEV_EVENT_LIVE:
		return "live";
	case RMBD_DEV_EVENT_FAILED:
		return "failed";
	case RMBD_DEV_EVENT_DISCONNECTED:
		return "disconnected";
	case RMBD_DEV_EVENT_DEGRADED:
		return "degraded";
	case RMBD_DEV_EVENT_LEG_BACK:
		return "leg-back";
	case RMBD_DEV_EVENT_RESYNC:
		return "resync";
	case RMBD_DEV_EVENT_HEALTHY:
		return "healthy";
	case RMBD_DEV_EVENT_REPLACED:
		return "replaced";
	default:
		return "unknown";
	}
}

const char *rmbd_session_event_name(uint8_t event)
{
	switch (event) {
	case RMBD_SESSION_EVENT_UP:
		return "up";
	case RMBD_SESSION_EVENT_DOWN:
		return "down";
	default:
		return "unknown";
	}
}

bool rmbd_valid_host(const char *host)
{
	size_t i, len = strnlen(host, RMBD_HOST_MAX);

	if (!len || len >= RMBD_HOST_MAX || host[0] == '.' || host[0] == '-')
		return false;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)host[i];

		if (!isascii(c) || (!isalnum(c) && !strchr("._:-", c)))
			return false;
	}
	return true;
}

/* The first line of path, without its newline, into buf; -ENOENT if none. */
static int rmbd_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -ENOENT;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -ENOENT;
	}
	fclose(f);
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return 0;
}

int rmbd_host_default(char *buf, size_t len)
{
	const char *file = getenv("RMBD_HOSTID_FILE");
	char id[RMBD_HOST_MAX + 2];
	unsigned int i;

	if (!file)
		file = "/etc/rmbd/hostid";
	if (!rmbd_read_line(file, id, sizeof(id))) {
		if (!rmbd_valid_host(id) || strlen(id) >= len)
			return -EINVAL;
		strcpy(buf, id);
		return 0;
	}
	file = getenv("RMBD_MACHINE_ID_FILE");
	if (rmbd_read_line(file ? file : "/etc/machine-id", id, sizeof(id)))
		return -ENOENT;
	/* 32 hex digits, as systemd writes it; as a UUID, 8-4-4-4-12. */
	if (strlen(id) != 32)
		return -ENOENT;
	for (i = 0; i < 32; i++)
		if (!isxdigit((unsigned char)id[i]))
			return -ENOENT;
	if (len < sizeof("rmbd:uuid:") + 36)
		return -EINVAL;
	snprintf(buf, len, "rmbd:uuid:%.8s-%.4s-%.4s-%.4s-%.12s", id, id + 8,
		 id + 12, id + 16, id + 20);
	for (i = 0; buf[i]; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	return 0;
}

static int rmbd_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int rmbd_secret_read(const char *path, uint8_t *buf, size_t *len)
{
	char line[2 * RMBD_SECRET_MAX + 2];
	size_t i, n;
	struct stat st;
	FILE *f;
	int ret = 0;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || (st.st_mode & 077)) {
		fclose(f);
		return -EPERM;
	}
	if (!fgets(line, sizeof(line), f)) {
		line[0] = '\0';
		ret = -EINVAL;
	}
	fclose(f);
	n = strcspn(line, "\n");
	if (!ret && (n % 2 || n < 2 * RMBD_SECRET_MIN || n > 2 * RMBD_SECRET_MAX))
		ret = -EINVAL;
	for (i = 0; !ret && i < n / 2; i++) {
		int hi = rmbd_hex((unsigned char)line[2 * i]);
		int lo = rmbd_hex((unsigned char)line[2 * i + 1]);

		if (hi < 0 || lo < 0)
			ret = -EINVAL;
		else
			buf[i] = (uint8_t)(hi << 4 | lo);
	}
	memset(line, 0, sizeof(line));
	if (!ret)
		*len = n / 2;
	return ret;
}

int rmbd_secret_generate(uint8_t *buf, size_t len)
{
	if (len < RMBD_SECRET_MIN || len > RMBD_SECRET_MAX)
		return -EINVAL;
	if (getrandom(buf, len, 0) != (ssize_t)len)
		return -errno ? -errno : -EIO;
	return 0;
}

int rmbd_dev_place(const struct rmbd_dev_info *d, uint64_t e, unsigned int k,
		   uint32_t *leg, uint64_t *offset)
{
	uint64_t i;

	if (!d->nr_legs || !d->copies || d->copies > d->nr_legs ||
	    k >= d->copies || !d->extent_size ||
	    (d->extent_size & (d->extent_size - 1)) ||
	    e >= d->size / d->extent_size)
		return -EINVAL;
	if (d->layout == RMBD_LAYOUT_MIRROR) {
		*leg = k;
		*offset = e * d->extent_size;
		return 0;
	}
	if (d->layout != RMBD_LAYOUT_POOL)
		return -EINVAL;
	i = e * d->copies + k;
	*leg = i % d->nr_legs;
	*offset = i / d->nr_legs * d->extent_size;
	return 0;
}
