// SPDX-License-Identifier: GPL-2.0
/*
 * rmbd client: a device's state, and nothing else changes it.
 *
 * rmbd_c_dev_change_state() is the one place that assigns dev->state; it
 * refuses a transition the table below does not allow, and it keeps what
 * the I/O path reads without a lock in step with the state: requests
 * park (RMBD_C_DEV_RECOVERING) exactly while the device is RECONNECTING,
 * and fail (RMBD_C_DEV_DEAD) once it is FAILED or DELETING.  The loss
 * timer runs while it is RECONNECTING.
 *
 * Legs report to the device (rmbd_c_dev_unreadable(), rmbd_c_dev_leg_down(),
 * rmbd_c_dev_leg_up(), rmbd_c_dev_leg_refused()), and so does the resync
 * when a leg is in sync again (rmbd_c_dev_revive()); the device decides.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "client.h"

/* The states each state may change to (Documentation/design.rst) */
static const u8 rmbd_c_allowed[] = {
	[RMBD_C_NEW]		= BIT(RMBD_C_ADDING) | BIT(RMBD_C_FAILED) |
				  BIT(RMBD_C_DELETING),
	[RMBD_C_ADDING]		= BIT(RMBD_C_LIVE) | BIT(RMBD_C_RECONNECTING) |
				  BIT(RMBD_C_FAILED) | BIT(RMBD_C_DELETING),
	[RMBD_C_LIVE]		= BIT(RMBD_C_RECONNECTING) | BIT(RMBD_C_FAILED) |
				  BIT(RMBD_C_DELETING),
	[RMBD_C_RECONNECTING]	= BIT(RMBD_C_LIVE) | BIT(RMBD_C_FAILED) |
				  BIT(RMBD_C_DELETING),
	[RMBD_C_FAILED]		= BIT(RMBD_C_DELETING),
	[RMBD_C_DELETING]	= 0,
};

static const u8 rmbd_c_uapi_states[] = {
	[RMBD_C_NEW]		= RMBD_DEV_STATE_CONNECTING,
	[RMBD_C_ADDING]		= RMBD_DEV_STATE_CONNECTING,
	[RMBD_C_LIVE]		= RMBD_DEV_STATE_LIVE,
	[RMBD_C_RECONNECTING]	= RMBD_DEV_STATE_RECONNECTING,
	[RMBD_C_FAILED]		= RMBD_DEV_STATE_FAILED,
	[RMBD_C_DELETING]	= RMBD_DEV_STATE_DELETING,
};

/* The state as user space knows it (enum rmbd_dev_state) */
u8 rmbd_c_dev_uapi_state(struct rmbd_c_dev *dev)
{
	return rmbd_c_uapi_states[READ_ONCE(dev->state)];
}

/* Whether a device in state @s serves I/O, or will once its disk is in */
static bool rmbd_c_usable(enum rmbd_c_state s)
{
	return s == RMBD_C_ADDING || s == RMBD_C_LIVE;
}

/*
 * Change @dev's state to @new, if the table allows it; with state_lock
 * held.  May be called from any context.  Returns whether it changed.
 */
static bool __rmbd_c_dev_change_state(struct rmbd_c_dev *dev,
				      enum rmbd_c_state new)
{
	enum rmbd_c_state old = dev->state;

	lockdep_assert_held(&dev->state_lock);
	if (!(rmbd_c_allowed[old] & BIT(new)))
		return false;
	WRITE_ONCE(dev->state, new);
	switch (new) {
	case RMBD_C_RECONNECTING:
		dev->loss_start = jiffies;
		dev->down_untold = true;
		set_bit(RMBD_C_DEV_RECOVERING, &dev->flags);
		mod_delayed_work(rmbd_c_wq, &dev->loss_work,
				 dev->loss_timeout * HZ);
		break;
	case RMBD_C_LIVE:
		if (old != RMBD_C_RECONNECTING)
			break;
		dev->down_untold = false;
		cancel_delayed_work(&dev->loss_work);
		/* Pairs with rmbd_c_queue_rq(): the session is up. */
		clear_bit_unlock(RMBD_C_DEV_RECOVERING, &dev->flags);
		rmbd_c_release_requests(dev);
		break;
	case RMBD_C_FAILED:
	case RMBD_C_DELETING:
		dev->down_untold = false;
		cancel_delayed_work(&dev->loss_work);
		set_bit(RMBD_C_DEV_DEAD, &dev->flags);
		clear_bit(RMBD_C_DEV_RECOVERING, &dev->flags);
		rmbd_c_release_requests(dev);
		break;
	default:
		break;
	}
	return true;
}

/**
 * rmbd_c_dev_change_state() - change a device's state
 * @dev: the device
 * @new: enum rmbd_c_state
 *
 * Returns whether the transition was allowed (and made).
 */
bool rmbd_c_dev_change_state(struct rmbd_c_dev *dev, enum rmbd_c_state new)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&dev->state_lock, flags);
	ret = __rmbd_c_dev_change_state(dev, new);
	spin_unlock_irqrestore(&dev->state_lock, flags);
	return ret;
}

/* A new device: its legs are yet to be set up. */
void rmbd_c_dev_state_init(struct rmbd_c_dev *dev)
{
	spin_lock_init(&dev->state_lock);
	dev->state = RMBD_C_NEW;
}

/**
 * rmbd_c_dev_settle() - the connect is done: a device whose disk was
 * added without a failure is live
 * @dev: the device
 *
 * Returns whether it is (a leg lost meanwhile left it waiting, or failed).
 */
bool rmbd_c_dev_settle(struct rmbd_c_dev *dev)
{
	bool live = false;

	spin_lock_irq(&dev->state_lock);
	if (dev->state == RMBD_C_ADDING)
		live = __rmbd_c_dev_change_state(dev, RMBD_C_LIVE);
	spin_unlock_irq(&dev->state_lock);
	return live;
}

/**
 * rmbd_c_dev_unreadable() - a leg went down, or a request found no leg
 * that holds its data
 * @dev: the device
 *
 * From any context (a completion, ->queue_rq()): a device that serves
 * I/O and has a loss timeout waits (RECONNECTING) when no leg that is up
 * holds every part of its data, so that requests failing now park rather
 * than fail.  The leg's error work, which always follows, tells.
 * Returns the state the device is in.
 */
enum rmbd_c_state rmbd_c_dev_unreadable(struct rmbd_c_dev *dev)
{
	enum rmbd_c_state s;
	unsigned long flags;

	spin_lock_irqsave(&dev->state_lock, flags);
	if (rmbd_c_usable(dev->state) && dev->loss_timeout &&
	    !rmbd_c_dev_readable(dev))
		__rmbd_c_dev_change_state(dev, RMBD_C_RECONNECTING);
	s = dev->state;
	spin_unlock_irqrestore(&dev->state_lock, flags);
	return s;
}

/*
 * A device that waits is live again once legs that are up hold all of its
 * data; under state_lock.
 */
static bool __rmbd_c_dev_revive(struct rmbd_c_dev *dev)
{
	lockdep_assert_held(&dev->state_lock);
	return dev->state == RMBD_C_RECONNECTING && rmbd_c_dev_readable(dev) &&
	       __rmbd_c_dev_change_state(dev, RMBD_C_LIVE);
}

static void rmbd_c_tell_live(struct rmbd_c_dev *dev)
{
	pr_info("rmbd%d: live again after %u ms\n", dev->index,
		jiffies_to_msecs(jiffies - dev->loss_start));
	/* Legs that stayed away meanwhile: a spare's turn. */
	rmbd_c_spare_kick(dev, 0);
	rmbd_c_notify(dev, RMBD_DEV_EVENT_LIVE);
}

/**
 * rmbd_c_dev_revive() - a leg is in sync again (the resync's end)
 * @dev: the device
 *
 * A device that waited for its data is live again if legs that are up
 * now hold all of it.  Process context.
 */
void rmbd_c_dev_revive(struct rmbd_c_dev *dev)
{
	bool live;

	spin_lock_irq(&dev->state_lock);
	live = __rmbd_c_dev_revive(dev);
	spin_unlock_irq(&dev->state_lock);
	if (live)
		rmbd_c_tell_live(dev);
}

/**
 * rmbd_c_dev_leg_down() - a leg's session broke: its error work
 * @dev: the device
 * @leg: the leg, its RMBD_C_LEG_UP already cleared
 *
 * The device goes on without the leg when the other legs hold its data,
 * waits for a leg (RECONNECTING) when it has a loss timeout, and fails
 * otherwise.  Process context, under the leg's recovery_lock.  Returns
 * whether the device may still use the leg: then it reconnects.
 */
bool rmbd_c_dev_leg_down(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg)
{
	bool degraded = false, down = false, failed = false, live;
	enum rmbd_c_state s;

	mutex_lock(&rmbd_c_mutex);
	spin_lock_irq(&dev->state_lock);
	s = dev->state;
	if (rmbd_c_usable(s) && rmbd_c_dev_readable(dev)) {
		degraded = !test_bit(RMBD_C_LEG_RECOVERING, &leg->flags) &&
			   !test_bit(RMBD_C_LEG_FAILED, &leg->flags);
	} else if (rmbd_c_usable(s) && dev->loss_timeout) {
		__rmbd_c_dev_change_state(dev, RMBD_C_RECONNECTING);
	} else if (s == RMBD_C_NEW || rmbd_c_usable(s)) {
		/* A device still connecting was never announced. */
		failed = s == RMBD_C_LIVE;
		__rmbd_c_dev_change_state(dev, RMBD_C_FAILED);
		pr_warn("rmbd%d: connection to %pISpc lost, I/O fails\n",
			dev->index, &leg->addr);
	}
	/*
	 * Waiting since a request or a completion found the data gone
	 * (rmbd_c_dev_unreadable()): told here.  A leg back meanwhile may
	 * have made it readable again: then it goes on without this one.
	 */
	if (dev->state == RMBD_C_RECONNECTING && dev->down_untold) {
		dev->down_untold = false;
		down = true;
	}
	live = __rmbd_c_dev_revive(dev);
	if (live)
		degraded = !test_bit(RMBD_C_LEG_RECOVERING, &leg->flags) &&
			   !test_bit(RMBD_C_LEG_FAILED, &leg->flags);
	s = dev->state;
	spin_unlock_irq(&dev->state_lock);
	/*
	 * A spare takes its place if it stays down that long: counted from
	 * now even when the device is not live, a spare steps in once it is.
	 */
	if (!leg->down_since && !test_bit(RMBD_C_DEV_DEAD, &dev->flags)) {
		leg->down_since = jiffies ?: 1;
		rmbd_c_spare_kick(dev, dev->loss_timeout * HZ);
	}
	mutex_unlock(&rmbd_c_mutex);

	if (degraded)
		pr_warn("rmbd%d: connection to %pISpc (leg %u) lost, reconnecting; I/O goes on over the other legs\n",
			dev->index, &leg->addr, leg->index);
	if (down)
		pr_warn("rmbd%d: connection to %pISpc lost, reconnecting; I/O waits up to %u s\n",
			dev->index, &leg->addr, dev->loss_timeout);
	if (down || failed)
		rmbd_c_notify(dev, RMBD_DEV_EVENT_LINK_DOWN);
	if (live)
		rmbd_c_tell_live(dev);
	if (degraded)
		rmbd_c_notify(dev, RMBD_DEV_EVENT_DEGRADED);
	if (failed)
		rmbd_c_notify(dev, RMBD_DEV_EVENT_FAILED);
	return rmbd_c_usable(s) || s == RMBD_C_RECONNECTING;
}

/**
 * rmbd_c_dev_leg_up() - a leg's session is back (its reconnect)
 * @dev: the device
 * @leg: the leg, RMBD_C_LEG_UP set
 * @gone: set when the device gave up meanwhile, or goes
 *
 * Process context, rmbd_c_mutex held.  Returns whether the device came
 * back with it: live again, having waited for its data.
 */
bool rmbd_c_dev_leg_up(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg,
		       bool *gone)
{
	enum rmbd_c_state s;
	bool live = false;

	lockdep_assert_held(&rmbd_c_mutex);
	spin_lock_irq(&dev->state_lock);
	s = dev->state;
	*gone = !rmbd_c_usable(s) && s != RMBD_C_RECONNECTING;
	if (!*gone)
		live = __rmbd_c_dev_revive(dev);
	spin_unlock_irq(&dev->state_lock);
	if (live)
		/* Legs that stayed away meanwhile: a spare's turn. */
		rmbd_c_spare_kick(dev, 0);
	return live;
}

/**
 * rmbd_c_dev_leg_refused() - a leg's target refused it for good
 * @dev: the device
 * @leg: the leg, RMBD_C_LEG_FAILED set
 *
 * The device fails when no leg that may come back holds its data; else
 * it goes on without the leg, and a spare, if any, takes its place.
 * Process context.
 */
void rmbd_c_dev_leg_refused(struct rmbd_c_dev *dev, struct rmbd_c_leg *leg)
{
	enum rmbd_c_state s = RMBD_C_FAILED;
	bool kill, failed = false;

	mutex_lock(&rmbd_c_mutex);
	kill = !rmbd_c_dev_recoverable(dev);
	if (kill) {
		spin_lock_irq(&dev->state_lock);
		s = dev->state;
		failed = __rmbd_c_dev_change_state(dev, RMBD_C_FAILED);
		spin_unlock_irq(&dev->state_lock);
	}
	mutex_unlock(&rmbd_c_mutex);
	if (kill) {
		pr_err("rmbd%d: no copy of its data is left; I/O fails\n",
		       dev->index);
		/* A device still connecting was never announced. */
		if (failed && s != RMBD_C_NEW && s != RMBD_C_ADDING)
			rmbd_c_notify(dev, RMBD_DEV_EVENT_FAILED);
		return;
	}
	rmbd_c_notify(dev, RMBD_DEV_EVENT_DEGRADED);
	rmbd_c_spare_kick(dev, 0);
}

/**
 * rmbd_c_dev_loss_expired() - the loss timer ran out
 * @dev: the device
 *
 * A device still waiting since the timer was armed fails.  Returns
 * whether it did.
 */
bool rmbd_c_dev_loss_expired(struct rmbd_c_dev *dev)
{
	bool failed = false;

	spin_lock_irq(&dev->state_lock);
	/* Not when it waits again, since later: its timer is armed anew. */
	if (dev->state == RMBD_C_RECONNECTING &&
	    !time_before(jiffies, dev->loss_start + dev->loss_timeout * HZ))
		failed = __rmbd_c_dev_change_state(dev, RMBD_C_FAILED);
	spin_unlock_irq(&dev->state_lock);
	return failed;
}
