# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP helpers of the host test scripts (sourced): pass, fail and skip
# number their lines; tap_end prints the plan and returns the result.

n=0
failed=0

pass() {
	n=$((n + 1))
	echo "ok $n - $1"
}

fail() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}

skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

tap_end() {
	echo "1..$n"
	[ "$failed" = 0 ]
}
