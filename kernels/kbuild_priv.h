/* Inside kernels/: the config step (config.c) and helpers the build_*.c files share. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct strbuf;
struct krun_user;

/* How a build's tools run: as user (NULL: as kab, which is not root) with
 * env added; stage is a directory of kab's the user can read, where kab
 * puts what it hands the build. */
struct kbuild_as {
	const struct krun_user *user;
	char *const *env;
	const char *stage;
};

/* Produces kc_dir/.config from source (running | defconfig | tinyconfig |
 * PATH) with the tree in src, merges the fragments, turns off
 * LOCALVERSION_AUTO and makes sure the options kab needs are on (a
 * warning names those it enabled; an error lists those it could not).
 * make runs as->user's, kc_dir is its. Tool output goes to log_fd. 0,
 * -EINVAL (bad source) or -EIO. */
int kconfig_produce(const struct kbuild_as *as, const char *src, const char *kc_dir, const char *source,
		    char *const *fragments, size_t n_fragments, unsigned need, int log_fd, struct strbuf *warn,
		    struct strbuf *err);
/* Writes len bytes of text into dst, a file in a directory of the user's:
 * kab writes them in its stage directory and the user copies them. */
int kbuild_put(const struct kbuild_as *as, const char *text, size_t len, const char *dst, struct strbuf *err);
/* The user copies its own file from into to. */
int kbuild_copy_as(const struct kbuild_as *as, const char *from, const char *to, struct strbuf *err);
/* Whether a .config's text sets CONFIG_<opt>=y (or =m with module). */
bool kconfig_is_set(const char *text, const char *opt, bool module_ok);
/* Appends to ret, comma-separated, the options kab needs (every build's,
 * and need's: enum kbuild_need) that text, a .config, does not set to y. */
void kconfig_missing(const char *text, unsigned need, struct strbuf *ret);
/* Lines setting an option to y or m: a size estimate of the build. */
size_t kconfig_count_set(const char *text);
/* Writes path, the build user's git config (GIT_CONFIG_GLOBAL) naming
 * tree, its git directory and its common directory as safe.directory
 * (git clone's upload-pack reads the tree's git directory), and extra
 * (NULL: none) too: a tracked branch's remote on this machine, which
 * git fetch's upload-pack reads. */
int ktree_gitconfig(const char *tree, const char *extra, const char *path, struct strbuf *err);

/* The kernels directory: given, else $KAB_KERNELS_DIR, else STATE/kernels
 * (the state directory opened, and refused with the reason in err, when
 * needed). */
int kbuild_kernels_dir(const char *given, char *buf, size_t len, struct strbuf *err);
