/* Inside kernels/: the config step (config.c) and helpers build.c shares. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct strbuf;

/* Produces kc_dir/.config from source (running | defconfig | tinyconfig |
 * PATH) with the tree in src, merges the fragments, turns off
 * LOCALVERSION_AUTO and makes sure the options kab needs are on (a
 * warning names those it enabled; an error lists those it could not).
 * Tool output goes to log_fd. 0, -EINVAL (bad source) or -EIO. */
int kconfig_produce(const char *src, const char *kc_dir, const char *source, char *const *fragments, size_t n_fragments,
		    unsigned need, int log_fd, struct strbuf *warn, struct strbuf *err);
/* Whether a .config's text sets CONFIG_<opt>=y (or =m with module). */
bool kconfig_is_set(const char *text, const char *opt, bool module_ok);
/* Lines setting an option to y or m: a size estimate of the build. */
size_t kconfig_count_set(const char *text);

/* A build's directory: given, else $env, else STATE/sub (the state
 * directory opened, and refused with the reason in err, when needed). */
int kbuild_dir(const char *given, const char *env, const char *sub, char *buf, size_t len, struct strbuf *err);
