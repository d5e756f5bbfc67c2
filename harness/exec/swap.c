/* zram devices and swap files: creation, mkswap, swapon/swapoff, removal. */
#include "harness/exec/swap.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int swap_zram_add(uint64_t size, const char *algorithm, int *ret_id, struct strbuf *err)
{
	char *idstr = NULL;
	int r = util_read_line("/sys/class/zram-control/hot_add", &idstr);
	if (r < 0) {
		sb_printf(err, "cannot add a zram device (/sys/class/zram-control/hot_add: %s); is the zram module loaded? (modprobe zram)",
			  strerror(-r));
		return r;
	}
	uint64_t id;
	r = util_parse_u64(idstr, &id);
	free(idstr);
	if (r < 0) {
		sb_puts(err, "unexpected reply from /sys/class/zram-control/hot_add");
		return r;
	}
	*ret_id = (int)id;
	char path[128], val[32];
	if (algorithm) {
		snprintf(path, sizeof(path), "/sys/block/zram%d/comp_algorithm", (int)id);
		if ((r = util_write_file(path, algorithm)) < 0) {
			char *have = NULL;
			util_read_line(path, &have);
			sb_printf(err, "cannot write %s to %s: %s%s%s%s", algorithm, path, strerror(-r),
				  have ? " (zram here has: " : "", have ? have : "", have ? ")" : "");
			free(have);
			return r;
		}
	}
	snprintf(path, sizeof(path), "/sys/block/zram%d/disksize", (int)id);
	snprintf(val, sizeof(val), "%llu", (unsigned long long)size);
	if ((r = util_write_file(path, val)) < 0) {
		sb_printf(err, "cannot write %s to %s: %s", val, path, strerror(-r));
		return r;
	}
	return 0;
}

int swap_zram_remove(int id)
{
	char path[64], val[16];
	snprintf(path, sizeof(path), "/dev/zram%d", id);
	swap_disable(path);
	snprintf(path, sizeof(path), "/sys/block/zram%d/reset", id);
	if (access(path, F_OK) != 0)
		return 0; /* already gone */
	/* reset can race with the swapoff's last reference; retry briefly */
	int r = 0;
	for (int i = 0; i < 50; i++) {
		r = util_write_file(path, "1");
		if (r != -EBUSY)
			break;
		struct timespec ts = { 0, 20 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	snprintf(val, sizeof(val), "%d", id);
	r = util_write_file("/sys/class/zram-control/hot_remove", val);
	if (r < 0 && r != -ENODEV)
		log_error("cannot remove zram%d (write %s to /sys/class/zram-control/hot_remove): %s", id, val, strerror(-r));
	return r == -ENODEV ? 0 : r;
}

/* A swap file of the job's naming: kab check said so, and so must its
 * directory now, when kab makes it as root and runs mkswap on its name. */
int swap_path_trusted(const char *path, struct strbuf *err)
{
	char dir[256];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = 0;
	struct strbuf why = { 0 };
	int r = state_path_trusted(dir, &why);
	if (r < 0)
		sb_printf(err, "swap file %s: %s", path, why.buf ? why.buf : strerror(-r));
	sb_free(&why);
	return r;
}

int swap_file_create(const char *path, uint64_t size, struct strbuf *err)
{
	/* a new file, never one there before nor a symbolic link's target */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		sb_printf(err, "cannot create swap file %s: %s", path, strerror(errno));
		return -errno;
	}
	int r = posix_fallocate(fd, 0, (off_t)size);
	if (r != 0) {
		close(fd);
		unlink(path);
		sb_printf(err, "cannot allocate %llu bytes for swap file %s: %s", (unsigned long long)size, path, strerror(r));
		return -r;
	}
	if (close(fd) < 0) {
		r = -errno;
		unlink(path);
		sb_printf(err, "cannot write swap file %s: %s", path, strerror(-r));
		return r;
	}
	return 0;
}

static int run_mkswap(const char *path, struct strbuf *err)
{
	char prog[256];
	if (!util_find_program("mkswap", prog, sizeof(prog))) {
		sb_puts(err, "mkswap is not installed (apt-get install util-linux)");
		return -ENOENT;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	char *argv[] = { prog, (char *)path, NULL }; /* stdout goes to /dev/null */
	posix_spawnattr_t attr;
	int r = util_spawn_close_fds(&fa);
	if (r == 0)
		r = util_spawnattr_init(&attr);
	if (r < 0) {
		posix_spawn_file_actions_destroy(&fa);
		sb_printf(err, "cannot run mkswap: %s", strerror(-r));
		return r;
	}
	pid_t pid;
	r = posix_spawn(&pid, prog, &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0) {
		sb_printf(err, "cannot run mkswap: %s", strerror(r));
		return -r;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		sb_printf(err, "mkswap %s failed (status %d)", path, status);
		return -EIO;
	}
	return 0;
}

int swap_enable(const char *path, int priority, struct strbuf *err)
{
	int r = run_mkswap(path, err);
	if (r < 0)
		return r;
	int flags = 0;
	if (priority >= 0)
		flags = SWAP_FLAG_PREFER | ((priority << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK);
	if (swapon(path, flags) < 0) {
		r = -errno;
		sb_printf(err, "swapon %s: %s", path, strerror(errno));
		return r;
	}
	return 0;
}

int swap_disable(const char *path)
{
	if (swapoff(path) < 0) {
		if (errno == EINVAL || errno == ENOENT)
			return 0;
		log_error("swapoff %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

bool swap_is_active(const char *path)
{
	char *buf;
	if (util_read_file("/proc/swaps", &buf, NULL) < 0)
		return false;
	bool found = false;
	size_t pl = strlen(path);
	for (char *line = buf; line && *line;) {
		if (strncmp(line, path, pl) == 0 && (line[pl] == ' ' || line[pl] == '\t'))
			found = true;
		char *nl = strchr(line, '\n');
		line = nl ? nl + 1 : NULL;
	}
	free(buf);
	return found;
}

int swap_describe(uint64_t *ret_total, char *ret_devices, size_t len)
{
	char *buf;
	*ret_total = 0;
	int r = util_meminfo_bytes("SwapTotal", ret_total);
	if (r < 0 && r != -ENOENT)
		return r;
	ret_devices[0] = 0;
	if (util_read_file("/proc/swaps", &buf, NULL) < 0)
		return 0;
	struct strbuf sb = { 0 };
	char *line = strchr(buf, '\n'); /* skip the header */
	while (line && *++line) {
		char *nl = strchr(line, '\n');
		size_t n = strcspn(line, " \t");
		if (sb.len)
			sb_puts(&sb, ",");
		sb_append(&sb, line, n);
		line = nl;
	}
	snprintf(ret_devices, len, "%s", sb.buf ? sb.buf : "");
	sb_free(&sb);
	free(buf);
	return 0;
}
