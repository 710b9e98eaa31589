// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: module setup, and RDMA devices that go away under the
 * legs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/sched/mm.h>
#include "client.h"

DEFINE_MUTEX(rmbd_c_mutex);
LIST_HEAD(rmbd_c_devs);
struct workqueue_struct *rmbd_c_wq;
struct workqueue_struct *rmbd_c_post_wq;

static struct ib_client rmbd_c_ib_client;

/*
 * An RDMA device's port going down is news that the queues' timeouts
 * would bring only seconds later (7 tries of an RC ACK timeout, or the
 * keepalive): a leg over it is lost at once, and I/O goes on over the
 * other legs.
 */
struct rmbd_c_ibdev {
	struct ib_device	*ibdev;
	struct ib_event_handler	handler;
	struct work_struct	port_work;
	unsigned long		ports_down;	/* bit N: port N went down */
};

/* The first leg up over one of @ports of @ibdev, with a reference */
static struct rmbd_c_leg *rmbd_c_leg_on_ports(struct ib_device *ibdev,
					      unsigned long ports)
{
	struct rmbd_c_leg *leg;
	struct rmbd_c_dev *dev;
	unsigned int i;

	lockdep_assert_held(&rmbd_c_mutex);
	list_for_each_entry(dev, &rmbd_c_devs, entry) {
		/* Connecting (its connect fails) or going */
		if (!dev->connected)
			continue;
		for (i = 0; i < dev->nr_legs; i++) {
			leg = READ_ONCE(dev->legs[i]);
			if (READ_ONCE(leg->ibdev) == ibdev &&
			    leg->ibport < BITS_PER_LONG &&
			    test_bit(leg->ibport, &ports) &&
			    test_bit(RMBD_C_LEG_UP, &leg->flags) &&
			    !READ_ONCE(leg->stopping)) {
				kref_get(&dev->ref);
				return leg;
			}
		}
	}
	return NULL;
}

static void rmbd_c_port_work(struct work_struct *work)
{
	struct rmbd_c_ibdev *d = container_of(work, struct rmbd_c_ibdev,
					      port_work);
	unsigned long ports = xchg(&d->ports_down, 0);
	struct rmbd_c_leg *leg, *prev = NULL;
	unsigned int noio;

	for (;;) {
		mutex_lock(&rmbd_c_mutex);
		leg = rmbd_c_leg_on_ports(d->ibdev, ports);
		mutex_unlock(&rmbd_c_mutex);
		if (!leg)
			break;
		pr_warn("rmbd%d: leg %u: port %u of %s went down\n",
			leg->dev->index, leg->index, leg->ibport,
			dev_name(&d->ibdev->dev));
		/* As rmbd_c_remove_one(): requests wait for this. */
		noio = memalloc_noio_save();
		mutex_lock(&leg->recovery_lock);
		/* Still that session (else it was lost, and so not up now). */
		if (leg->ibdev == d->ibdev && !leg->stopping &&
		    test_bit(RMBD_C_LEG_UP, &leg->flags)) {
			rmbd_c_leg_lost(leg);
			rmbd_c_recover(leg);
		}
		rmbd_c_recovery_unlock(leg);
		memalloc_noio_restore(noio);
		rmbd_c_dev_put(leg->dev);
		/* Up again already, over another port or device: done. */
		if (leg == prev)
			break;
		prev = leg;
	}
}

/* Any context: the work looks for the legs. */
static void rmbd_c_port_event(struct ib_event_handler *handler,
			      struct ib_event *ev)
{
	struct rmbd_c_ibdev *d = container_of(handler, struct rmbd_c_ibdev,
					      handler);

	if (ev->event != IB_EVENT_PORT_ERR ||
	    ev->element.port_num >= BITS_PER_LONG)
		return;
	set_bit(ev->element.port_num, &d->ports_down);
	queue_work(rmbd_c_wq, &d->port_work);
}

static int rmbd_c_add_one(struct ib_device *ibdev)
{
	struct rmbd_c_ibdev *d;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->ibdev = ibdev;
	INIT_WORK(&d->port_work, rmbd_c_port_work);
	INIT_IB_EVENT_HANDLER(&d->handler, ibdev, rmbd_c_port_event);
	ib_register_event_handler(&d->handler);
	ib_set_client_data(ibdev, &rmbd_c_ib_client, d);
	return 0;
}

/*
 * An RDMA device goes away: every session on it must let go of it before
 * this returns.  A live device with a loss timeout reconnects (on another
 * RDMA device, or on this one once it is back); the others fail.
 */
static void rmbd_c_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct rmbd_c_ibdev *d = client_data;
	struct rmbd_c_dev *dev, *found;
	struct rmbd_c_leg *leg = NULL;
	unsigned int i, noio;

	if (d) {
		ib_unregister_event_handler(&d->handler);
		cancel_work_sync(&d->port_work);
		kfree(d);
	}
	for (;;) {
		found = NULL;
		mutex_lock(&rmbd_c_mutex);
		list_for_each_entry(dev, &rmbd_c_devs, entry) {
			/* Connecting (its connect fails) or going */
			if (!dev->connected)
				continue;
			for (i = 0; i < dev->nr_legs; i++) {
				leg = dev->legs[i];
				if (READ_ONCE(leg->ibdev) == ibdev) {
					kref_get(&dev->ref);
					found = dev;
					break;
				}
			}
			if (found)
				break;
		}
		/* A reconnect over it under way ends at its next wait. */
		if (found)
			rmbd_c_leg_abort(leg);
		mutex_unlock(&rmbd_c_mutex);
		if (!found)
			break;
		pr_warn("rmbd%d: RDMA device %s removed\n", found->index,
			dev_name(&ibdev->dev));
		/*
		 * As the error work: the device's parked requests (swap-out
		 * among them) wait for this, so its allocations must not
		 * wait on I/O; a provider's teardown allocates.
		 */
		noio = memalloc_noio_save();
		mutex_lock(&leg->recovery_lock);
		if (leg->ibdev == ibdev) {
			rmbd_c_leg_lost(leg);
			rmbd_c_recover(leg);
		}
		/* Failed, or being deleted meanwhile: let go all the same. */
		if (leg->ibdev == ibdev && !leg->stopping)
			rmbd_c_leg_teardown_quiesced(leg);
		rmbd_c_recovery_unlock(leg);
		memalloc_noio_restore(noio);
		rmbd_c_dev_put(found);
	}
}

static struct ib_client rmbd_c_ib_client = {
	.name	= "rmbd_client",
	.add	= rmbd_c_add_one,
	.remove	= rmbd_c_remove_one,
};

static int __init rmbd_client_init(void)
{
	int ret;

	rmbd_c_wq = alloc_workqueue("rmbd_client", WQ_MEM_RECLAIM, 0);
	if (!rmbd_c_wq)
		return -ENOMEM;
	/* Soft providers' posts (rmbd_c_queue_commit()): swap goes there. */
	rmbd_c_post_wq = alloc_workqueue("rmbd_post",
					 WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	if (!rmbd_c_post_wq) {
		ret = -ENOMEM;
		goto out_destroy_wq;
	}
	ret = rmbd_c_dev_init();
	if (ret)
		goto out_destroy_post_wq;
	ret = ib_register_client(&rmbd_c_ib_client);
	if (ret)
		goto out_dev_exit;
	ret = rmbd_c_netlink_init();
	if (ret)
		goto out_unregister_client;
	return 0;

out_unregister_client:
	ib_unregister_client(&rmbd_c_ib_client);
out_dev_exit:
	rmbd_c_dev_exit();
out_destroy_post_wq:
	destroy_workqueue(rmbd_c_post_wq);
out_destroy_wq:
	destroy_workqueue(rmbd_c_wq);
	return ret;
}

static void __exit rmbd_client_exit(void)
{
	/* No command runs once the family is gone: nothing is connecting. */
	rmbd_c_netlink_exit();
	rmbd_c_dev_exit();
	ib_unregister_client(&rmbd_c_ib_client);
	destroy_workqueue(rmbd_c_post_wq);
	destroy_workqueue(rmbd_c_wq);
}

module_init(rmbd_client_init);
module_exit(rmbd_client_exit);

MODULE_DESCRIPTION("rmbd client: block devices in remote memory over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(RMBD_VERSION);
MODULE_SOFTDEP("pre: hmac sha256");
