#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target VM's check, once multi-user.target is reached
# (rmbd-test-target-check.service): rmbd-target.service applied
# /etc/rmbd/target.conf: it is active, the exports are there with the
# hosts the file names, and "rmbd config check" finds everything as the
# file says.  Then "ready" for the host; the VM serves until the host
# asks it to stop (rmbd-test-stop.service).

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

check "rmbd-target.service is active" systemctl is-active rmbd-target.service
rmbd -j export show > "$out/exports.json" 2>&1
# shellcheck disable=SC2016 # jq's $e
for e in swap0 data0; do
	check "export $e, for client-a only" \
		jq -e --arg e "$e" '[.[] | select(.name == $e)] | length == 1 and .[0].hosts == ["client-a"]' \
		"$out/exports.json"
done
check "rmbd config check /etc/rmbd/target.conf exits 0" \
	rmbd config check /etc/rmbd/target.conf
check "rmbd config apply of target.conf again changes nothing" \
	rmbd config apply /etc/rmbd/target.conf
# What the file sets, not the sessions and mappings: the client boots
# meanwhile and connects.
cfg='map({name, size, slab_size, any_host, shared, read_only, hosts, auth_hosts})'
check "the exports are the same after that" \
	cmp <(jq -S "$cfg" "$out/exports.json") <(rmbd -j export show | jq -S "$cfg")
systemd_health
awk '/^MemAvailable:/ {print "MemAvailable: " int($2 / 1024) " MiB"}' /proc/meminfo
save_logs -boot
echo ready > "$out/ready"
