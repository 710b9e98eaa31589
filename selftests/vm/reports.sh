# SPDX-License-Identifier: GPL-2.0
#
# What counts as a kernel report in the VM tests, in one place: sourced by
# tests/lib.sh (the guest's kernel log) and vm-lib.sh (the host's copy of
# a guest's console).

# Kernel log lines that fail a test: any warning, bug, lockdep, KASAN or
# UBSAN report, hung task, RCU stall or stack dump.
RMBD_REPORT_RE='WARNING:|BUG:|Oops|general protection|KASAN|UBSAN|possible circular locking|inconsistent lock state|possible recursive locking|blocked for more than|kernel BUG|Call Trace|detected stall'

# Print the reports in the kernel log read on stdin; EXTRA_RE adds lines
# that count too (the host adds a panic and the guest's own errors).
# One kind of stack dump is not a report: one with no report line of its
# own that starts right after a fault injection's notice ("FAULT_INJECTION:
# forcing a failure"), such as the dump kmem_cache_create() prints on
# purpose when it fails.  That dump is the injected fault's expected
# consequence; any report line in it, or any other dump, still counts.
kmsg_reports() {	# [EXTRA_RE]
	awk -v re="$RMBD_REPORT_RE${1:+|$1}" '
	/FAULT_INJECTION: forcing a failure/ { notice = NR; next }
	/ CPU: [0-9]+ PID: [0-9]+ Comm: / { injected = notice && NR - notice <= 5 }
	$0 ~ re {
		if (injected && /Call Trace/)
			next
		print
		notice = 0
		injected = 0
	}
	/<\/TASK>/ { injected = 0 }
	'
}
