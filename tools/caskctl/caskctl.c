// SPDX-License-Identifier: GPL-2.0
/*
 * caskctl: list, show, register and unregister cask cells through
 * /sys/kernel/cask (see Documentation/ABI/testing/sysfs-kernel-cask).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *root = "/sys/kernel/cask";

static const char *const cell_files[] = {
	"id", "auto", "ipc_ns", "user_ns", "pid_ns", "cgroup", NULL
};

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: caskctl list\n"
		"       caskctl show NAME\n"
		"       caskctl register NAME PID\n"
		"       caskctl unregister NAME\n"
		"\n"
		"A cell is one container: its IPC, user and PID namespaces and its\n"
		"cgroup v2 directory. PID is read in your PID namespace. The sysfs\n"
		"directory is $CASK_SYSFS, default /sys/kernel/cask.\n");
}

static int no_core(void)
{
	if (access(root, F_OK) == 0)
		return 0;
	fprintf(stderr, "caskctl: %s does not exist: is cask_core loaded?\n", root);
	return 1;
}

static int read_value(const char *dir, const char *name, char *buf, size_t len)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int write_cmd(const char *file, const char *cmd)
{
	char path[4096];
	size_t len = strlen(cmd);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

static int cmd_list(void)
{
	char dir[4096], id[32], aut[8], ipc[32], cg[4096];
	struct dirent *de;
	DIR *d;

	if (no_core())
		return 1;
	snprintf(dir, sizeof(dir), "%s/cells", root);
	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "caskctl: cannot list %s: %s\n", dir, strerror(errno));
		return 1;
	}
	printf("%-32s %6s %4s %12s  %s\n", "NAME", "ID", "AUTO", "IPC_NS", "CGROUP");
	while ((de = readdir(d))) {
		char cell[4096 + 256];

		if (de->d_name[0] == '.')
			continue;
		snprintf(cell, sizeof(cell), "%s/%s", dir, de->d_name);
		if (read_value(cell, "id", id, sizeof(id)) ||
		    read_value(cell, "auto", aut, sizeof(aut)) ||
		    read_value(cell, "ipc_ns", ipc, sizeof(ipc)) ||
		    read_value(cell, "cgroup", cg, sizeof(cg))) {
			printf("%-32s (not readable: %s)\n", de->d_name, strerror(errno));
			continue;
		}
		printf("%-32s %6s %4s %12s  %s\n", de->d_name, id,
		       aut[0] == '1' ? "yes" : "no", ipc, cg);
	}
	closedir(d);
	return 0;
}

static int cmd_show(const char *name)
{
	char dir[4096], val[4096];
	int i, ret;

	if (no_core())
		return 1;
	snprintf(dir, sizeof(dir), "%s/cells/%s", root, name);
	if (access(dir, F_OK)) {
		fprintf(stderr, "caskctl: no cell named '%s'\n", name);
		return 1;
	}
	printf("name: %s\n", name);
	for (i = 0; cell_files[i]; i++) {
		ret = read_value(dir, cell_files[i], val, sizeof(val));
		if (ret) {
			fprintf(stderr, "caskctl: %s/%s: %s\n", dir, cell_files[i], strerror(-ret));
			return 1;
		}
		printf("%s: %s\n", cell_files[i], val);
	}
	return 0;
}

static int report(const char *what, const char *name, int err)
{
	const char *why;

	switch (err) {
	case 0:
		return 0;
	case -EEXIST:
		why = "a cell with that name, or for that process's IPC namespace, already exists";
		break;
	case -ESRCH:
		why = "no such process (the pid is read in your PID namespace)";
		break;
	case -EINVAL:
		why = "invalid: a name is 1-32 of [A-Za-z0-9_.-], a pid a positive number";
		break;
	case -EPERM:
	case -EACCES:
		why = "needs root with CAP_SYS_ADMIN in the initial user namespace";
		break;
	case -EBUSY:
		why = "the host cell cannot be unregistered";
		break;
	case -ENOENT:
		why = "no cell by that name";
		break;
	default:
		why = strerror(-err);
	}
	fprintf(stderr, "caskctl: %s %s: %s\n", what, name, why);
	return 1;
}

int main(int argc, char **argv)
{
	char cmd[128];

	if (getenv("CASK_SYSFS"))
		root = getenv("CASK_SYSFS");
	if (argc == 2 && !strcmp(argv[1], "list"))
		return cmd_list();
	if (argc == 3 && !strcmp(argv[1], "show"))
		return cmd_show(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "register")) {
		if (no_core())
			return 1;
		snprintf(cmd, sizeof(cmd), "%s %s\n", argv[2], argv[3]);
		return report("register", argv[2], write_cmd("register", cmd));
	}
	if (argc == 3 && !strcmp(argv[1], "unregister")) {
		if (no_core())
			return 1;
		snprintf(cmd, sizeof(cmd), "%s\n", argv[2]);
		return report("unregister", argv[2], write_cmd("unregister", cmd));
	}
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		print_usage(stdout);
		return 0;
	}
	print_usage(stderr);
	return 2;
}
