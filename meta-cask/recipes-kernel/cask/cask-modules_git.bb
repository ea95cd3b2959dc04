# SPDX-License-Identifier: GPL-2.0
SUMMARY = "cask: container-aware Android kernel drivers (binder, ashmem, logger, low-memory killer, power)"
DESCRIPTION = "Loadable modules that give each container its own Android \
binder, ashmem, /dev/log/*, low-memory killer and /sys/power wake locks, \
keyed to its namespaces and cgroup. The kernel needs linux-yocto's \
cask.cfg and, for every feature, the cask patches \
(linux-yocto_6.12.bbappend)."

require cask.inc

# module.bbclass runs the tree's outer Makefile as
#   make KERNEL_SRC=${STAGING_KERNEL_DIR} O=${STAGING_KERNEL_BUILDDIR}
#   make ... modules_install
# which is what tools/yocto-check.sh runs against the test kernel in CI.
inherit module

# The modules, in load order: drivers/Kbuild's list, written here by
# tools/module-list.sh (bitbake needs it before the source is fetched;
# make yocto-check fails when it is out of date).
CASK_MODULES = "cask_core cask_logger cask_binder cask_ashmem lowmemorykiller cask_power"
KERNEL_MODULE_AUTOLOAD += "${CASK_MODULES}"

# Parameters and softdeps: tools/bsp/etc/modprobe.d/cask.conf, installed
# as /etc/modprobe.d/cask.conf below. An image changes them with these
# variables, written to modprobe.d/<module>.conf, which modprobe reads
# after cask.conf (the last value of a parameter wins):
#   CASK_BINDER_DEVICES  the binder devices (default as in cask.conf)
#   CASK_LMK_LEVELS      host kill levels, e.g.
#                        "adj=0,100,200,900 minfree=1536,2048,4096,16384"
CASK_BINDER_DEVICES ?= "binder,hwbinder,vndbinder"
CASK_LMK_LEVELS ?= ""
KERNEL_MODULE_PROBECONF += "cask_binder lowmemorykiller"
module_conf_cask_binder = "options cask_binder devices=${CASK_BINDER_DEVICES}"
module_conf_lowmemorykiller = "${@'options lowmemorykiller ' + d.getVar('CASK_LMK_LEVELS') if d.getVar('CASK_LMK_LEVELS') else ''}"

# The boot-time files of tools/bsp: modprobe.d and the udev rules with the
# modules; the init script (for images without systemd or modutils'
# autoloading) and its list in ${PN}-init.
inherit update-rc.d
PACKAGES =+ "${PN}-init"
INITSCRIPT_PACKAGES = "${PN}-init"
INITSCRIPT_NAME:${PN}-init = "cask-modules"
INITSCRIPT_PARAMS:${PN}-init = "start 05 S ."

do_install:append() {
	install -d ${D}${sysconfdir}/modprobe.d ${D}${nonarch_base_libdir}/udev/rules.d \
		${D}${sysconfdir}/init.d ${D}${sysconfdir}/modules-load.d
	install -m 0644 ${S}/tools/bsp/etc/modprobe.d/cask.conf ${D}${sysconfdir}/modprobe.d/
	install -m 0644 ${S}/tools/bsp/etc/udev/rules.d/60-cask.rules \
		${D}${nonarch_base_libdir}/udev/rules.d/
	install -m 0755 ${S}/tools/bsp/etc/init.d/cask-modules ${D}${sysconfdir}/init.d/
	install -m 0644 ${S}/tools/bsp/etc/modules-load.d/cask.conf ${D}${sysconfdir}/modules-load.d/
}

FILES:${PN} += "${sysconfdir}/modprobe.d/cask.conf ${nonarch_base_libdir}/udev/rules.d/60-cask.rules"
CONFFILES:${PN} += "${sysconfdir}/modprobe.d/cask.conf"
FILES:${PN}-init = "${sysconfdir}/init.d/cask-modules ${sysconfdir}/modules-load.d/cask.conf"
CONFFILES:${PN}-init = "${sysconfdir}/modules-load.d/cask.conf"
RDEPENDS:${PN}-init = "${PN}"
