/* kcross-lab-init: the /init of a kcross lab guest (issue 8).
 *
 * Runs as PID 1 in an initramfs under QEMU: mounts /proc, /sys and devtmpfs
 * on /dev, makes /tmp (mode 1777, in the initramfs's writable root: the
 * guest's tests call tmpfile()), points stdin at /dev/null and stdout/stderr
 * at /dev/console, runs the commands of /lab/plan in order, and powers the
 * machine off.  Nothing else: no shell, no network, no files but the plan.
 *
 * The plan: one command per line, tokens separated by spaces or tabs (no
 * quoting).  Leading NAME=VALUE tokens are added to the command's environment
 * (as `env` does), except `timeout=SECONDS`, the command's time limit (default
 * LAB_DEFAULT_TIMEOUT).  Empty lines and lines starting with '#' are skipped.
 *
 * The console, for the host's parser (python/kcross/lab/initramfs.py); every
 * marker line is written with one write() and starts with a newline-free
 * "@@kcross-lab ":
 *
 *   @@kcross-lab start commands=N uptime=S.SS
 *   @@kcross-lab begin 1 <the plan line's tokens, joined by one space>
 *   ... the command's stdout and stderr, straight to the console ...
 *   @@kcross-lab end 1 status=<exit code | SIGNAME | timeout>
 *   @@kcross-lab done
 *
 * or, when /init itself cannot go on (a mount, the console, the plan):
 *
 *   @@kcross-lab error <what failed>: <why>
 *
 * then sync and reboot(RB_POWER_OFF) (QEMU with -no-reboot exits).  PID 1
 * never returns: its exit would panic the kernel.
 *
 * Each command runs in its own session; when it ends (or its time runs out)
 * its whole process group is killed, so nothing it started writes after its
 * end marker.  PID 1 also reaps every orphan reparented to it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LAB_PLAN "/lab/plan"
#define LAB_DEFAULT_TIMEOUT 600 /* seconds */
#define LAB_MAX_PLAN (256 * 1024)
#define LAB_MAX_ARGS 128        /* tokens per line, environment included */

static const char *const base_env[] = {
	"PATH=/bin:/sbin:/usr/bin:/lab", "HOME=/", "TERM=linux",
};
#define BASE_ENV_N (sizeof(base_env) / sizeof(base_env[0]))

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One marker line, one write() (kernel messages may land between writes). */
static void say(const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n;

	memcpy(line, "@@kcross-lab ", 13);
	va_start(ap, fmt);
	n = vsnprintf(line + 13, sizeof(line) - 14, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - 14)
		n = (int)sizeof(line) - 14;
	n += 13;
	line[n++] = '\n';
	for (char *p = line; n > 0;) {
		ssize_t w = write(STDOUT_FILENO, p, (size_t)n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		n -= (int)w;
	}
}

static _Noreturn void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	reboot(RB_AUTOBOOT);    /* -no-reboot turns this into an exit too */
	for (;;)
		pause();
}

static _Noreturn void fail(const char *what)
{
	say("error %s: %s", what, strerror(errno));
	power_off();
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		fail(path);
}

static void mount_fs(const char *type, const char *dir)
{
	make_dir(dir);
	if (mount(type, dir, type, MS_NOSUID | MS_NOEXEC, NULL) < 0 && errno != EBUSY)
		fail(dir);
}

/* An fd above 2, so that the dup2()s below cannot overwrite one another
 * (the kernel may have left 0, 1 and 2 closed). */
static int open_high(const char *path)
{
	int fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
	int high = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 3);

	if (high < 0)
		fail(path);
	close(fd);
	return high;
}

/* stdin from /dev/null, stdout and stderr to the console.  Until this has
 * worked there may be nowhere to print: fd 1 stays whatever the kernel gave. */
static void console(void)
{
	int con = open_high("/dev/console");
	int null = open_high("/dev/null");

	if (dup2(null, STDIN_FILENO) < 0 || dup2(con, STDOUT_FILENO) < 0 ||
	    dup2(con, STDERR_FILENO) < 0)
		fail("dup2 /dev/console");
	close(con);
	close(null);
}

static char *read_plan(size_t *len)
{
	static char buf[LAB_MAX_PLAN + 1];
	size_t n = 0;
	int fd = open(LAB_PLAN, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail("open " LAB_PLAN);
	for (;;) {
		ssize_t r = read(fd, buf + n, LAB_MAX_PLAN - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail("read " LAB_PLAN);
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == LAB_MAX_PLAN) {
			errno = EFBIG;
			fail("read " LAB_PLAN);
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Split one plan line in place; returns the token count, -1 if too many. */
static int split(char *line, char **tok)
{
	int n = 0;

	for (char *p = line; *p;) {
		while (*p == ' ' || *p == '\t')
			*p++ = '\0';
		if (!*p)
			break;
		if (n == LAB_MAX_ARGS)
			return -1;
		tok[n++] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	tok[n] = NULL;
	return n;
}

static int is_assignment(const char *tok)
{
	const char *eq = strchr(tok, '=');
	return eq && eq != tok && tok[0] != '/';
}

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Reap until `pid` has ended or `timeout` seconds have passed (SIGCHLD is
 * blocked, so none is lost between the waitpid and the sigtimedwait).
 * Returns 1 with *status set, or 0 on timeout. */
static int wait_for(pid_t pid, double timeout, int *status)
{
	struct timespec t0;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int st;
		pid_t got;

		while ((got = waitpid(-1, &st, WNOHANG)) > 0)
			if (got == pid) {
				*status = st;
				return 1;
			}                       /* else an orphan: reaped, forgotten */
		double left = timeout - since(&t0);
		if (left <= 0)
			return 0;
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };
		sigtimedwait(&chld, NULL, &ts);
	}
}

static void run(int number, char **tok, int ntok, const char *shown)
{
	char *env[BASE_ENV_N + LAB_MAX_ARGS + 1];
	size_t nenv = 0;
	double timeout = LAB_DEFAULT_TIMEOUT;
	int first = 0, status;

	for (size_t i = 0; i < BASE_ENV_N; i++)
		env[nenv++] = (char *)base_env[i];
	for (; first < ntok && is_assignment(tok[first]); first++) {
		if (strncmp(tok[first], "timeout=", 8) == 0) {
			char *end;
			timeout = strtod(tok[first] + 8, &end);
			if (*end || !(timeout > 0 && timeout < 1e9))
				timeout = LAB_DEFAULT_TIMEOUT;
		} else {
			env[nenv++] = tok[first];
		}
	}
	env[nenv] = NULL;

	say("begin %d %s", number, shown);
	if (first == ntok) {
		say("end %d status=127", number);   /* nothing to run: as a shell would say */
		return;
	}
	pid_t pid = fork();
	if (pid < 0)
		fail("fork");
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		execve(tok[first], tok + first, env);
		dprintf(STDERR_FILENO, "kcross-lab-init: %s: %s\n", tok[first], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	int ended = wait_for(pid, timeout, &status);
	kill(-pid, SIGKILL);                        /* the command's whole session */
	if (!ended) {
		wait_for(pid, 1e9, &status);
		say("end %d status=timeout", number);
	} else if (WIFSIGNALED(status)) {
		const char *abbrev = sigabbrev_np(WTERMSIG(status));
		if (abbrev)
			say("end %d status=SIG%s", number, abbrev);
		else
			say("end %d status=SIG%d", number, WTERMSIG(status));
	} else {
		say("end %d status=%d", number, WEXITSTATUS(status));
	}
}

static void say_uptime(int commands)
{
	char buf[64] = "";
	int fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, " \n")] = '\0';
		close(fd);
	}
	say("start commands=%d uptime=%s", commands, buf[0] ? buf : "unknown");
}

int main(void)
{
	static char *tok[LAB_MAX_ARGS + 1];
	char shown[4096];
	sigset_t chld;
	size_t len;

	/* Before the console works, a failure can only power off: fail() writes
	 * to whatever fd 1 the kernel opened (its /dev/console, if any). */
	mount_fs("devtmpfs", "/dev");
	console();
	mount_fs("proc", "/proc");
	mount_fs("sysfs", "/sys");
	make_dir("/tmp");
	if (chmod("/tmp", 01777) < 0)
		fail("chmod /tmp");
	if (chdir("/") < 0)
		fail("chdir /");

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);

	char *plan = read_plan(&len);
	int commands = 0;
	for (char *p = plan; p < plan + len; p += strcspn(p, "\n") + 1) {
		p += strspn(p, " \t");
		if (*p && *p != '\n' && *p != '#')
			commands++;
	}
	say_uptime(commands);

	int number = 0;
	for (char *line = plan; line < plan + len;) {
		char *nl = strchr(line, '\n');
		char *next = nl ? nl + 1 : plan + len;
		if (nl)
			*nl = '\0';
		line += strspn(line, " \t");
		if (*line && *line != '#') {
			int ntok = split(line, tok);
			if (ntok < 0) {
				errno = E2BIG;
				fail("plan line");
			}
			size_t at = 0;
			shown[0] = '\0';
			for (int i = 0; i < ntok && at < sizeof(shown) - 1; i++)
				at += (size_t)snprintf(shown + at, sizeof(shown) - at, "%s%s",
						       i ? " " : "", tok[i]);
			run(++number, tok, ntok, shown);
		}
		line = next;
	}
	say("done");
	power_off();
}
