# SPDX-License-Identifier: GPL-2.0
SUMMARY = "cask's kselftests"
DESCRIPTION = "The kselftest_harness programs of selftests/cask, installed \
as kselftests are: ${libdir}/kselftest/cask/*_test with config and \
settings. Run as root with the cask modules loaded."

require cask.inc

# kselftest_harness.h, kselftest.h and lib.mk come from the kernel the
# image runs, as for the kernel's own selftests.
do_configure[depends] += "virtual/kernel:do_shared_workdir"
DEPENDS += "rsync-native"

B = "${WORKDIR}/build"

# lib.mk sets CC and KHDR_INCLUDES itself: give it the cross compiler and
# the sysroot's kernel headers. No 32-bit variant (CASK_NO_M32).
CASK_SELFTEST_MAKE = "-C ${B}/selftests/cask OUTPUT=${B}/out CC='${CC}' \
	KHDR_INCLUDES='-isystem ${STAGING_INCDIR}' CASK_UAPI=${S}/include/uapi CASK_NO_M32=1"

do_configure() {
	rm -rf ${B}/selftests
	mkdir -p ${B}/selftests/cask ${B}/out
	cp ${STAGING_KERNEL_DIR}/tools/testing/selftests/lib.mk \
		${STAGING_KERNEL_DIR}/tools/testing/selftests/kselftest.h \
		${STAGING_KERNEL_DIR}/tools/testing/selftests/kselftest_harness.h ${B}/selftests/
	cp -R ${S}/selftests/cask/. ${B}/selftests/cask/
}

do_compile() {
	oe_runmake ${CASK_SELFTEST_MAKE}
}

do_install() {
	oe_runmake ${CASK_SELFTEST_MAKE} install INSTALL_PATH=${D}${libdir}/kselftest/cask
}

FILES:${PN} = "${libdir}/kselftest/cask"
RDEPENDS:${PN} = "cask-modules"
