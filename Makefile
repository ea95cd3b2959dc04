# SPDX-License-Identifier: GPL-2.0
#
# Outer wrapper around Kbuild (the modules are described in Kbuild files).
#
#   make [KERNEL_SRC=<tree or headers>] [O=<kernel build dir>] modules
#   make ... modules_install INSTALL_MOD_PATH=<root>
#
# are what Yocto's module.bbclass and DKMS run. The rest drives the QEMU
# test harness (see README and Documentation/dev/testing.rst):
#
#   make run     build everything on first use, boot the demo guest
#   make check   every KUnit suite and kselftest on the debug kernel
#                (patched and unpatched); RT=1 on the PREEMPT_RT debug
#                kernel, ARCH=arm64 on the arm64 one under
#                qemu-system-aarch64, KCSAN=1 on the data-race debug
#                kernel (all opt-in, not in .ci/run)
#   make shell   interactive guest
#   make bench   benchmarks on the non-debug kernel
#   make fuzz    cask-fuzz per driver and trinity on the debug kernel with
#                KCOV (FUZZ=drivers FUZZ_COUNT= FUZZ_TIME= FUZZ_SEED=
#                FUZZ_ARGS= TRINITY_TIME=; Documentation/dev/testing.rst)
#   make soak    load/use/unload cycles, cell churn and an hour of traffic
#                on the debug kernel, checked for what they leave behind
#                (SOAK_ARGS="-c CYCLES -C CELLS -t SECONDS" shortens it)
#   make coverage  the check suites on the debug kernel with gcov; line
#                and branch coverage per driver and file (lcov)
#   make kernel  only build (or find cached) the debug kernel
#   make stock   build against Debian's stock linux-headers-6.12 package
#   make dkms-check  build through DKMS for Debian's 6.12, 6.12-rt and 6.1
#   make stock-check the selftests on Debian's 6.12 image, DKMS-built modules
#   make lint    checkpatch --strict, sparse and shellcheck
#   make yocto-check  meta-cask's consistency and module.bbclass's build
#   make bsp_install DESTDIR=<root>  the boot-time files of tools/bsp/etc

KERNEL_SRC ?= /lib/modules/$(shell uname -r)/build
SRC := $(CURDIR)

all: modules

# tools/kernel-check.sh first: a kernel cask cannot be built for gets one
# clear sentence per missing export or interface (Documentation/admin/
# kernels.rst), not a compiler error. (A copy of the tree without tools/
# builds without it, as before.)
CHECK := $(SRC)/tools/kernel-check.sh
modules:
	@if [ -x $(CHECK) ]; then $(CHECK) $(KERNEL_SRC) $(or $(O),$(KERNEL_SRC)); fi
	$(MAKE) -C $(KERNEL_SRC) M=$(SRC) modules

modules_install:
	$(MAKE) -C $(KERNEL_SRC) M=$(SRC) modules_install

clean:
	@if [ -d $(KERNEL_SRC) ]; then $(MAKE) -C $(KERNEL_SRC) M=$(SRC) clean; fi
	for t in caskctl logcat demo bench fuzz; do \
		[ ! -d tools/$$t ] || $(MAKE) -C tools/$$t clean; done

run check shell bench fuzz coverage soak:
	@tools/cask-test $@

kernel:
	@tools/kernel/build-kernel.sh debug

stock:
	@tools/build-stock.sh

dkms-check:
	@tools/dkms-check.sh

stock-check:
	@tools/stock-check.sh

lint:
	@tools/lint.sh

yocto-check:
	@tools/yocto-check.sh

# The boot-time loading files (Documentation/bsp.rst): module list,
# modprobe.d, udev rules, init script.
bsp_install:
	mkdir -p $(DESTDIR)/etc
	cp -R tools/bsp/etc/. $(DESTDIR)/etc/

.PHONY: all modules modules_install clean run check shell bench fuzz coverage soak \
	kernel stock dkms-check stock-check lint yocto-check bsp_install
