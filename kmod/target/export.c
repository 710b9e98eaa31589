// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd target: exports and their memory.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/log2.h>
#include <linux/sched.h>
#include "target.h"

#define RMBD_CHUNK_ORDER	(RMBD_CHUNK_SHIFT - PAGE_SHIFT)

/*
 * Keep this much RAM free when sizing an export, so that an export
 * cannot push the target itself into reclaim trouble.
 */
#define RMBD_RESERVE_PAGES	((64UL << 20) >> PAGE_SHIFT)

/*
 * Pages that exports being created are still to allocate: promised under
 * rmbd_t_mutex, so that two creates cannot both count the same free
 * memory, and given back as each slab gets its memory.
 */
static atomic64_t rmbd_promised_pages = ATOMIC64_INIT(0);

struct rmbd_export *rmbd_export_find(const char *name)
{
	struct rmbd_export *exp;

	lockdep_assert_held(&rmbd_t_mutex);
	list_for_each_entry(exp, &rmbd_t_exports, entry)
		if (!strcmp(exp->name, name))
			return exp;
	return NULL;
}

u64 rmbd_exports_mem(void)
{
	struct rmbd_export *exp;
	u64 mem = 0;

	lockdep_assert_held(&rmbd_t_mutex);
	list_for_each_entry(exp, &rmbd_t_exports, entry)
		mem += exp->mem;
	return mem;
}

static void rmbd_slab_free(struct rmbd_slab *slab)
{
	unsigned int i;

	if (!slab->chunks)
		return;
	for (i = 0; i < slab->nr_chunks; i++)
		if (slab->chunks[i])
			__free_pages(slab->chunks[i], RMBD_CHUNK_ORDER);
	kvfree(slab->chunks);
	slab->chunks = NULL;
}

static noinline int rmbd_slab_alloc(struct rmbd_slab *slab, u64 len)
{
	unsigned int i;

	slab->len = len;
	slab->nr_chunks = DIV_ROUND_UP_ULL(len, RMBD_CHUNK_SIZE);
	slab->chunks = kvcalloc(slab->nr_chunks, sizeof(*slab->chunks),
				GFP_KERNEL);
	if (!slab->chunks)
		return -ENOMEM;
	for (i = 0; i < slab->nr_chunks; i++) {
		/* Zeroed: no previous owner's data can leak to a client. */
		slab->chunks[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO |
					      __GFP_NORETRY | __GFP_NOWARN,
					      RMBD_CHUNK_ORDER);
		if (!slab->chunks[i]) {
			rmbd_slab_free(slab);
			return -ENOMEM;
		}
		cond_resched();
	}
	return 0;
}
ALLOW_ERROR_INJECTION(rmbd_slab_alloc, ERRNO);

/* Free a list of struct rmbd_export_host. */
void rmbd_export_hosts_free(struct list_head *hosts)
{
	struct rmbd_export_host *h, *tmp;

	list_for_each_entry_safe(h, tmp, hosts, entry) {
		list_del(&h->entry);
		kfree_sensitive(h);
	}
}

static void rmbd_export_free(struct rmbd_export *exp)
{
	u32 i;

	rmbd_export_hosts_free(&exp->hosts);
	if (exp->slabs)
		for (i = 0; i < exp->nr_slabs; i++)
			rmbd_slab_free(&exp->slabs[i]);
	kvfree(exp->slabs);
	kfree(exp);
}

static void rmbd_export_release(struct kref *ref)
{
	rmbd_export_free(container_of(ref, struct rmbd_export, ref));
}

void rmbd_export_put(struct rmbd_export *exp)
{
	kref_put(&exp->ref, rmbd_export_release);
}

/**
 * rmbd_export_create() - allocate an export and add it to the list
 * @name: a valid name
 * @size: bytes, a non-zero multiple of 4096
 * @slab_size: bytes, a power of two in the allowed range
 * @out: the new export, valid while rmbd_t_mutex is held
 * @why: a message for the administrator on failure
 *
 * Called with rmbd_t_mutex held.  The mutex is dropped while the memory
 * is allocated, which can take a while, and the export becomes visible
 * only once all of it is there.
 */
int rmbd_export_create(const char *name, u64 size, u64 slab_size,
		       struct rmbd_export **out, const char **why)
{
	struct rmbd_export *exp;
	u64 pages, needed, got;
	u32 i;
	int ret;

	lockdep_assert_held(&rmbd_t_mutex);
	if (rmbd_export_find(name)) {
		*why = "an export with this name exists";
		return -EEXIST;
	}
	pages = DIV_ROUND_UP_ULL(size, RMBD_CHUNK_SIZE) <<
		RMBD_CHUNK_ORDER;
	needed = pages + atomic64_read(&rmbd_promised_pages) +
		 RMBD_RESERVE_PAGES;
	if (needed > si_mem_available()) {
		*why = "not enough free memory for an export of this size";
		return -ENOMEM;
	}

	exp = kzalloc(sizeof(*exp), GFP_KERNEL);
	if (!exp) {
		*why = "could not allocate the export";
		return -ENOMEM;
	}
	kref_init(&exp->ref);
	do {
		exp->id = get_random_u64();
	} while (!exp->id);
	INIT_LIST_HEAD(&exp->sessions);
	INIT_LIST_HEAD(&exp->hosts);
	atomic_set(&exp->nr_mapped, 0);
	strscpy(exp->name, name, sizeof(exp->name));
	exp->size = size;
	exp->slab_size = slab_size;
	exp->nr_slabs = DIV_ROUND_UP_ULL(size, slab_size);
	exp->slabs = kvcalloc(exp->nr_slabs, sizeof(*exp->slabs), GFP_KERNEL);
	if (!exp->slabs) {
		kfree(exp);
		*why = "could not allocate the export's slab table";
		return -ENOMEM;
	}

	atomic64_add(pages, &rmbd_promised_pages);
	mutex_unlock(&rmbd_t_mutex);
	for (i = 0, ret = 0; i < exp->nr_slabs && !ret; i++) {
		ret = rmbd_slab_alloc(&exp->slabs[i],
				      rmbd_slab_len(size, slab_size, i));
		if (!ret) {
			got = (u64)exp->slabs[i].nr_chunks << RMBD_CHUNK_ORDER;
			exp->mem += got << PAGE_SHIFT;
			/* Counted by si_mem_available() from now on. */
			atomic64_sub(got, &rmbd_promised_pages);
			pages -= got;
		}
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
	}
	atomic64_sub(pages, &rmbd_promised_pages);
	mutex_lock(&rmbd_t_mutex);

	if (ret) {
		*why = ret == -EINTR ? "interrupted" :
		       "could not allocate the export's memory";
		goto out_free;
	}
	/* Someone may have taken the name meanwhile. */
	if (rmbd_export_find(name)) {
		*why = "an export with this name exists";
		ret = -EEXIST;
		goto out_free;
	}
	list_add_tail(&exp->entry, &rmbd_t_exports);
	*out = exp;
	return 0;

out_free:
	rmbd_export_free(exp);
	return ret;
}

/**
 * rmbd_export_delete() - remove an export
 * @exp: the export
 * @force: tear its sessions down if it has any
 *
 * Called with rmbd_t_mutex held; drops it while sessions are torn down
 * and takes it again.  The memory is freed once the last session let go.
 */
int rmbd_export_delete(struct rmbd_export *exp, bool force)
{
	struct rmbd_t_session *sess;

	lockdep_assert_held(&rmbd_t_mutex);
	if (exp->nr_sessions && !force)
		return -EBUSY;
	list_del_init(&exp->entry);
	exp->deleted = true;
	list_for_each_entry(sess, &exp->sessions, export_entry)
		rmbd_t_session_schedule_release(sess);
	mutex_unlock(&rmbd_t_mutex);
	flush_workqueue(rmbd_t_wq);
	mutex_lock(&rmbd_t_mutex);
	rmbd_export_put(exp);
	return 0;
}

/**
 * rmbd_export_host_find() - the entry of @host on @exp's allowed hosts
 * @exp: the export
 * @host: a host identity
 *
 * Called with rmbd_t_mutex held.  Return: the entry, or NULL.
 */
struct rmbd_export_host *rmbd_export_host_find(struct rmbd_export *exp,
					       const char *host)
{
	struct rmbd_export_host *h;

	lockdep_assert_held(&rmbd_t_mutex);
	list_for_each_entry(h, &exp->hosts, entry)
		if (!strcmp(h->name, host))
			return h;
	return NULL;
}

/**
 * rmbd_export_allows() - may @host open @exp
 * @exp: the export
 * @host: the identity a client gave, "" for none
 *
 * Called with rmbd_t_mutex held.
 */
bool rmbd_export_allows(struct rmbd_export *exp, const char *host)
{
	return exp->any_host || (host[0] && rmbd_export_host_find(exp, host));
}

/**
 * rmbd_export_host_add() - allow the host of @h to open @exp
 * @exp: the export
 * @h: an entry, allocated by the caller: the export owns it on success
 * @why: a message for the administrator on failure
 *
 * Called with rmbd_t_mutex held.
 */
int rmbd_export_host_add(struct rmbd_export *exp, struct rmbd_export_host *h,
			 const char **why)
{
	lockdep_assert_held(&rmbd_t_mutex);
	if (h->secret_len && exp->any_host) {
		*why = "a secret means nothing on an export any host may open";
		return -EINVAL;
	}
	if (rmbd_export_host_find(exp, h->name)) {
		*why = "the export allows this host already";
		return -EEXIST;
	}
	if (exp->nr_hosts >= RMBD_MAX_EXPORT_HOSTS) {
		*why = "the export allows as many hosts as it may (16)";
		return -ENOSPC;
	}
	list_add_tail(&h->entry, &exp->hosts);
	exp->nr_hosts++;
	return 0;
}

/**
 * rmbd_export_host_del() - no longer allow @host to open @exp
 * @exp: the export
 * @host: a host identity
 * @why: a message for the administrator on failure
 *
 * The host's sessions on the export end: their memory regions are gone
 * when this returns.  Called with rmbd_t_mutex held, which it drops while
 * they are torn down; @exp stays valid, but may have been deleted.
 */
int rmbd_export_host_del(struct rmbd_export *exp, const char *host,
			 const char **why)
{
	struct rmbd_export_host *h = rmbd_export_host_find(exp, host);
	struct rmbd_t_session *sess;
	bool ended = false;

	if (!h) {
		*why = "the export does not name this host";
		return -ENOENT;
	}

	list_del(&h->entry);
	exp->nr_hosts--;
	if (!exp->any_host) {
		list_for_each_entry(sess, &exp->sessions, export_entry) {
			if (!strcmp(sess->host, h->name)) {
				rmbd_t_session_schedule_release(sess);
				ended = true;
			}
		}
	}
	kfree_sensitive(h);
	if (!ended)
		return 0;
	/* The host has lost access once its memory regions are gone. */
	kref_get(&exp->ref);
	mutex_unlock(&rmbd_t_mutex);
	flush_workqueue(rmbd_t_wq);
	mutex_lock(&rmbd_t_mutex);
	rmbd_export_put(exp);
	return 0;
}
