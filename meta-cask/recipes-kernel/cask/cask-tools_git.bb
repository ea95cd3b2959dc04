# SPDX-License-Identifier: GPL-2.0
SUMMARY = "caskctl and logcat: cask's cell and log tools"
DESCRIPTION = "caskctl registers, lists and removes cells; logcat reads \
the /dev/log/* devices like Android's logcat of that era, and on the host \
one cell's logs or all of them."

require cask.inc

B = "${WORKDIR}/build"

# The tools' Makefiles add their warnings to the CFLAGS and LDFLAGS the
# build gives them.
do_compile() {
	oe_runmake -C ${S}/tools/caskctl OUTPUT=${B}/
	oe_runmake -C ${S}/tools/logcat OUTPUT=${B}/
}

do_install() {
	install -d ${D}${bindir}
	install -m 0755 ${B}/caskctl ${B}/logcat ${D}${bindir}/
}

