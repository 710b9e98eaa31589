// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd target: module setup and rdma_cm listeners.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/inet.h>
#include <rdma/ib_addr.h>
#include <net/net_namespace.h>
#include "target.h"

DEFINE_MUTEX(rmbd_t_mutex);
DEFINE_MUTEX(rmbd_t_sess_mutex);
LIST_HEAD(rmbd_t_exports);
LIST_HEAD(rmbd_t_sessions);
LIST_HEAD(rmbd_t_listeners);
struct workqueue_struct *rmbd_t_wq;

/* Seconds of admin-queue silence after which a session is released. */
unsigned int rmbd_t_session_timeout = 30;

static int rmbd_t_set_session_timeout(const char *val,
				      const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, 3600);
}

static const struct kernel_param_ops rmbd_t_session_timeout_ops = {
	.set	= rmbd_t_set_session_timeout,
	.get	= param_get_uint,
};

module_param_cb(session_timeout, &rmbd_t_session_timeout_ops,
		&rmbd_t_session_timeout, 0644);
MODULE_PARM_DESC(session_timeout,
		 "seconds without a message from a client before its session is released (0: never; default 30; applies to new sessions)");

/* Sessions the target holds at once, opened or not. */
unsigned int rmbd_t_max_sessions = 256;

static int rmbd_t_set_max_sessions(const char *val,
				   const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, RMBD_MAX_SESSIONS);
}

static const struct kernel_param_ops rmbd_t_max_sessions_ops = {
	.set	= rmbd_t_set_max_sessions,
	.get	= param_get_uint,
};

module_param_cb(max_sessions, &rmbd_t_max_sessions_ops,
		&rmbd_t_max_sessions, 0644);
MODULE_PARM_DESC(max_sessions,
		 "client sessions the target holds at once, counting those that have not opened an export yet; more are refused (1-65536, default 256)");

#define RMBD_LISTEN_BACKLOG	128

static struct rmbd_listener *rmbd_listener_find(struct sockaddr_storage *ss)
{
	struct rmbd_listener *l;

	lockdep_assert_held(&rmbd_t_mutex);
	list_for_each_entry(l, &rmbd_t_listeners, entry)
		if (rdma_addr_size_kss(&l->addr) == rdma_addr_size_kss(ss) &&
		    !memcmp(&l->addr, ss, rdma_addr_size_kss(ss)))
			return l;
	return NULL;
}

static int rmbd_parse_addr(const char *addr, u16 port,
			   struct sockaddr_storage *ss)
{
	char port_str[8];

	if (!rmbd_valid_addr(addr))
		return -EINVAL;
	snprintf(port_str, sizeof(port_str), "%u", port);
	return inet_pton_with_scope(&init_net, AF_UNSPEC, addr, port_str, ss);
}

static void rmbd_listener_free(struct kref *ref)
{
	kfree(container_of(ref, struct rmbd_listener, ref));
}

/* Drop a reference: the list's, or a session's when it is freed. */
void rmbd_listener_put(struct rmbd_listener *l)
{
	kref_put(&l->ref, rmbd_listener_free);
}

static void rmbd_listener_remove_work(struct work_struct *work)
{
	struct rmbd_listener *l =
		container_of(work, struct rmbd_listener, remove_work);
	bool mine = false;

	mutex_lock(&rmbd_t_mutex);
	if (!list_empty(&l->entry)) {
		list_del_init(&l->entry);
		mine = true;
	}
	mutex_unlock(&rmbd_t_mutex);
	if (mine) {
		pr_info("listener %pISpc: RDMA device removed, stopped\n",
			&l->addr);
		rdma_destroy_id(l->cm_id);
		rmbd_listener_put(l);
	}
}

int rmbd_t_listener_event(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rmbd_listener *l = cm_id->context;

	/* rdma_cm waits until the id is destroyed; do it from a work. */
	if (ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL)
		queue_work(rmbd_t_wq, &l->remove_work);
	return 0;
}

/**
 * rmbd_listener_add() - listen for clients on an address and port
 * @addr: IPv4 or IPv6 address as text
 * @port: rdma_cm port
 * @max_sessions: sessions it may hold at once, 1..RMBD_MAX_SESSIONS
 * @out: the new listener, valid while rmbd_t_mutex is held
 * @why: a message for the administrator on failure
 *
 * Called with rmbd_t_mutex held.
 */
int rmbd_listener_add(const char *addr, u16 port, unsigned int max_sessions,
		      struct rmbd_listener **out, const char **why)
{
	struct sockaddr_storage ss;
	struct rmbd_listener *l;
	struct rdma_cm_id *cm_id;
	int ret;

	lockdep_assert_held(&rmbd_t_mutex);
	if (rmbd_parse_addr(addr, port, &ss)) {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	if (rmbd_listener_find(&ss)) {
		*why = "already listening on this address and port";
		return -EEXIST;
	}
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	l->kind = RMBD_T_CTX_LISTENER;
	kref_init(&l->ref);
	l->max_sessions = max_sessions;
	atomic_set(&l->nr_sessions, 0);
	l->addr = ss;
	l->port = port;
	INIT_LIST_HEAD(&l->entry);
	INIT_WORK(&l->remove_work, rmbd_listener_remove_work);
	strscpy(l->addr_str, addr, sizeof(l->addr_str));

	cm_id = rdma_create_id(&init_net, rmbd_t_cm_handler, l, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(cm_id)) {
		ret = PTR_ERR(cm_id);
		goto out_free;
	}
	ret = rdma_bind_addr(cm_id, (struct sockaddr *)&ss);
	if (ret) {
		*why = "cannot bind: is the address on an RDMA device, and the port free?";
		goto out_destroy_id;
	}
	ret = rdma_listen(cm_id, RMBD_LISTEN_BACKLOG);
	if (ret) {
		*why = "cannot listen on this address and port";
		goto out_destroy_id;
	}
	l->cm_id = cm_id;
	list_add_tail(&l->entry, &rmbd_t_listeners);
	*out = l;
	pr_info("listening on %pISpc, for up to %u sessions\n", &ss,
		max_sessions);
	return 0;

out_destroy_id:
	rdma_destroy_id(cm_id);
out_free:
	kfree(l);
	return ret;
}

/**
 * rmbd_listener_del() - stop listening
 * @addr: address as given to rmbd_listener_add()
 * @port: port
 * @why: a message for the administrator on failure
 *
 * Called without rmbd_t_mutex: destroying a listening id waits for its
 * connect requests, whose handlers take that mutex.
 */
int rmbd_listener_del(const char *addr, u16 port, const char **why)
{
	struct sockaddr_storage ss;
	struct rmbd_listener *l;

	if (rmbd_parse_addr(addr, port, &ss)) {
		*why = "not an IPv4 or IPv6 address";
		return -EINVAL;
	}
	mutex_lock(&rmbd_t_mutex);
	l = rmbd_listener_find(&ss);
	if (l)
		list_del_init(&l->entry);
	mutex_unlock(&rmbd_t_mutex);
	if (!l) {
		*why = "no listener on this address and port";
		return -ENOENT;
	}
	rdma_destroy_id(l->cm_id);
	cancel_work_sync(&l->remove_work);
	rmbd_listener_put(l);
	return 0;
}

static void rmbd_listeners_destroy(void)
{
	struct rmbd_listener *l;

	for (;;) {
		mutex_lock(&rmbd_t_mutex);
		l = list_first_entry_or_null(&rmbd_t_listeners,
					     struct rmbd_listener, entry);
		if (l)
			list_del_init(&l->entry);
		mutex_unlock(&rmbd_t_mutex);
		if (!l)
			break;
		rdma_destroy_id(l->cm_id);
		cancel_work_sync(&l->remove_work);
		rmbd_listener_put(l);
	}
}

static void rmbd_exports_destroy(void)
{
	struct rmbd_export *exp;

	mutex_lock(&rmbd_t_mutex);
	while ((exp = list_first_entry_or_null(&rmbd_t_exports,
					       struct rmbd_export, entry)))
		rmbd_export_delete(exp, true);
	mutex_unlock(&rmbd_t_mutex);
}

static int __init rmbd_target_init(void)
{
	int ret;

	rmbd_t_wq = alloc_workqueue("rmbd_target", WQ_MEM_RECLAIM, 0);
	if (!rmbd_t_wq)
		return -ENOMEM;
	ret = rmbd_t_park_init();
	if (ret)
		goto out_destroy_wq;
	ret = rmbd_t_netlink_init();
	if (ret)
		goto out_unpark;
	return 0;

out_unpark:
	rmbd_t_unpark_all();
out_destroy_wq:
	destroy_workqueue(rmbd_t_wq);
	return ret;
}

static void __exit rmbd_target_exit(void)
{
	/* No new commands, then no new sessions, then nothing left. */
	rmbd_t_netlink_exit();
	rmbd_listeners_destroy();
	rmbd_t_release_all();
	rmbd_t_unpark_all();
	rmbd_exports_destroy();
	flush_workqueue(rmbd_t_wq);
	destroy_workqueue(rmbd_t_wq);
}

module_init(rmbd_target_init);
module_exit(rmbd_target_exit);

MODULE_DESCRIPTION("rmbd target: export RAM to RDMA block device clients");
MODULE_LICENSE("GPL");
MODULE_VERSION(RMBD_VERSION);
MODULE_SOFTDEP("pre: hmac sha256");
