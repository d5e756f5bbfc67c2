/* Patch series: an mbox file, a directory of .patch files, or a lore
 * thread (lore:<message-id>) fetched from a public-inbox archive over
 * https or read from a local one. What comes out is one version's
 * patches, in order, ready for git am, and only when that version is its
 * author's: every patch from the sender of its cover letter (or, without
 * one, from one sender), no two with the same number. A thread with more
 * than one version takes the version asked for (series = SOURCE vN), or
 * that of the message named (lore:<message-id>); else it is refused with
 * the versions and senders it has. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct strbuf;

/* A thread's t.mbox.gz is downloaded up to this many bytes ... */
#define KSERIES_DOWNLOAD_MAX (16u << 20)
/* ... and an mbox (decompressed, a file or a directory's patches) read
 * up to this many. */
#define KSERIES_MBOX_MAX (64u << 20)
/* ... and a thread may hold at most this many patches and cover letters,
 * all versions together (a directory this many .patch files): the
 * largest series posted to LKML had about 2,300. */
#define KSERIES_PATCHES_MAX 10000u
struct kseries_patch {
	char *subject;     /* the Subject header, unfolded, tags included */
	char *title;       /* the subject without "[PATCH v2 1/3]" */
	char *message_id;  /* without <>; "" when the message has none */
	char *from;        /* the From header as sent; "" when none */
	char *sender;      /* its address, lowercased: what "the same sender" compares */
	unsigned version;  /* 1 unless tagged vN */
	unsigned index, total;  /* 1/3; 0/0 when untagged */
	char *text;        /* the whole message, "From " line included */
	size_t len;
};

struct kseries {
	struct kseries_patch *v;
	size_t n;
	unsigned version;  /* the version kept */
	char author[256];  /* the From of its cover letter (or of its patches) */
	char hash[65];     /* sha256 of the kept messages */
};

/* Splits an mbox's text into messages and keeps one version's patches in
 * order (replies and cover letters dropped): version when not 0, else
 * the version of the message anchor names (may be NULL), else the only
 * one. name is the source, for messages. Errors (-EINVAL: empty, cover
 * letter only, a gap, no such version, more than one version, a patch
 * from another sender, two patches with one number, a message with a NUL
 * byte; -EFBIG: more than KSERIES_PATCHES_MAX patches) are written to err. */
int kseries_parse(const char *text, size_t len, const char *name, unsigned version, const char *anchor,
		  struct kseries *ret, struct strbuf *err);

/* Reads a series from source: a path to an mbox file or to a directory of
 * *.patch files (in name order), or lore:<message-id>, whose thread is
 * ARCHIVE/<message-id>/t.mbox.gz, fetched when archive is an https://
 * URL (no other scheme; redirects followed only to https) or read when
 * it is a local directory. Files are read only when regular (a FIFO or
 * a device is -EINVAL, never opened for reading). Bounded:
 * KSERIES_DOWNLOAD_MAX downloaded or read of a local t.mbox.gz,
 * KSERIES_MBOX_MAX decompressed or read, KSERIES_PATCHES_MAX patches
 * (-EFBIG). version as for kseries_parse. */
int kseries_load(const char *source, unsigned version, const char *archive, struct kseries *ret, struct strbuf *err);

/* The text of ARCHIVE/<msgid>/t.mbox.gz, decompressed (series_fetch.c),
 * appended to out; -EINVAL (a bad archive or message id), -EHOSTUNREACH
 * (the fetch failed), -EFBIG (over a cap) with why in err. */
int kseries_fetch(const char *msgid, const char *archive, struct strbuf *out, struct strbuf *err);

/* Whether archive is one kab takes: an https:// URL or an absolute path;
 * else why not, in why. */
bool kseries_archive_ok(const char *archive, char *why, size_t len);

/* Writes the kept patches as one mbox for git am (a new file, 0644). */
int kseries_write(const struct kseries *s, const char *path);
void kseries_free(struct kseries *s);

/* Reads "[RFC PATCH v2 1/3] mm: x" into version/index/total; returns false
 * when the subject has no PATCH tag. *ret_title points into subject. */
bool kseries_parse_subject(const char *subject, unsigned *ret_version, unsigned *ret_index, unsigned *ret_total,
			   const char **ret_title);
