/* Patch series: an mbox file, a directory of .patch files, or a lore
 * thread (lore:<message-id>) fetched from a public-inbox archive. What
 * comes out is the newest version's patches, in order, ready for git am. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct kseries_patch {
	char *subject;     /* the Subject header, unfolded, tags included */
	char *title;       /* the subject without "[PATCH v2 1/3]" */
	char *message_id;  /* without <>; "" when the message has none */
	unsigned version;  /* 1 unless tagged vN */
	unsigned index, total;  /* 1/3; 0/0 when untagged */
	char *text;        /* the whole message, "From " line included */
	size_t len;
};

struct kseries {
	struct kseries_patch *v;
	size_t n;
	unsigned version;  /* the version kept */
	char hash[65];     /* sha256 of the kept messages */
};

/* Splits an mbox's text into messages and keeps the patches of the newest
 * version in order; replies and cover letters are dropped. name is the
 * source, for messages. Errors (-EINVAL: empty, cover letter only, a gap
 * in the series) are written to err. */
int kseries_parse(const char *text, size_t len, const char *name, struct kseries *ret, char *err, size_t errlen);

/* Reads a series from source: a path to an mbox file or to a directory of
 * *.patch files (in name order), or lore:<message-id>, whose thread is
 * fetched from archive (a public-inbox base URL) into scratch_dir. */
int kseries_load(const char *source, const char *archive, const char *scratch_dir, struct kseries *ret, char *err,
		 size_t errlen);

/* Writes the kept patches as one mbox for git am. */
int kseries_write(const struct kseries *s, const char *path);
void kseries_free(struct kseries *s);

/* Reads "[RFC PATCH v2 1/3] mm: x" into version/index/total; returns false
 * when the subject has no PATCH tag. *ret_title points into subject. */
bool kseries_parse_subject(const char *subject, unsigned *ret_version, unsigned *ret_index, unsigned *ret_total,
			   const char **ret_title);
