// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd target: connection manager ids parked until their port is back.
 *
 * A session released while its port is down (its client's link lost,
 * say) gives up everything at once but its rdma_cm ids: destroying an id
 * that is still connected sends a disconnect request, and on a down
 * soft-RoCE port that request moves rxe's GSI queue pair to the error
 * state, whose receive side the MAD layer's move back to RTS leaves in
 * error, so that no connection manager message reaches that device again
 * until rxe is reloaded.  The ids wait here instead, on a workqueue of
 * their own (nothing that flushes rmbd_t_wq waits for them), and are
 * destroyed once the port is active, when the RDMA device goes away
 * (rdma_cm destroys them), or when the module is unloaded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include "target.h"

struct rmbd_t_parked {
	enum rmbd_t_ctx_kind	kind;		/* RMBD_T_CTX_PARKED */
	struct list_head	entry;		/* rmbd_t_parked_list */
	struct delayed_work	work;
	u64			sess_id;	/* for the log */
	/* @ids against rdma_cm's DEVICE_REMOVAL, which may destroy one */
	spinlock_t		lock;
	unsigned int		nr_ids;
	struct rdma_cm_id	*ids[];
};

static struct workqueue_struct *rmbd_t_park_wq;
static LIST_HEAD(rmbd_t_parked_list);
static DEFINE_MUTEX(rmbd_t_parked_mutex);	/* the list, unparking */
static bool rmbd_t_unparking;

/* Whether the port under @id is up (or cannot be asked). */
bool rmbd_t_port_active(struct rdma_cm_id *id)
{
	enum ib_port_state state;

	if (!id->device ||
	    ib_get_cached_port_state(id->device, id->port_num, &state))
		return true;
	return state == IB_PORT_ACTIVE;
}

/* Destroy the ids rdma_cm did not, and @p; not listed any more. */
static void rmbd_t_parked_free(struct rmbd_t_parked *p)
{
	struct rdma_cm_id *id;
	unsigned int i;

	for (i = 0; i < p->nr_ids; i++) {
		spin_lock(&p->lock);
		id = p->ids[i];
		p->ids[i] = NULL;
		spin_unlock(&p->lock);
		if (id)
			rdma_destroy_id(id);
	}
	pr_debug("session %llx: connection ids destroyed\n", p->sess_id);
	kfree(p);
}

static void rmbd_t_parked_work(struct work_struct *work)
{
	struct rmbd_t_parked *p = container_of(to_delayed_work(work),
					       struct rmbd_t_parked, work);
	struct rdma_cm_id *id = NULL;
	unsigned int i;
	bool active;

	/* Under the lock: rdma_cm destroys no id meanwhile. */
	spin_lock(&p->lock);
	for (i = 0; i < p->nr_ids && !id; i++)
		id = p->ids[i];
	active = !id || rmbd_t_port_active(id);
	spin_unlock(&p->lock);

	mutex_lock(&rmbd_t_parked_mutex);
	/* Unloading: rmbd_t_unpark_all() has @p and frees it. */
	if (rmbd_t_unparking) {
		mutex_unlock(&rmbd_t_parked_mutex);
		return;
	}
	if (!active) {
		queue_delayed_work(rmbd_t_park_wq, &p->work, HZ);
		mutex_unlock(&rmbd_t_parked_mutex);
		return;
	}
	list_del(&p->entry);
	mutex_unlock(&rmbd_t_parked_mutex);
	rmbd_t_parked_free(p);
}

/* An event on a parked id: only the RDMA device's removal matters. */
int rmbd_t_parked_event(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rmbd_t_parked *p = id->context;
	unsigned int i;
	int ret = 0;

	if (ev->event != RDMA_CM_EVENT_DEVICE_REMOVAL)
		return 0;
	spin_lock(&p->lock);
	for (i = 0; i < p->nr_ids; i++) {
		if (p->ids[i] == id) {
			p->ids[i] = NULL;
			ret = 1;
		}
	}
	spin_unlock(&p->lock);
	/* Non-zero: rdma_cm destroys @id; the work no longer has it. */
	return ret;
}

/*
 * Hand @q's id to @p, unless rdma_cm said DEVICE_REMOVAL on it already:
 * it says so only once, and then waits for the id to be destroyed, which
 * happens here at once.
 */
static void rmbd_t_park_one(struct rmbd_t_parked *p, struct rmbd_t_queue *q)
{
	struct rdma_cm_id *id = q->cm_id;
	bool removed;

	rdma_lock_handler(id);
	removed = q->removed;
	if (!removed) {
		id->context = p;
		/* Against the handler of an id parked before this one */
		spin_lock(&p->lock);
		p->ids[p->nr_ids++] = id;
		spin_unlock(&p->lock);
	}
	rdma_unlock_handler(id);
	if (removed)
		rdma_destroy_id(id);
}

/**
 * rmbd_t_park_ids() - keep a released session's ids until the port is up
 * @sess: the session, whose queue pairs are destroyed
 *
 * From the session's release, before it frees what the ids' contexts
 * point to: each id's context becomes the parked object, with no event
 * handler running meanwhile.  Returns false when there was no memory for
 * it: the caller then destroys the ids.
 */
bool rmbd_t_park_ids(struct rmbd_t_session *sess)
{
	struct rdma_cm_id *admin = sess->admin.cm_id;
	struct rmbd_t_parked *p;
	unsigned int i, n = 1;

	for (i = 0; i < RMBD_MAX_IO_QUEUES_WIRE; i++)
		n += !!sess->ioq[i];
	p = kzalloc(struct_size(p, ids, n), GFP_KERNEL);
	if (!p)
		return false;
	p->kind = RMBD_T_CTX_PARKED;
	p->sess_id = sess->id;
	spin_lock_init(&p->lock);
	INIT_DELAYED_WORK(&p->work, rmbd_t_parked_work);
	pr_info("session %llx: port %u of %s is down: its disconnect waits for the port\n",
		sess->id, admin->port_num, dev_name(&admin->device->dev));
	/*
	 * Destroyed in this order: the I/O queues', the admin queue's.
	 * Before it is listed: unparking destroys the ids of what is listed.
	 */
	for (i = 0; i < RMBD_MAX_IO_QUEUES_WIRE; i++)
		if (sess->ioq[i])
			rmbd_t_park_one(p, sess->ioq[i]);
	rmbd_t_park_one(p, &sess->admin);
	if (!p->nr_ids) {
		kfree(p);
		return true;
	}
	mutex_lock(&rmbd_t_parked_mutex);
	if (rmbd_t_unparking) {
		/* Not past module unload's flush of rmbd_t_wq; all the same: */
		mutex_unlock(&rmbd_t_parked_mutex);
		rmbd_t_parked_free(p);
		return true;
	}
	list_add_tail(&p->entry, &rmbd_t_parked_list);
	queue_delayed_work(rmbd_t_park_wq, &p->work, HZ);
	mutex_unlock(&rmbd_t_parked_mutex);
	return true;
}

int rmbd_t_park_init(void)
{
	rmbd_t_park_wq = alloc_workqueue("rmbd_target_park", 0, 0);
	return rmbd_t_park_wq ? 0 : -ENOMEM;
}

/*
 * Module unload, once no session is left to park ids: destroy every
 * parked id now, port down or not.
 */
void rmbd_t_unpark_all(void)
{
	struct rmbd_t_parked *p, *tmp;
	LIST_HEAD(parked);

	mutex_lock(&rmbd_t_parked_mutex);
	rmbd_t_unparking = true;
	list_splice_init(&rmbd_t_parked_list, &parked);
	mutex_unlock(&rmbd_t_parked_mutex);
	list_for_each_entry_safe(p, tmp, &parked, entry) {
		/* Its work, seeing rmbd_t_unparking, leaves @p alone. */
		cancel_delayed_work_sync(&p->work);
		list_del(&p->entry);
		rmbd_t_parked_free(p);
	}
	destroy_workqueue(rmbd_t_park_wq);
}
