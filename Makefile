# SPDX-License-Identifier: GPL-2.0
#
# rmbd: remote memory block device.
#
#   make            kernel modules, librmbd and the rmbd CLI
#   make check      every test: host tests, the VM suite, then the failure
#                   tests again on the debug kernel (as root; see
#                   Documentation/testing.rst)
#   make check-debug  the whole VM suite on a debug kernel (KASAN, lockdep,
#                   kmemleak, fault injection) built from linux-source-6.1
#                   into the cache when it is not there (as root)
#   make check-mutants  break the modules on purpose (selftests/mutants)
#                   and show that the VM tests catch each break (as root;
#                   MUTANTS="a b" for some)
#   make demo       remote memory as a file system and as swap, in a VM on
#                   soft-RoCE
#   make bench      fio on rmbd, nvme-rdma, nbd and brd in a VM (as root;
#                   see Documentation/performance.rst)
#   make deps       install the Debian packages the build and tests need
#
# KDIR selects the kernel to build against; the newest installed headers
# are the default.

KVER ?= $(shell ls -1 /lib/modules 2>/dev/null | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build

ifneq ($(KERNELRELEASE),)
include $(src)/Kbuild
else

.PHONY: all modules lib tools deps check check-host check-vm check-debug demo \
	bench clean checkpatch sparse check-mutants

all: modules lib tools

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

lib:
	$(MAKE) -C lib

tools: lib
	$(MAKE) -C tools

deps:
	./selftests/deps.sh

check: deps
	$(MAKE) all
	RMBD_WITH_DEBUG=$${RMBD_WITH_DEBUG:-1} ./selftests/run.sh

check-debug: deps
	$(MAKE) all
	RMBD_SKIP_HOST=1 RMBD_SKIP_CHECKPATCH=1 RMBD_SKIP_VM=1 RMBD_WITH_DEBUG=1 \
		RMBD_DEBUG_TESTS=$${RMBD_DEBUG_TESTS:-all} \
		./selftests/run.sh $(T)

check-mutants: deps
	$(MAKE) all
	./selftests/mutants/run.sh $(MUTANTS)

demo: deps
	$(MAKE) all
	./selftests/demo.sh

bench: deps
	$(MAKE) all
	./tools/bench/run.sh

checkpatch:
	./selftests/checkpatch.sh

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 W=1 modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C lib clean
	$(MAKE) -C tools clean

endif
