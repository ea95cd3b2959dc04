// SPDX-License-Identifier: GPL-2.0
/*
 * tools/logcat against the real devices: formats, buffers, dump, clear,
 * follow, ring sizes, and the host's --cell / --all-cells, which a
 * container is refused. logcat is found as $LOGCAT or /usr/bin/logcat.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <regex.h>
#include <stdint.h>
#include <sys/uio.h>

#include "../kselftest_harness.h"
#include "cask_util.h"

static const char *logcat_path(void)
{
	return getenv("LOGCAT") ?: "/usr/bin/logcat";
}

static const char *logcat_missing(void)
{
	if (cask_missing())
		return cask_missing();
	if (access("/dev/log/main", F_OK))
		return "cask_logger is not loaded";
	if (access(logcat_path(), X_OK))
		return "no logcat (set LOGCAT)";
	return NULL;
}

/* Run "logcat ARGS", its stdout and stderr into @out; its exit status. */
static int logcat(char *out, size_t size, const char *args)
{
	char cmd[512];
	size_t n = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", logcat_path(), args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < size && fgets(out + n, size - n, p))
		n += strlen(out + n);
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int log_text(const char *buffer, int prio, const char *tag, const char *msg)
{
	char path[64];
	unsigned char p = prio;
	struct iovec iov[3] = {
		{ .iov_base = &p, .iov_len = 1 },
		{ .iov_base = (void *)tag, .iov_len = strlen(tag) + 1 },
		{ .iov_base = (void *)msg, .iov_len = strlen(msg) + 1 },
	};
	int fd, ret;

	snprintf(path, sizeof(path), "/dev/log/%s", buffer);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = writev(fd, iov, 3) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

static bool matches(const char *text, const char *pattern)
{
	regex_t re;
	bool found;

	if (regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB))
		return false;
	found = !regexec(&re, text, 0, NULL, 0);
	regfree(&re);
	return found;
}

FIXTURE(logcat) {
	char out[16384];
};

FIXTURE_SETUP(logcat)
{
	if (logcat_missing())
		SKIP(return, "%s", logcat_missing());
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-c -b all"));
}

FIXTURE_TEARDOWN(logcat)
{
}

TEST_F(logcat, brief)
{
	char want[128];

	ASSERT_EQ(0, log_text("main", 4, "tagA", "hello brief"));
	ASSERT_EQ(0, log_text("main", 6, "tagB", "an error"));
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b main -v brief"));
	snprintf(want, sizeof(want), "I/tagA    (%5d): hello brief\nE/tagB    (%5d): an error\n",
		 getpid(), getpid());
	EXPECT_STREQ(want, self->out);
}

TEST_F(logcat, threadtime)
{
	char pattern[256];

	ASSERT_EQ(0, log_text("main", 3, "tagT", "line one\nline two"));
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b main -v threadtime"));
	/* One output line per message line, each with the whole prefix. */
	snprintf(pattern, sizeof(pattern),
		 "^[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} +%d +%d D tagT    : line one\n"
		 "[0-9]{2}-[0-9]{2} [0-9:.]{12} +%d +%d D tagT    : line two\n$",
		 getpid(), gettid(), getpid(), gettid());
	EXPECT_TRUE(matches(self->out, pattern))
		TH_LOG("got: %s", self->out);
}

TEST_F(logcat, buffers_and_events)
{
	unsigned char ev[9] = { 42, 0, 0, 0, 0, 7, 0, 0, 0 };
	char want[64];
	int fd;

	ASSERT_EQ(0, log_text("system", 4, "sys", "to system"));
	ASSERT_EQ(0, log_text("radio", 4, "rad", "to radio"));
	fd = open("/dev/log/events", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ((ssize_t)sizeof(ev), write(fd, ev, sizeof(ev)));
	close(fd);

	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b main -v brief"));
	EXPECT_STREQ("", self->out);
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b radio -v brief"));
	EXPECT_TRUE(matches(self->out, "^I/rad +\\( *[0-9]+\\): to radio\n$"));
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b events -v brief"));
	snprintf(want, sizeof(want), "I/42      (%5d): 7\n", getpid());
	EXPECT_STREQ(want, self->out);
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b system,radio -v brief"));
	EXPECT_TRUE(matches(self->out, "to system") && matches(self->out, "to radio"));
	EXPECT_EQ(2, logcat(self->out, sizeof(self->out), "-d -b nosuchbuffer"));
}

TEST_F(logcat, clear_and_sizes)
{
	ASSERT_EQ(0, log_text("main", 4, "c", "to be cleared"));
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-g -b main"));
	EXPECT_TRUE(matches(self->out,
			    "^main: ring buffer is 262144 bytes \\([1-9][0-9]* bytes unread\\)"))
		TH_LOG("got: %s", self->out);
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-c -b main"));
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b main"));
	EXPECT_STREQ("", self->out);
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-g -b main"));
	EXPECT_TRUE(matches(self->out, "\\(0 bytes unread\\)"));
}

TEST_F(logcat, follow)
{
	char line[256] = "";
	struct pollfd pfd;
	int pipefd[2];
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		execl(logcat_path(), "logcat", "-b", "main", "-v", "brief", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	usleep(200000);
	ASSERT_EQ(0, log_text("main", 5, "follow", "while following"));
	pfd.fd = pipefd[0];
	pfd.events = POLLIN;
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	n = read(pipefd[0], line, sizeof(line) - 1);
	EXPECT_LT(0, n);
	line[n > 0 ? n : 0] = '\0';
	EXPECT_TRUE(matches(line, "^W/follow +\\( *[0-9]+\\): while following\n$"))
		TH_LOG("got: %s", line);
	/* Still following: killed, not exited. */
	EXPECT_EQ(0, kill(pid, SIGTERM));
	EXPECT_EQ(pid, waitpid(pid, NULL, 0));
	close(pipefd[0]);
}

TEST_F(logcat, decoders)
{
	EXPECT_EQ(0, logcat(self->out, sizeof(self->out), "--selftest-format"));
	EXPECT_TRUE(matches(self->out, "selftest-format: ok"));
}

static int c_log(void *arg)
{
	return log_text("main", 4, "incell", (const char *)arg) ? 1 : 0;
}

static int c_logcat_all(void *arg)
{
	char out[1024];

	(void)arg;
	/* A container's root is refused the host's view... */
	if (logcat(out, sizeof(out), "-d -b main --all-cells") != 1 ||
	    !matches(out, "needs CAP_SYSLOG on the host"))
		return 2;
	/* ...and its plain logcat shows its own entry and nothing else. */
	if (logcat(out, sizeof(out), "-d -b main -v brief") != 0)
		return 3;
	if (!matches(out, "^I/incell +\\( *[0-9]+\\): from the cell\n$"))
		return 4;
	return 0;
}

TEST_F(logcat, host_cells)
{
	struct container c;

	ASSERT_EQ(0, container_start(&c, "cask-logcat", 500000));
	ASSERT_EQ(0, cask_register("logcatcell", c.init));
	ASSERT_EQ(0, log_text("main", 4, "onhost", "from the host"));
	EXPECT_EQ(0, container_run(&c, c_log, "from the cell"));
	EXPECT_EQ(0, container_run(&c, c_logcat_all, NULL));

	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b main -v brief --all-cells"));
	EXPECT_TRUE(matches(self->out, "^\\[host\\] I/onhost +\\( *[0-9]+\\): from the host\n"
			    "\\[logcatcell\\] I/incell +\\( *[0-9]+\\): from the cell\n$"))
		TH_LOG("got: %s", self->out);
	ASSERT_EQ(0, logcat(self->out, sizeof(self->out), "-d -b main -v brief --cell logcatcell"));
	EXPECT_TRUE(matches(self->out,
			    "^\\[logcatcell\\] I/incell +\\( *[0-9]+\\): from the cell\n$"))
		TH_LOG("got: %s", self->out);
	EXPECT_EQ(1, logcat(self->out, sizeof(self->out), "-d -b main --cell nosuchcell"));
	EXPECT_TRUE(matches(self->out, "no cell named nosuchcell"));

	EXPECT_EQ(0, cask_unregister("logcatcell"));
	container_stop(&c);
}

TEST_HARNESS_MAIN
