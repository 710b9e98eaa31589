// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: what a device shows in sysfs and tells udev.
 *
 * /sys/block/rmbdN/rmbd/ holds read-only attributes of the device and its
 * legs, for udev rules (its /dev/disk/by-id name) and for scripts that
 * do not speak netlink.  A change uevent follows each change of the
 * device's or a leg's state, with RMBD_EVENT and RMBD_STATE.
 */
#include <linux/blkdev.h>
#include <linux/kobject.h>
#include <linux/sched/mm.h>
#include <linux/sysfs.h>

#include "client.h"

static const char *const rmbd_c_state_names[] = {
	[RMBD_DEV_STATE_CONNECTING]	= "connecting",
	[RMBD_DEV_STATE_LIVE]		= "live",
	[RMBD_DEV_STATE_FAILED]		= "failed",
	[RMBD_DEV_STATE_DELETING]	= "deleting",
	[RMBD_DEV_STATE_RECONNECTING]	= "reconnecting",
};

/* As the CLI's monitor names them. */
static const char *const rmbd_c_event_names[] = {
	[RMBD_DEV_EVENT_CONNECTED]	= "connected",
	[RMBD_DEV_EVENT_LINK_DOWN]	= "link-down",
	[RMBD_DEV_EVENT_RECONNECTING]	= "reconnecting",
	[RMBD_DEV_EVENT_LIVE]		= "live",
	[RMBD_DEV_EVENT_FAILED]		= "failed",
	[RMBD_DEV_EVENT_DISCONNECTED]	= "disconnected",
	[RMBD_DEV_EVENT_DEGRADED]	= "degraded",
	[RMBD_DEV_EVENT_LEG_BACK]	= "leg-back",
	[RMBD_DEV_EVENT_RESYNC]		= "resync",
	[RMBD_DEV_EVENT_HEALTHY]	= "healthy",
	[RMBD_DEV_EVENT_REPLACED]	= "replaced",
};

static const char *rmbd_c_state_name(u8 state)
{
	if (state < ARRAY_SIZE(rmbd_c_state_names) &&
	    rmbd_c_state_names[state])
		return rmbd_c_state_names[state];
	return "unknown";
}

static const char *rmbd_c_event_name(u8 event)
{
	if (event < ARRAY_SIZE(rmbd_c_event_names) &&
	    rmbd_c_event_names[event])
		return rmbd_c_event_names[event];
	return "unknown";
}

static const char *rmbd_c_leg_state_name(struct rmbd_c_leg *leg)
{
	switch (rmbd_c_leg_state(leg)) {
	case RMBD_LEG_STATE_UP:
		return "up";
	case RMBD_LEG_STATE_STALE:
		return "stale";
	case RMBD_LEG_STATE_FAILED:
		return "failed";
	default:
		return "down";
	}
}

static struct rmbd_c_dev *rmbd_c_sysfs_dev(struct device *d)
{
	return dev_to_disk(d)->private_data;
}

/*
 * The device's own attributes.  Without rmbd_c_mutex, which a dump holds
 * while it allocates: the disk, and with it these files, goes before the
 * device does; a replace swaps a leg with WRITE_ONCE and keeps the old
 * one (dev->retired) until then, so a reader sees one leg or the other.
 */
#define RMBD_C_DEV_ATTR(_name, _fmt, ...)				\
static ssize_t _name##_show(struct device *d,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct rmbd_c_dev *dev = rmbd_c_sysfs_dev(d);			\
									\
	return sysfs_emit(buf, _fmt "\n", __VA_ARGS__);			\
}									\
static DEVICE_ATTR_RO(_name)

RMBD_C_DEV_ATTR(state, "%s", rmbd_c_state_name(rmbd_c_dev_uapi_state(dev)));
RMBD_C_DEV_ATTR(layout, "%s",
		dev->layout == RMBD_LAYOUT_POOL ? "pool" : "mirror");
RMBD_C_DEV_ATTR(legs, "%u", dev->nr_legs);
RMBD_C_DEV_ATTR(copies, "%u", dev->copies);
RMBD_C_DEV_ATTR(host, "%s", dev->host);
/*
 * The name of its /dev/disk/by-id link: the target and export of its
 * first leg at connect, for the device's life
 */
RMBD_C_DEV_ATTR(id, "%s", dev->id);

/*
 * The legs' attributes: one value per leg, in leg order, space-separated;
 * without rmbd_c_mutex, as the device's.
 */
#define RMBD_C_LEG_ATTR(_name, _fmt, ...)				\
static ssize_t _name##_show(struct device *d,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct rmbd_c_dev *dev = rmbd_c_sysfs_dev(d);			\
	struct rmbd_c_leg *leg;						\
	unsigned int i;							\
	int len = 0;							\
									\
	for (i = 0; i < dev->nr_legs; i++) {				\
		leg = READ_ONCE(dev->legs[i]);				\
		len += sysfs_emit_at(buf, len, "%s" _fmt,		\
				     i ? " " : "", __VA_ARGS__);		\
	}								\
	len += sysfs_emit_at(buf, len, "\n");				\
	return len;							\
}									\
static DEVICE_ATTR_RO(_name)

RMBD_C_LEG_ATTR(addr, "%s", leg->addr_str);
RMBD_C_LEG_ATTR(port, "%u", leg->port);
RMBD_C_LEG_ATTR(export, "%s", leg->export_name);
/* The export's id: random, fixed for its life on the target */
RMBD_C_LEG_ATTR(serial, "%016llx", leg->export_id);
RMBD_C_LEG_ATTR(leg_state, "%s", rmbd_c_leg_state_name(leg));

static struct attribute *rmbd_c_attrs[] = {
	&dev_attr_state.attr,
	&dev_attr_layout.attr,
	&dev_attr_legs.attr,
	&dev_attr_copies.attr,
	&dev_attr_host.attr,
	&dev_attr_id.attr,
	&dev_attr_addr.attr,
	&dev_attr_port.attr,
	&dev_attr_export.attr,
	&dev_attr_serial.attr,
	&dev_attr_leg_state.attr,
	NULL,
};

static const struct attribute_group rmbd_c_attr_group = {
	.name = "rmbd",
	.attrs = rmbd_c_attrs,
};

const struct attribute_group *rmbd_c_attr_groups[] = {
	&rmbd_c_attr_group,
	NULL,
};

/*
 * Sends the queued uevents, in order.  In a memalloc_noio scope: the
 * device may be the swap that reclaim writes to, and be reconnecting.
 */
static void rmbd_c_uevent_work(struct work_struct *work)
{
	struct rmbd_c_dev *dev = container_of(work, struct rmbd_c_dev,
					      uevent_work);
	char event[32], state[32];
	char *envp[3];
	unsigned int noio;
	u16 ev;

	envp[0] = event;
	envp[1] = state;
	envp[2] = NULL;
	noio = memalloc_noio_save();
	while (kfifo_out_spinlocked(&dev->uevents, &ev, 1,
				    &dev->uevent_lock)) {
		snprintf(event, sizeof(event), "RMBD_EVENT=%s",
			 rmbd_c_event_name(ev >> 8));
		snprintf(state, sizeof(state), "RMBD_STATE=%s",
			 rmbd_c_state_name(ev & 0xff));
		kobject_uevent_env(&disk_to_dev(dev->disk)->kobj, KOBJ_CHANGE,
				   envp);
	}
	memalloc_noio_restore(noio);
}

void rmbd_c_uevent_init(struct rmbd_c_dev *dev)
{
	spin_lock_init(&dev->uevent_lock);
	INIT_KFIFO(dev->uevents);
	INIT_WORK(&dev->uevent_work, rmbd_c_uevent_work);
}

/* The disk is added: its state changes go to udev from now on. */
void rmbd_c_uevent_start(struct rmbd_c_dev *dev)
{
	spin_lock(&dev->uevent_lock);
	dev->uevents_on = true;
	spin_unlock(&dev->uevent_lock);
}

/* Before the disk goes; idempotent. */
void rmbd_c_uevent_stop(struct rmbd_c_dev *dev)
{
	spin_lock(&dev->uevent_lock);
	dev->uevents_on = false;
	spin_unlock(&dev->uevent_lock);
	cancel_work_sync(&dev->uevent_work);
}

/*
 * Queue a uevent for @event, with the state @dev is in now.  Allocates
 * nothing: a full queue loses its oldest event, so that the last one
 * udev sees has the current state (the netlink events have them all).
 * Sent from the system workqueue: not from rmbd_c_wq, whose rescuer
 * recovery needs and which a uevent's allocations could hold up.
 */
void rmbd_c_uevent(struct rmbd_c_dev *dev, u8 event)
{
	u16 ev = (u16)event << 8 | rmbd_c_dev_uapi_state(dev);

	spin_lock(&dev->uevent_lock);
	if (dev->uevents_on) {
		if (kfifo_is_full(&dev->uevents))
			kfifo_skip(&dev->uevents);
		kfifo_put(&dev->uevents, ev);
		queue_work(system_wq, &dev->uevent_work);
	}
	spin_unlock(&dev->uevent_lock);
}
