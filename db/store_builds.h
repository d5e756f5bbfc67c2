/* Kernel build records (the builds table). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

struct store;

/* Text fields are malloc'd (NULL: none); store_build_clear frees them. */
struct store_build {
	int64_t id;
	double created, finished;
	enum build_status status;
	char *reason;           /* why it failed, with the log tail */
	char *tree, *base_ref;
	char base_sha[41];
	char *series;           /* as given: a path or lore:ID; NULL: no series */
	char *patches;          /* one "subject\tmessage-id" line per applied patch */
	char series_hash[65];
	char *config_source;    /* running | defconfig | tinyconfig | PATH, and the fragments */
	char config_hash[65];
	char *compiler;         /* gcc --version, first line */
	double duration_s;
	int64_t warnings, objects;
	char *log_tail;
	char kernelrelease[128];
	char *dir, *image, *system_map, *config_path, *modules, *log_path;
	char inputs_key[65];    /* sha256 of everything the build depends on */
	char *initrd;           /* the initramfs it boots with; NULL: none */
	char kind[8];           /* build (kab built it) | image (a kernel image file the job names) */
};

/* Records a build that starts now (status building); *ret_id its id. */
int store_build_begin(struct store *s, const struct store_build *b, int64_t *ret_id);
/* Stores b's outcome (status, reason, figures, artifacts) under b->id. */
int store_build_finish(struct store *s, const struct store_build *b);
/* The newest ok build with these inputs; -ENOENT when there is none. */
int store_build_find(struct store *s, const char *inputs_key, struct store_build *ret);
int store_build_get(struct store *s, int64_t id, struct store_build *ret);
/* Every build, oldest first. */
int store_builds_list(struct store *s, struct store_build **ret, size_t *ret_n);
void store_build_clear(struct store_build *b);
void store_builds_free(struct store_build *v, size_t n);
