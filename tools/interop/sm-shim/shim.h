/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of bionic and Android's libcutils, liblog and libselinux to
 * build AOSP's C servicemanager (frameworks/native cmds/servicemanager,
 * Android 9) against glibc, statically, for the interop guest
 * (tools/interop/build-libgbinder.sh). There is no SELinux policy here:
 * every check allows; the uid checks of service_manager.c stay as they are.
 */
#ifndef CASK_SM_SHIM_H
#define CASK_SM_SHIM_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#ifndef __unused
#define __unused __attribute__((__unused__))
#endif

#define sm_log(lvl, ...) \
	do { \
		fprintf(stderr, "servicemanager: %s: ", lvl); \
		fprintf(stderr, __VA_ARGS__); \
	} while (0)

/* liblog */
#define ALOGE(...) sm_log("E", __VA_ARGS__)
#define ALOGW(...) sm_log("W", __VA_ARGS__)
#define ALOGI(...) sm_log("I", __VA_ARGS__)
#define ALOGD(...) do { } while (0)
#define ALOGV(...) do { } while (0)

/* android_filesystem_config.h and multiuser.h */
#define AID_APP 10000
#define AID_USER 100000
#define AID_ISOLATED_START 99000
#define AID_ISOLATED_END 99999

static inline uid_t multiuser_get_app_id(uid_t uid)
{
	return uid % AID_USER;
}

/* libselinux: allow everything */
/* libselinux's typedef; service_manager.c names it */
#define security_class_t unsigned short
struct selabel_handle {
	int unused;
};

union selinux_callback {
	int (*func_log)(int type, const char *fmt, ...);
	int (*func_audit)(void *data, security_class_t cls, char *buf, size_t len);
};

#define SELINUX_CB_LOG 0
#define SELINUX_CB_AUDIT 1

static inline int selinux_log_callback(int type __unused, const char *fmt __unused, ...)
{
	return 0;
}

static inline void selinux_set_callback(int type __unused, union selinux_callback cb __unused)
{
}

static inline struct selabel_handle *selinux_android_service_context_handle(void)
{
	static struct selabel_handle handle;

	return &handle;
}

static inline struct selabel_handle *selinux_android_vendor_service_context_handle(void)
{
	return selinux_android_service_context_handle();
}

static inline void selabel_close(struct selabel_handle *h __unused)
{
}

static inline int selinux_status_open(int fallback __unused)
{
	return 0;
}

static inline int selinux_status_updated(void)
{
	return 0;
}

static inline int getcon(char **con)
{
	*con = strdup("u:r:servicemanager:s0");
	return *con ? 0 : -1;
}

static inline int getpidcon(pid_t pid __unused, char **con)
{
	return getcon(con);
}

static inline int selabel_lookup(struct selabel_handle *h __unused, char **con,
				 const char *key __unused, int type __unused)
{
	return getcon(con);
}

static inline void freecon(char *con)
{
	free(con);
}

static inline int selinux_check_access(const char *scon __unused, const char *tcon __unused,
				       const char *cls __unused, const char *perm __unused,
				       void *data __unused)
{
	return 0;
}

#endif
