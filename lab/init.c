/* kcross-lab-init: the /init of a kcross lab guest (issue 8).
 *
 * Runs as PID 1 in an initramfs under QEMU: mounts /proc, /sys and devtmpfs
 * on /dev, makes /tmp (mode 1777, in the initramfs's writable root: the
 * guest's tests call tmpfile()), points stdin at /dev/null and stdout/stderr
 * at /dev/console, waits until the kernel's own boot work has ended (below),
 * runs the commands of /lab/plan in order, and powers the machine off.
 * Nothing else: no shell, no network, no files but the plan.
 *
 * The wait (settle()): a kernel can still be busy with its boot when it starts
 * /init.  From 6.12 on, the crypto self-tests of some algorithms (rsa, dh)
 * run in `cryptomgr_test` kernel threads that registration no longer waits
 * for: under QEMU they compute for about a second of virtual time after /init
 * starts (two threads on Debian's 7.2), and every command of the plan would
 * share the CPU with them, its figures depending on where in that second it
 * ran.  /init reads /proc/loadavg (its fourth field: the runnable tasks, /init
 * included) and sleeps LAB_SETTLE_POLL_NS while any other task is runnable,
 * for at most LAB_SETTLE_MAX seconds; the start marker says how long it
 * waited.  A kernel whose boot work has ended (6.1's self-tests run before
 * /init) finds it quiet at the first read.  Periodic work (a timer tick, a
 * kworker, RCU) sleeps between its runs and is not waited for.
 *
 * The plan: one command per line, tokens separated by spaces or tabs (no
 * quoting).  Leading NAME=VALUE tokens are added to the command's environment
 * (as `env` does), except `timeout=SECONDS`, the command's time limit (default
 * LAB_DEFAULT_TIMEOUT).  Empty lines and lines starting with '#' are skipped.
 *
 * The boot's token: /lab/token, LAB_TOKEN_LEN lowercase hex digits the host
 * drew at random for this boot, read and unlinked before any command runs
 * (a guest program cannot read it from the file system).  Every marker line
 * carries it, and the host's parser takes only marker lines with its own
 * boot's token, so a program that prints a marker line (by mistake or on
 * purpose) cannot end its command or forge a result: the line is its output.
 * The token's length is fixed, so the console's length, and the instructions
 * that print it, are the same whatever its digits (counting boots stay
 * identical boot to boot).
 *
 * The console, for the host's parser (python/kcross/lab/initramfs.py); every
 * marker line is written with one write() and starts with a newline-free
 * "@@kcross-lab TOKEN ":
 *
 *   @@kcross-lab TOKEN start commands=N uptime=S.SS waited=S.SS
 *   @@kcross-lab TOKEN begin 1 <the plan line's tokens, joined by one space>
 *   ... the command's stdout and stderr, straight to the console ...
 *   @@kcross-lab TOKEN end 1 status=<exit code | SIGNAME | timeout>
 *   @@kcross-lab TOKEN note <the first line of /lab/note>   (unless empty)
 *   @@kcross-lab TOKEN done
 *
 * or, when /init itself cannot go on (a mount, the console, the token, the
 * plan):
 *
 *   @@kcross-lab TOKEN error <what failed>: <why>
 *
 * (before the token is read, "@@kcross-lab error ...": the host quotes it as
 * one of the console's last lines, never as a marker).
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
#define LAB_TOKEN "/lab/token"
#define LAB_NOTE "/lab/note"
#define LAB_MAX_NOTE 3072       /* bytes of /lab/note printed */
#define LAB_TOKEN_LEN 16        /* hex digits: initramfs.py's TOKEN_LENGTH */
#define LAB_STR_(x) #x
#define LAB_STR(x) LAB_STR_(x)
#define LAB_DEFAULT_TIMEOUT 600 /* seconds */
#define LAB_MAX_PLAN (256 * 1024)
#define LAB_MAX_ARGS 128        /* tokens per line, environment included */
#define LAB_SETTLE_MAX 60.0     /* seconds /init waits for the kernel's boot work */
#define LAB_SETTLE_POLL_NS 10000000L    /* between two reads of /proc/loadavg */

static const char *const base_env[] = {
	"PATH=/bin:/sbin:/usr/bin:/lab", "HOME=/", "TERM=linux",
};
#define BASE_ENV_N (sizeof(base_env) / sizeof(base_env[0]))

/* "@@kcross-lab TOKEN ", the token once read_token() has read it. */
static char prefix[13 + LAB_TOKEN_LEN + 2] = "@@kcross-lab ";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One marker line, one write() (kernel messages may land between writes). */
static void say(const char *fmt, ...)
{
	char line[4096];
	int at = (int)strlen(prefix);
	va_list ap;
	int n;

	memcpy(line, prefix, (size_t)at);
	va_start(ap, fmt);
	n = vsnprintf(line + at, sizeof(line) - (size_t)at - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(line) - at - 1)
		n = (int)sizeof(line) - at - 1;
	n += at;
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

static const unsigned char hex_digit[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
};

/* The boot's token (the header): read, checked, unlinked, put in the prefix. */
static void read_token(void)
{
	char buf[LAB_TOKEN_LEN + 2];
	ssize_t n;
	int fd = open(LAB_TOKEN, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail("open " LAB_TOKEN);
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail("read " LAB_TOKEN);
	close(fd);
	if (unlink(LAB_TOKEN) < 0)
		fail("unlink " LAB_TOKEN);
	/* Checked in as many instructions whatever the digits (a table, no early
	 * exit): the token must not move a counting boot's timer ticks. */
	unsigned int bad = n != LAB_TOKEN_LEN;
	for (int i = 0; i < LAB_TOKEN_LEN; i++)
		bad |= !hex_digit[(unsigned char)buf[i]];
	errno = EINVAL;
	if (bad)
		fail(LAB_TOKEN " (not " LAB_STR(LAB_TOKEN_LEN) " hex digits)");
	memcpy(prefix + 13, buf, LAB_TOKEN_LEN);
	prefix[13 + LAB_TOKEN_LEN] = ' ';
	prefix[13 + LAB_TOKEN_LEN + 1] = '\0';
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

/* /lab/note: a job's description for a host that reads the console later
 * (a LAVA job's, kcross.lava.job.Note), printed as a `note` marker after the
 * last command.  Every boot's initramfs has it, LAB_MAX_NOTE bytes (the text's
 * first line, padded), and /init reads and unlinks it with the token, before
 * any command, in as many instructions whatever it says: the commands run in
 * the same file system and memory as a boot with another note or none (a file
 * more or less in the initramfs moves the count of a path lookup such as
 * open-close's, by where the kernel's objects land), and its printing after
 * them costs them nothing. */
static char note[LAB_MAX_NOTE + 1];

static void read_note(void)
{
	ssize_t n;
	int fd = open(LAB_NOTE, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		fail("open " LAB_NOTE);
	do
		n = read(fd, note, LAB_MAX_NOTE);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		fail("read " LAB_NOTE);
	close(fd);
	if (unlink(LAB_NOTE) < 0)
		fail("unlink " LAB_NOTE);
	note[n] = '\0';
}

static void say_note(void)
{
	note[strcspn(note, "\n")] = '\0';
	if (note[0])
		say("note %s", note);
}

/* The tasks other than /init that are runnable now (on any CPU): /proc/loadavg's
 * fourth field is "runnable/total", /init among the runnable; -1 if unreadable. */
static int others_runnable(void)
{
	char buf[128];
	int runnable;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%*s %*s %*s %d/", &runnable) != 1 || runnable < 1)
		return -1;
	return runnable - 1;
}

/* Wait until no other task is runnable (the kernel's boot work has ended: see
 * the top of this file), at most LAB_SETTLE_MAX seconds.  Returns the tasks
 * still runnable (0: quiet; -1: /proc/loadavg unreadable) and sets *waited. */
static int settle(double *waited)
{
	const struct timespec pause = { 0, LAB_SETTLE_POLL_NS };
	struct timespec t0;
	int others;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((others = others_runnable()) > 0 && since(&t0) < LAB_SETTLE_MAX)
		nanosleep(&pause, NULL);
	*waited = since(&t0);
	return others;
}

static void say_start(int commands, double waited, int others)
{
	char buf[64] = "", busy[32] = "";
	int fd = open("/proc/uptime", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, " \n")] = '\0';
		close(fd);
	}
	if (others > 0)     /* still busy after LAB_SETTLE_MAX: said, and run anyway */
		snprintf(busy, sizeof(busy), " runnable=%d", others);
	say("start commands=%d uptime=%s waited=%.2f%s", commands, buf[0] ? buf : "unknown",
	    waited, others < 0 ? " runnable=unknown" : busy);
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

	read_token();
	read_note();

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
	double waited;
	int others = settle(&waited);
	say_start(commands, waited, others);

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
	say_note();
	say("done");
	power_off();
}
