/* Strict parsers, sizes, durations, hints, argument splitting, the capped
 * reader of regular files. */
#include "t.h"
#include "harness/base/util.h"
#include "workloads/wl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void test_numbers(void)
{
	uint64_t u = 7;
	T_EQ_INT(util_parse_u64("0", &u), 0);
	T_EQ_INT(u, 0);
	T_EQ_INT(util_parse_u64("18446744073709551615", &u), 0);
	T_CHECK(u == UINT64_MAX);
	T_EQ_INT(util_parse_u64("18446744073709551616", &u), -ERANGE);
	T_EQ_INT(util_parse_u64("12x", &u), -EINVAL);
	T_EQ_INT(util_parse_u64(" 12", &u), -EINVAL);
	T_EQ_INT(util_parse_u64("-1", &u), -EINVAL);
	T_EQ_INT(util_parse_u64("", &u), -EINVAL);
	int64_t i;
	T_EQ_INT(util_parse_i64("-42", &i), 0);
	T_EQ_INT(i, -42);
	T_EQ_INT(util_parse_i64("9223372036854775808", &i), -ERANGE);
	double d;
	T_EQ_INT(util_parse_double("1.5", &d), 0);
	T_NEAR(d, 1.5, 0);
	T_EQ_INT(util_parse_double("1.5s", &d), -EINVAL);
	T_EQ_INT(util_parse_double("nan", &d), -ERANGE);
}

static void test_sizes(void)
{
	uint64_t v;
	T_EQ_INT(util_parse_size("256M", &v), 0);
	T_CHECK(v == 256ull << 20);
	T_EQ_INT(util_parse_size("2G", &v), 0);
	T_CHECK(v == 2ull << 30);
	T_EQ_INT(util_parse_size("1.5G", &v), 0);
	T_CHECK(v == 3ull << 29);
	T_EQ_INT(util_parse_size("64k", &v), 0);
	T_CHECK(v == 64 << 10);
	T_EQ_INT(util_parse_size("512MiB", &v), 0);
	T_CHECK(v == 512ull << 20);
	T_EQ_INT(util_parse_size("4096", &v), 0);
	T_CHECK(v == 4096);
	T_EQ_INT(util_parse_size("256MB", &v), 0);
	T_EQ_INT(util_parse_size("256Q", &v), -EINVAL);
	T_EQ_INT(util_parse_size("M", &v), -EINVAL);
	T_EQ_INT(util_parse_size("256 M", &v), -EINVAL);
	T_EQ_INT(util_parse_size("0.3", &v), -EINVAL); /* fractional bytes */
	char buf[32];
	util_format_size(256ull << 20, buf, sizeof(buf));
	T_EQ_STR(buf, "256M");
	util_format_size(3ull << 29, buf, sizeof(buf));
	T_EQ_STR(buf, "1536M");
	util_format_size(1000, buf, sizeof(buf));
	T_EQ_STR(buf, "1000");
}

static void test_durations(void)
{
	double s;
	T_EQ_INT(util_parse_duration("10", &s), 0);
	T_NEAR(s, 10, 0);
	T_EQ_INT(util_parse_duration("500ms", &s), 0);
	T_NEAR(s, 0.5, 1e-12);
	T_EQ_INT(util_parse_duration("2m", &s), 0);
	T_NEAR(s, 120, 0);
	T_EQ_INT(util_parse_duration("1h", &s), 0);
	T_NEAR(s, 3600, 0);
	T_EQ_INT(util_parse_duration("0.1s", &s), 0);
	T_NEAR(s, 0.1, 1e-12);
	T_EQ_INT(util_parse_duration("10 s", &s), -EINVAL);
	T_EQ_INT(util_parse_duration("10d", &s), -EINVAL);
}

static void test_hints(void)
{
	const char *keys[] = { "memory.max", "memory.high", "memory.swap.max", "type", "timeout" };
	T_EQ_STR(util_did_you_mean("memroy.max", keys, 5), "memory.max");
	T_EQ_STR(util_did_you_mean("tyep", keys, 5), "type");
	T_CHECK(util_did_you_mean("completely-different", keys, 5) == NULL);
	T_EQ_INT(util_levenshtein("kitten", "sitting"), 3);
}

static void test_split(void)
{
	char **argv;
	size_t n;
	T_EQ_INT(wl_split_args("sh -c \"echo 'a b'; exit 3\" x\\ y", &argv, &n), 0);
	T_EQ_INT(n, 4);
	T_EQ_STR(argv[0], "sh");
	T_EQ_STR(argv[2], "echo 'a b'; exit 3");
	T_EQ_STR(argv[3], "x y");
	T_CHECK(argv[4] == NULL);
	wl_argv_free(argv);
	T_EQ_INT(wl_split_args("echo 'unterminated", &argv, &n), -EINVAL);
	T_EQ_INT(wl_split_args("   ", &argv, &n), 0);
	T_EQ_INT(n, 0);
	wl_argv_free(argv);
}

static void test_meminfo(void)
{
	uint64_t v = 0;
	T_EQ_INT(util_meminfo_bytes("MemTotal", &v), 0);
	T_CHECK(v >= (64ull << 20));  /* bytes, not kB */
	T_EQ_INT(util_meminfo_bytes("MemTot", &v), -ENOENT);  /* whole keys only */
	T_EQ_INT(util_meminfo_bytes("NoSuchField", &v), -ENOENT);
}

static void test_strmap(void)
{
	struct util_strmap m = { 0 };
	char keys[2000][8];
	for (int i = 0; i < 2000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		T_EQ_INT(util_strmap_put(&m, keys[i], i, NULL), 0);
	}
	T_EQ_INT(m.n, 2000);
	int old = -1;
	char again[8] = "k1234";  /* another copy of a key: found by content */
	T_EQ_INT(util_strmap_put(&m, again, 7, &old), 1);
	T_EQ_INT(old, 1234);
	T_EQ_INT(util_strmap_put(&m, "k1999", 0, &old), 1);
	T_EQ_INT(old, 1999);
	T_EQ_INT(util_strmap_put(&m, "k2000", 0, NULL), 0);
	T_EQ_INT(m.n, 2001);
	util_strmap_free(&m);
	T_EQ_INT(util_strmap_put(&m, "", 5, NULL), 0);
	T_EQ_INT(util_strmap_put(&m, "", 6, &old), 1);
	T_EQ_INT(old, 5);
	util_strmap_free(&m);
}

static void test_diags_budget(void)
{
	struct diags d = { 0 };
	for (int i = 0; i < DIAGS_MAX; i++)
		diags_add(&d, "f", i + 1, "problem %d", i);
	T_CHECK(diags_full(&d));
	T_EQ_INT(d.dropped, 0);
	diags_add(&d, "f", 999, "dropped");
	diags_add(&d, "f", 1000, "dropped");
	T_EQ_INT(d.n, DIAGS_MAX);
	T_EQ_INT(diags_count(&d), DIAGS_MAX + 2);
	diags_free(&d);
	T_EQ_INT(diags_count(&d), 0);
	T_CHECK(!diags_full(&d));
}

/* The growable array: doubling from the first size, the contents kept,
 * and on overflow NULL with the array and its capacity untouched. */
static void test_grow(void)
{
	int *v = NULL;
	size_t cap = 0, n = 0;
	for (int i = 0; i < 100; i++) {
		T_CHECK(util_grow(v, cap, n + 1, 4) == 0);
		v[n++] = i;
	}
	T_CHECK(cap == 128);
	int ok = 1;
	for (int i = 0; i < 100; i++)
		ok &= v[i] == i;
	T_CHECK(ok);
	int *same = v;
	T_CHECK(util_grow(v, cap, 128, 4) == 0 && v == same && cap == 128);
	T_CHECK(util_grow(v, cap, SIZE_MAX / 2 + 2, 4) == -ENOMEM);
	T_CHECK(v == same && cap == 128 && v[99] == 99);
	T_CHECK(util_grow_array(v, &cap, 256, SIZE_MAX / 64, 4) == NULL && cap == 128);
	free(v);
	char *c = NULL;
	size_t ccap = 0;
	T_CHECK(util_grow(c, ccap, 1, 0) == 0 && c && ccap == 1);
	free(c);
}

/* A regular file up to a cap, refused past it even when its size says 0
 * (procfs); anything else refused without being read, or opened for
 * reading: a FIFO with no writer would block. */
static void test_read_regular(void)
{
	char *text = NULL;
	size_t len = 0;
	mode_t mode = 0;
	T_EQ_INT(util_read_regular("/proc/self/maps", 100, &text, &len, &mode), -EFBIG);
	T_CHECK(S_ISREG(mode));
	T_EQ_INT(util_read_regular("/proc/self/maps", 1u << 20, &text, &len, NULL), 0);
	T_CHECK(text && len > 100 && strlen(text) == len);
	free(text);
	text = NULL;
	T_EQ_INT(util_read_regular("/dev/zero", 1u << 20, &text, &len, &mode), -EINVAL);
	T_CHECK(S_ISCHR(mode) && strcmp(util_file_kind(mode), "a character device") == 0);
	T_EQ_INT(util_read_regular("/proc", 1u << 20, &text, &len, &mode), -EISDIR);
	T_EQ_INT(util_read_regular("/nonexistent/kab", 1u << 20, &text, &len, &mode), -ENOENT);
	T_CHECK(text == NULL);

	char dir[] = "/tmp/kab-test-regular.XXXXXX", path[256];
	T_CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	T_CHECK(mkfifo(path, 0600) == 0);
	alarm(20); /* a blocking open is a failure, not a hang */
	T_EQ_INT(util_read_regular(path, 1u << 20, &text, &len, &mode), -EINVAL);
	alarm(0);
	T_CHECK(S_ISFIFO(mode) && strcmp(util_file_kind(mode), "a FIFO") == 0);
	/* exactly the cap, then one byte more; through a symlink */
	snprintf(path, sizeof(path), "%s/f", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	T_CHECK(fd >= 0 && write(fd, "0123456789", 10) == 10);
	T_EQ_INT(util_read_regular(path, 10, &text, &len, NULL), 0);
	T_CHECK(len == 10 && text && strcmp(text, "0123456789") == 0);
	free(text);
	text = NULL;
	T_EQ_INT(util_read_regular(path, 9, &text, &len, NULL), -EFBIG);
	T_CHECK(text == NULL);
	char link[256];
	snprintf(link, sizeof(link), "%s/link", dir);
	T_CHECK(symlink(path, link) == 0);
	T_EQ_INT(util_read_regular(link, 10, &text, &len, NULL), 0); /* a symlink to a regular file is read */
	free(text);
	if (fd >= 0)
		close(fd);
	util_remove_tree(dir);
}

/* The descriptors a child of kab gets: 0, 1, 2 and nothing else, from a
 * fork (util_child_fds) and from posix_spawn (util_spawn_close_fds), with
 * a descriptor left open without O_CLOEXEC in the parent. */
static void fd_listing(int out_fd, char *buf, size_t len)
{
	lseek(out_fd, 0, SEEK_SET);
	ssize_t n = read(out_fd, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
}

static void test_child_fds(void)
{
	char secret[] = "/tmp/kab-unit-fds.XXXXXX", listing[] = "/tmp/kab-unit-fdls.XXXXXX";
	int fd = mkstemp(secret);
	int out = mkstemp(listing);
	T_CHECK(fd >= 0 && out >= 0);
	char *argv[] = { "/bin/ls", "/proc/self/fd", NULL };
	char buf[256];
	pid_t pid = fork();
	if (pid == 0) {
		util_child_fds();
		if (dup2(out, 1) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int status = 0;
	T_CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fd_listing(out, buf, sizeof(buf));
	T_EQ_STR(buf, "0\n1\n2\n3\n");
	T_CHECK(ftruncate(out, 0) == 0 && lseek(out, 0, SEEK_SET) == 0);

	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	T_EQ_INT(util_spawn_close_fds(&fa), 0);
	T_EQ_INT(posix_spawn(&pid, argv[0], &fa, NULL, argv, NULL), 0);
	posix_spawn_file_actions_destroy(&fa);
	T_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fd_listing(out, buf, sizeof(buf));
	T_EQ_STR(buf, "0\n1\n2\n3\n");
	/* the parent's own stay open, without O_CLOEXEC */
	T_CHECK(fcntl(fd, F_GETFD) == 0);
	close(fd);
	close(out);
	unlink(secret);
	unlink(listing);
}

int main(void)
{
	test_read_regular();
	test_meminfo();
	test_numbers();
	test_sizes();
	test_durations();
	test_hints();
	test_split();
	test_strmap();
	test_diags_budget();
	test_grow();
	test_child_fds();
	return t_done("util");
}
