/* The config fragment of a bisection's alignment control (doc/bisect.md,
 * "Controls"): the options that force alignment, written by kab under
 * its own state directory (root's, no other user can prepare a path
 * there), where a step job's config.fragment names it. */
#include "kernels/bisect_git.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *const kbisect_align_symbols[KBISECT_ALIGN_N] = {
	"DEBUG_FORCE_FUNCTION_ALIGN_64B",
	"DEBUG_FORCE_DATA_SECTION_ALIGNED",
};

int kbisect_align_fragment(unsigned which, char *path, size_t len, struct strbuf *err)
{
	if (!which || which >= 1u << KBISECT_ALIGN_N)
		return -EINVAL;
	if (!state_path() || state_fd() < 0) {
		sb_puts(err, "kab's state directory is not open: the alignment control's config fragment has nowhere to go");
		return -ENODEV;
	}
	char dir[4096];
	int dfd = -1;
	snprintf(dir, sizeof(dir), "%s/bisect", state_path());
	int r = state_subdir(state_fd(), state_path(), "bisect", &dfd, err);
	if (r < 0)
		return r;
	_cleanup_close_ int d = dfd;
	struct strbuf text = { 0 };
	/* EXPERT: the function alignment option depends on it */
	sb_puts(&text, "# written by kab: a bisection's alignment control (doc/bisect.md, \"Controls\")\nCONFIG_EXPERT=y\n");
	char name[64];
	snprintf(name, sizeof(name), "align-%u.config", which);
	for (unsigned i = 0; i < KBISECT_ALIGN_N; i++)
		if (which & (1u << i))
			sb_printf(&text, "CONFIG_%s=y\n", kbisect_align_symbols[i]);
	char tmp[80];
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	int fd = openat(d, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		r = -errno;
	else {
		r = util_write_fd(fd, text.buf); /* it closes fd */
		if (r >= 0 && renameat(d, tmp, d, name) != 0)
			r = -errno;
	}
	if (r < 0)
		sb_printf(err, "%s/%s: cannot be written: %s", dir, name, strerror(-r));
	else if ((size_t)snprintf(path, len, "%s/%s", dir, name) >= len)
		r = -ENAMETOOLONG;
	sb_free(&text);
	return r;
}
