/* Small helpers shared by every module: strict number parsing, checked
 * kernel-file writes, cleanup attributes, a growable string, logging. */
#pragma once
#include <sys/types.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KAB_VERSION "0.1.0"

#define _cleanup_(f) __attribute__((cleanup(f)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void util_freep(void *p);   /* for _cleanup_: frees *(void **)p */
void util_closep(int *fd);  /* closes *fd when >= 0 */
void util_fclosep(FILE **f);
#define _cleanup_free_ _cleanup_(util_freep)
#define _cleanup_close_ _cleanup_(util_closep)
#define _cleanup_fclose_ _cleanup_(util_fclosep)

/* Strict parsers: the whole string must be consumed, no sign surprises.
 * Return 0 or -EINVAL / -ERANGE; *ret untouched on failure. */
int util_parse_u64(const char *s, uint64_t *ret);
int util_parse_i64(const char *s, int64_t *ret);
int util_parse_double(const char *s, double *ret);
/* "4096", "256M", "2G", "1.5G", "64k", "512MiB" (binary units). */
int util_parse_size(const char *s, uint64_t *ret);
/* "10", "10s", "500ms", "2m", "1h" -> seconds. */
int util_parse_duration(const char *s, double *ret_seconds);
/* Whether name matches pattern, in which each '*' matches any run of
 * characters (none too) and every other character only itself. */
bool util_glob(const char *pattern, const char *name);
/* Formats bytes the way util_parse_size reads them back: "256M". */
void util_format_size(uint64_t bytes, char *buf, size_t len);
/* value written in one write to fd, which is then closed; 0, -EIO for a
 * short write, or -errno. */
int util_write_fd(int fd, const char *value);

/* Whole-file read (NUL-terminated). */
int util_read_file(const char *path, char **ret, size_t *ret_len);
/* Reads a small kernel file and strips the trailing newline. */
/* Reads exactly want bytes of fd (a file whose size fstat gave) into a
 * NUL-terminated buffer; -EIO when it ends sooner. */
int util_read_fd_exact(int fd, size_t want, char **ret);
int util_read_line(const char *path, char **ret);
/* Reads a regular file (through symlinks) of at most max bytes into a
 * NUL-terminated buffer. Nothing else is opened for reading: a FIFO, a
 * device or a socket is -EINVAL (*ret_mode says which, when not NULL), a
 * directory -EISDIR; a file larger than max is -EFBIG, refused on its size
 * or, when that is no guide, once max + 1 bytes have been read. */
int util_read_regular(const char *path, size_t max, char **ret, size_t *ret_len, mode_t *ret_mode);
/* "a FIFO", "a character device", ...: what a mode's file type is, for messages. */
const char *util_file_kind(mode_t mode);
/* A /proc/meminfo field ("MemTotal", "SwapTotal") in bytes. */
int util_meminfo_bytes(const char *key, uint64_t *ret);
/* Writes value to a kernel file, checking write() and close(); -errno. */
int util_write_file(const char *path, const char *value);
/* mkdir -p. */
int util_mkdir_p(const char *path, mode_t mode);
/* rm -rf that never follows a symlink; 0 when path does not exist. */
int util_remove_tree(const char *path);
/* Copies from's bytes into to (created or truncated, mode 0644; a
 * symbolic link at to is refused with -ELOOP, never written through). */
int util_copy_file(const char *from, const char *to);
/* Copies in to out until in's end; -EFBIG past max bytes (0: no limit). */
int util_copy_fd(int in, int out, size_t max);
/* In a forked child before exec (async-signal-safe): nothing blocked and
 * SIGPIPE at its default, whatever kab blocks or ignores (an ignored
 * signal stays ignored across exec). */
void util_child_signals(void);
/* In a forked child before exec (async-signal-safe): every descriptor but
 * 0, 1 and 2 is closed at exec, whoever opened it and however (kab's
 * database and locks, kabd's sockets, a library's files), so no program
 * kab starts holds one of root's; the child may still use its own (an
 * error pipe, a log to dup2) until it execs. */
void util_child_fds(void);
/* posix_spawn attributes that give the child the same signals; -errno. */
int util_spawnattr_init(posix_spawnattr_t *attr);
/* The file action that gives a posix_spawn child the same descriptors:
 * every one from 3 up closed. Add it after the child's dup2s; -errno. */
int util_spawn_close_fds(posix_spawn_file_actions_t *fa);
/* A child's wait status in words: "exited with status 2", "was killed by signal 9". */
void util_wait_status_text(int status, char *buf, size_t len);

/* The word lists of kab's enums (X-macro lists: one name table each):
 * the word of value v in a table of n ("unknown" outside it), and the
 * value of word s, -EINVAL when it is none of them (s NULL included). */
const char *util_word_name(const char *const *names, int n, int v);
int util_word_index(const char *const *names, int n, const char *s);
/* TYPE_name and TYPE_parse of enum TYPE over its word table words of n:
 * name of a value outside it "unknown"; parse 0, or -EINVAL with *ret
 * untouched. What each enum's list makes with its table. */
#define UTIL_WORD_FUNCS(type, words, n) \
	const char *type##_name(enum type v) \
	{ \
		return util_word_name(words, n, (int)v); \
	} \
	int type##_parse(const char *s, enum type *ret) \
	{ \
		int i = util_word_index(words, n, s); \
		if (i < 0) \
			return i; \
		*ret = (enum type)i; \
		return 0; \
	}

/* Edit distance, for "did you mean" hints. */
size_t util_levenshtein(const char *a, const char *b);
/* Closest candidate within distance max(2, len/3), or NULL. */
const char *util_did_you_mean(const char *word, const char *const *cands, size_t n);

/* Finds an executable in $PATH (or checks a path with '/'). */
bool util_find_program(const char *name, char *ret_path, size_t len);

double util_mono_now(void);  /* CLOCK_MONOTONIC seconds */
double util_real_now(void);  /* CLOCK_REALTIME seconds */
void util_iso_time(double real, char *buf, size_t len);

/* A growable array: room for need elements of elem bytes in v, its
 * capacity doubled from first; returns v (moved, maybe) or NULL on
 * overflow or no memory, v and *cap then untouched. util_grow is the
 * typed form: util_grow(v, n_cap, n + 1, 16) is 0 or -ENOMEM, and calls
 * nothing while there is room (the sampler's loop, the CSV reader's rows). */
void *util_grow_array(void *v, size_t *cap, size_t need, size_t elem, size_t first);
#define util_grow(v, cap, need, first) \
	__extension__({ \
		void *grow_p_ = (need) <= (cap) && (v) ? (void *)(v) \
						       : util_grow_array((v), &(cap), (need), sizeof(*(v)), (first)); \
		if (grow_p_) \
			(v) = grow_p_; \
		grow_p_ ? 0 : -ENOMEM; \
	})

struct strbuf {
	char *buf;
	size_t len, cap;
};
int sb_append(struct strbuf *sb, const char *s, size_t n);
int sb_puts(struct strbuf *sb, const char *s);
int sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(struct strbuf *sb);

/* Diagnostics: "file:line: message", collected so every error is shown. */
struct diag {
	char *file;
	int line;  /* 0: no line */
	char *msg;
};
/* At most DIAGS_MAX are kept; the ones after are only counted (dropped),
 * so a hostile input cannot make its error list the expensive part. */
#define DIAGS_MAX 100
struct diags {
	struct diag *v;
	size_t n, cap;
	size_t dropped;  /* reported after the first DIAGS_MAX: counted, not kept */
};
void diags_add(struct diags *d, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Every problem reported, kept or dropped. */
size_t diags_count(const struct diags *d);
/* No more are kept: skip work (hints, listings) done only for a message. */
bool diags_full(const struct diags *d);
/* The kept ones as "file:line: message", then "and N more" if any were dropped. */
void diags_print(const struct diags *d, FILE *out);
void diags_free(struct diags *d);

/* A string set with a value per key, for duplicate checks in linear time.
 * Keys are borrowed: they must outlive the map. */
struct util_strmap {
	const char **keys;
	int *values;
	size_t n, nslot;
};
/* Adds key with value: 0 added, 1 already there (its value in *ret_old if
 * not NULL, the map unchanged), -ENOMEM. */
int util_strmap_put(struct util_strmap *m, const char *key, int value, int *ret_old);
void util_strmap_free(struct util_strmap *m);

/* Logging to stderr with a "kab: " prefix, one write(2) per line; a
 * closed stderr is marked (output.h) and later lines go to /dev/null. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool log_quiet;
