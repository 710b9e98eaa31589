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
#   make install    the modules (for KVER), librmbd, its header and
#                   pkg-config file, the CLI, its man pages and bash
#                   completion, the udev rule, and the systemd units and
#                   swap generator; DESTDIR= and PREFIX= (default
#                   /usr/local) as usual
#   make uninstall  remove what make install put there
#   make dkms-install  the module sources to /usr/src/rmbd-VERSION, then
#                   dkms builds and installs them for every installed
#                   kernel (and again for each new one)
#   make dkms-uninstall  dkms remove, and the sources go
#
# The checks build with WERROR=1 (warnings are errors); a plain make
# does not.
#
# KVER selects the kernel to build against and install for: the running
# kernel when its headers are installed, else the newest installed
# headers.  KDIR overrides the kernel build directory.

VERSION := $(shell cat $(CURDIR)/VERSION)
KVER ?= $(shell r=$$(uname -r); \
	if [ -d /lib/modules/$$r/build ]; then echo $$r; \
	else ls -1 /lib/modules 2>/dev/null | sort -V | tail -n 1; fi)
KDIR ?= /lib/modules/$(KVER)/build
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL ?= install
# The module directory below /lib/modules/KVER, where depmod ranks
# modules above the kernel's own (as DKMS's updates/dkms).
MODDIR := updates/rmbd
UDEVDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/udev,/etc/udev)
DKMS_SRC := /usr/src/rmbd-$(VERSION)
# What a DKMS source tree holds: the module build and nothing else.
DKMS_FILES := Kbuild Makefile VERSION kmod uapi

# Kbuild reads ./Kbuild, not this file.

.PHONY: all modules lib tools deps check check-debug demo bench clean \
	checkpatch sparse check-mutants install uninstall modules_install \
	clean-modules dkms-install dkms-uninstall

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
	$(MAKE) all WERROR=1
	RMBD_WITH_DEBUG=$${RMBD_WITH_DEBUG:-1} ./selftests/run.sh

check-debug: deps
	$(MAKE) all WERROR=1
	RMBD_SKIP_HOST=1 RMBD_SKIP_CHECKPATCH=1 RMBD_SKIP_VM=1 RMBD_WITH_DEBUG=1 \
		RMBD_DEBUG_TESTS=$${RMBD_DEBUG_TESTS:-all} \
		./selftests/run.sh $(T)

check-mutants: deps
	$(MAKE) all WERROR=1
	./selftests/mutants/run.sh $(MUTANTS)

demo: deps
	$(MAKE) all
	./selftests/demo.sh

bench: deps
	$(MAKE) all
	$(MAKE) -C tools/bench/kverbs KDIR=$(KDIR)
	./tools/bench/run.sh

checkpatch:
	./selftests/checkpatch.sh

# depmod runs only for a real install: with DESTDIR the packager's tools
# (or the target system's depmod) do it.
modules_install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=$(MODDIR) DEPMOD=true modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))

install: modules_install lib tools
	$(MAKE) -C lib install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) \
		UDEVDIR=$(UDEVDIR)
	$(if $(DESTDIR),,-ldconfig)
	$(if $(DESTDIR),,-udevadm control --reload 2> /dev/null)

uninstall:
	rm -rf $(DESTDIR)/lib/modules/$(KVER)/$(MODDIR)
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C lib uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) \
		UDEVDIR=$(UDEVDIR)
	$(if $(DESTDIR),,-ldconfig)

# DKMS_ARGS passes options to dkms (the tests give it scratch trees).
dkms-install:
	rm -rf $(DESTDIR)$(DKMS_SRC)
	$(INSTALL) -d $(DESTDIR)$(DKMS_SRC)
	cp -R $(DKMS_FILES) $(DESTDIR)$(DKMS_SRC)/
	$(MAKE) -C $(DESTDIR)$(DKMS_SRC) clean-modules
	sed 's|@VERSION@|$(VERSION)|' dkms.conf.in > $(DESTDIR)$(DKMS_SRC)/dkms.conf
	$(if $(DESTDIR),,dkms install $(DKMS_ARGS) rmbd/$(VERSION))

dkms-uninstall:
	$(if $(DESTDIR),,-dkms remove $(DKMS_ARGS) rmbd/$(VERSION) --all)
	rm -rf $(DESTDIR)$(DKMS_SRC)

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 W=1 modules

clean-modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(if $(wildcard tools/bench/kverbs/Makefile),$(MAKE) -C tools/bench/kverbs KDIR=$(KDIR) clean)

clean: clean-modules
	$(MAKE) -C lib clean
	$(MAKE) -C tools clean
