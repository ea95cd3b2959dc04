// SPDX-License-Identifier: GPL-2.0
/*
 * binderfs-add CONTROL NAME...: make binder devices on a binderfs mount
 * through its binder-control (BINDER_CTL_ADD), as binder_test does for the
 * kernel's binder. The interop guest uses it to give the kernel's binder
 * the same device names as cask_binder's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/android/binderfs.h>

int main(int argc, char **argv)
{
	int fd, i, ret = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: binderfs-add CONTROL NAME...\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "binderfs-add: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (i = 2; i < argc; i++) {
		struct binderfs_device dev = { 0 };

		if (strlen(argv[i]) >= sizeof(dev.name)) {
			fprintf(stderr, "binderfs-add: %s: name too long\n", argv[i]);
			ret = 1;
			continue;
		}
		memcpy(dev.name, argv[i], strlen(argv[i]));
		if (ioctl(fd, BINDER_CTL_ADD, &dev)) {
			fprintf(stderr, "binderfs-add: %s: %s\n", argv[i], strerror(errno));
			ret = 1;
			continue;
		}
		printf("%s %u:%u\n", dev.name, dev.major, dev.minor);
	}
	close(fd);
	return ret;
}
