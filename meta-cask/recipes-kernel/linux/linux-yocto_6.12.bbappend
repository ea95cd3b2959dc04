# SPDX-License-Identifier: GPL-2.0
#
# The kernel cask needs: the patches of the cask tree's patches/, in the
# order of patches/series; then patches/vanilla/, which a
# vanilla 6.12.y needs and Debian's source (the test base) already has:
# the exports of symbols cask's modules use; and the options
# the drivers need (cask.cfg, merged by kernel-yocto as a configuration
# fragment). Without patches/ the modules still build and load, with the
# fallbacks /sys/kernel/cask/features/ reports; without the exports
# cask_core, cask_binder and lowmemorykiller do not load
# (Documentation/yocto.rst).
# tools/yocto-check.sh checks this list against patches/series and
# cask.cfg against tools/kernel/base.config.
FILESEXTRAPATHS:prepend := "${THISDIR}/files:${CASK_TOPDIR}/patches:"

SRC_URI += "\
    file://0001-ipc-add-a-notifier-for-the-end-of-an-IPC-namespace.patch \
    file://0002-mm-oom_kill-export-the-body-of-process_mrelease-as-oom_mrelease_task.patch \
    file://vanilla/0001-treewide-export-the-symbols-the-cask-modules-need.patch \
    file://cask.cfg \
"
