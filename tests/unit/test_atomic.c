/* tools/atomic: whole-or-absent writes that follow no planted link, refuse
 * the command's inputs, leave no temporary behind when interrupted, and a
 * standard output whose write errors are not lost. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "fixture.h"
#include "sim/err.h"
#include "report/atomic.h"

static char dir[64];

static void setup(void)
{
	fx_tmpdir(dir, sizeof dir, "test_atomic");
}

static void teardown(void)
{
	fx_rmdir(dir);
}

static int put_hello(FILE *f, const void *arg)
{
	(void)arg;
	return fputs("hello\n", f) < 0 ? SIM_EIO : 0;
}

static void slurp(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t k;
	ck_assert_ptr_nonnull(f);
	k = fread(buf, 1, n - 1, f);
	buf[k] = '\0';
	fclose(f);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* Entries of dir, not counting . and .. */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* The temporary was PATH.tmp.PID, opened with fopen("w"): a link planted
 * under that name made the write go to the link's target. */
START_TEST(planted_link_is_not_followed)
{
	char path[128], victim[128], trap[160], buf[64], err[256];
	snprintf(path, sizeof path, "%s/out.json", dir);
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(trap, sizeof trap, "%s.tmp.%ld", path, (long)getpid());
	put_file(victim, "precious\n");
	ck_assert_int_eq(symlink(victim, trap), 0);
	ck_assert_msg(atomic_write_file(path, put_hello, NULL, err, sizeof err) == 0, "%s", err);
	slurp(victim, buf, sizeof buf);
	ck_assert_str_eq(buf, "precious\n");
	slurp(path, buf, sizeof buf);
	ck_assert_str_eq(buf, "hello\n");
	ck_assert_int_eq(entries(), 3); /* out.json, victim, the planted link */
}
END_TEST

/* A new file gets 0666 less the umask, as fopen("w") gives, not mkstemp's
 * 0600. */
START_TEST(mode_follows_the_umask)
{
	char path[128], err[256];
	struct stat st;
	mode_t old = umask(022);
	snprintf(path, sizeof path, "%s/m.json", dir);
	ck_assert_int_eq(atomic_write_file(path, put_hello, NULL, err, sizeof err), 0);
	umask(old);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
}
END_TEST

/* Inputs are known by device and inode: another name (a hard link, a
 * ./-prefixed path) is refused too, and the file is untouched. */
START_TEST(inputs_are_refused)
{
	char in[128], alias[128], other[128], buf[64], err[256];
	snprintf(in, sizeof in, "%s/in.yaml", dir);
	snprintf(alias, sizeof alias, "%s/./alias.yaml", dir);
	snprintf(other, sizeof other, "%s/other.json", dir);
	put_file(in, "name: x\n");
	ck_assert_int_eq(link(in, alias), 0);
	ck_assert_int_eq(atomic_protect_input(in), 0);
	ck_assert_int_eq(atomic_protect_input("/no/such/file"), 0);
	ck_assert_int_eq(atomic_write_file(in, put_hello, NULL, err, sizeof err), SIM_EEXIST);
	ck_assert_ptr_nonnull(strstr(err, "input of this command"));
	ck_assert_int_eq(atomic_write_file(alias, put_hello, NULL, err, sizeof err), SIM_EEXIST);
	ck_assert_int_eq(atomic_check_target(alias, err, sizeof err), SIM_EEXIST);
	slurp(in, buf, sizeof buf);
	ck_assert_str_eq(buf, "name: x\n");
	ck_assert_int_eq(atomic_write_file(other, put_hello, NULL, err, sizeof err), 0);
	ck_assert_int_eq(entries(), 3); /* no temporary left by the refusals */
}
END_TEST

START_TEST(protect_dir_covers_its_files)
{
	char sub[128], f[160], err[256];
	snprintf(sub, sizeof sub, "%s/profiles", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	snprintf(f, sizeof f, "%s/gpu.yaml", sub);
	put_file(f, "kind: gpu\n");
	ck_assert_int_eq(atomic_protect_dir(sub), 0);
	ck_assert_int_eq(atomic_check_target(f, err, sizeof err), SIM_EEXIST);
}
END_TEST

/* A writer that fails: path untouched, no temporary. */
static int fail_midway(FILE *f, const void *arg)
{
	(void)arg;
	fputs("half", f);
	return SIM_EIO;
}

START_TEST(failed_write_keeps_the_old_file)
{
	char path[128], buf[64], err[256];
	snprintf(path, sizeof path, "%s/keep.json", dir);
	put_file(path, "old\n");
	ck_assert_int_eq(atomic_write_file(path, fail_midway, NULL, err, sizeof err), SIM_EIO);
	slurp(path, buf, sizeof buf);
	ck_assert_str_eq(buf, "old\n");
	ck_assert_int_eq(entries(), 1);
}
END_TEST

/* In a forked child, as in a command (Check's runner has its own SIGTERM
 * handler): SIGTERM at its default, and the picture's temporary at path
 * made (its name into tmp, n bytes); exit 3 if not. */
static void child_as_command(const char *path, char *tmp, size_t n)
{
	char err[256];
	signal(SIGTERM, SIG_DFL);
	if (atomic_temp_create(path, tmp, n, err, sizeof err))
		_exit(3);
}

/* SIGTERM while a temporary exists: the handler removes it (and a
 * registered folder), then the process dies of the signal as before. */
START_TEST(interrupted_command_leaves_no_temporary)
{
	char path[128], tmp[160], sub[128];
	int status;
	pid_t pid;
	snprintf(path, sizeof path, "%s/pic.png", dir);
	snprintf(sub, sizeof sub, "%s/work", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		child_as_command(path, tmp, sizeof tmp);
		if (mkdir(sub, 0700) || atomic_temp_register(sub, true))
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
	ck_assert_int_eq(entries(), 0);
}
END_TEST

/* The signal mask around gnuplot's start: the caller's is as it was after
 * atomic_temp_spawnp (the handled signals were blocked only while the child
 * was being noted), and the child started with it, not with them blocked
 * (its SigBlk, read by the child itself, is the caller's). A SIGTERM that
 * comes as the child starts (the child sends it, first thing) finds the
 * child noted: it is killed and reaped, not left running, and the
 * temporary goes. Before the mask, the signal could come between the
 * start and the note (tests/e2e/plot-scale.sh: 7 to 21 runs of 50). */
START_TEST(spawn_masks_only_while_noting_the_child)
{
	char path[128], tmp[160], out[128], text[256];
	int status;
	pid_t pid;
	snprintf(path, sizeof path, "%s/pic.png", dir);
	snprintf(out, sizeof out, "%s/blk", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *argv[] = { (char *)"sh", (char *)"-c",
				 (char *)"grep SigBlk /proc/self/status > \"$0\"", out, NULL };
		sigset_t before, after;
		int st;
		pid_t c;
		child_as_command(path, tmp, sizeof tmp);
		sigprocmask(SIG_SETMASK, NULL, &before);
		if (atomic_temp_spawnp(&c, "sh", NULL, argv) || atomic_temp_wait(c, &st) ||
		    !WIFEXITED(st) || WEXITSTATUS(st))
			_exit(4);
		sigprocmask(SIG_SETMASK, NULL, &after);
		if (sigismember(&after, SIGTERM) != sigismember(&before, SIGTERM) ||
		    sigismember(&after, SIGINT) != sigismember(&before, SIGINT))
			_exit(5);
		atomic_temp_drop(tmp);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
	slurp(out, text, sizeof text);
	/* the child's mask: this test's process blocks none of the handled ones */
	ck_assert_msg(strstr(text, "SigBlk:\t0000000000000000") != NULL, "child's mask: %s", text);

	/* a signal the moment the child starts: it signals this process first
	 * thing, maybe before atomic_temp_spawnp has noted it */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *argv[] = { (char *)"sh", (char *)"-c",
				 (char *)"echo $$ > \"$0\"; kill -TERM $PPID; exec sleep 60", out, NULL };
		int st;
		pid_t c;
		child_as_command(path, tmp, sizeof tmp);
		if (atomic_temp_spawnp(&c, "sh", NULL, argv))
			_exit(4);
		atomic_temp_wait(c, &st);
		_exit(5); /* not reached: the SIGTERM ends it, after the child */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
	slurp(out, text, sizeof text);
	{
		pid_t child = (pid_t)atol(text);
		ck_assert_int_gt(child, 0);
		ck_assert_msg(kill(child, 0) < 0, "the child %ld outlived its parent", (long)child);
	}
	ck_assert_int_eq(entries(), 1); /* the child's pid file: the temporary went */
}
END_TEST

/* A legal name too long to take ".tmp.XXXXXX" (246-255 bytes) is written
 * through a shorter temporary in the same folder; a name past the limit is
 * refused before anything is created. */
START_TEST(long_names)
{
	char path[512], base[300], err[512];
	memset(base, 'n', 250);
	base[250] = '\0';
	snprintf(path, sizeof path, "%s/%s", dir, base);
	ck_assert_msg(atomic_write_file(path, put_hello, NULL, err, sizeof err) == 0, "%s", err);
	slurp(path, err, sizeof err);
	ck_assert_str_eq(err, "hello\n");
	ck_assert_int_eq(entries(), 1); /* no temporary left */
	memset(base, 'm', 256);
	base[256] = '\0';
	snprintf(path, sizeof path, "%s/%s", dir, base);
	ck_assert_int_ne(atomic_write_file(path, put_hello, NULL, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(err, "File name too long"));
	ck_assert_int_eq(entries(), 1);
}
END_TEST

START_TEST(commit_renames_and_forgets)
{
	char path[128], tmp[160], buf[64], err[256];
	snprintf(path, sizeof path, "%s/c.svg", dir);
	ck_assert_int_eq(atomic_temp_create(path, tmp, sizeof tmp, err, sizeof err), 0);
	ck_assert_ptr_nonnull(strstr(tmp, "/c.svg.tmp."));
	put_file(tmp, "<svg/>\n");
	ck_assert_msg(atomic_commit(tmp, path, err, sizeof err) == 0, "%s", err);
	slurp(path, buf, sizeof buf);
	ck_assert_str_eq(buf, "<svg/>\n");
	ck_assert_int_eq(entries(), 1);
}
END_TEST

/* stdout on /dev/full: the error is found at the end, exit status 2. */
START_TEST(stdout_errors_are_reported)
{
	int status, fd = open("/dev/full", O_WRONLY);
	pid_t pid;
	ck_assert_int_ge(fd, 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		freopen("/dev/null", "w", stderr);
		printf("a table\n");
		_exit(atomic_close_stdout("test", 0));
	}
	close(fd);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 2);
}
END_TEST

START_TEST(stdout_success_keeps_the_status)
{
	int status;
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		printf("fine\n");
		_exit(atomic_close_stdout("test", 1));
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("atomic");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, planted_link_is_not_followed);
	tcase_add_test(tc, mode_follows_the_umask);
	tcase_add_test(tc, inputs_are_refused);
	tcase_add_test(tc, protect_dir_covers_its_files);
	tcase_add_test(tc, failed_write_keeps_the_old_file);
	tcase_add_test(tc, interrupted_command_leaves_no_temporary);
	tcase_add_test(tc, spawn_masks_only_while_noting_the_child);
	tcase_add_test(tc, commit_renames_and_forgets);
	tcase_add_test(tc, long_names);
	tcase_add_test(tc, stdout_errors_are_reported);
	tcase_add_test(tc, stdout_success_keeps_the_status);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN_FORKED(suite)
