/* Swap for the whole job: a zram device or a swap file, made and enabled
 * (journaled first), [swap]'s zswap settings in front of it, and undone. */
#include "harness/exec/exec_priv.h"
#include "harness/job/job.h"
#include "harness/exec/jobdir.h"
#include "harness/exec/knobs.h"
#include "db/store.h"
#include "harness/exec/swap.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* [swap]'s zswap settings as a variant, for knob_apply and the preflight. */
struct job_variant exec_swap_knobs_variant(const struct job *j)
{
	return (struct job_variant){ .label = "swap", .name = "[swap]", .kernel = "running",
				     .knobs = j->swap.knobs, .n_knobs = j->swap.n_knobs, .line = j->swap.line };
}

static int swap_knobs_apply(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
			    struct exec_swap_state *s)
{
	if (j->swap.n_knobs == 0)
		return 0;
	struct job_variant v = exec_swap_knobs_variant(j);
	char in_force[1024];
	struct strbuf err = { 0 };
	int r = knob_apply(st, job_id, boot_id, &v, &s->knobs, &s->n_knobs, in_force, sizeof(in_force), &err);
	if (r < 0)
		log_error("[swap] zswap settings: %s", err.len ? err.buf : "");
	sb_free(&err);
	if (r < 0)
		return r;
	for (char *p = in_force, *nl; *p; p = nl + 1) {
		if (!(nl = strchr(p, '\n')))
			break;
		*nl = 0;
		log_info("swap: %s", p);
	}
	return 0;
}

int exec_swap_setup(struct store *st, const struct job *j, int64_t job_id, const char *boot_id,
		    const struct jobdir *jd, struct exec_swap_state *s)
{
	memset(s, 0, sizeof(*s));
	s->zram_id = -1;
	struct strbuf err = { 0 };
	struct store_journal e = { .job_id = job_id };
	snprintf(e.boot_id, sizeof(e.boot_id), "%s", boot_id);
	int r = 0;
	switch (j->swap.kind) {
	case JOB_SWAP_NONE:
	case JOB_SWAP_EXISTING:
		return swap_knobs_apply(st, j, job_id, boot_id, s);
	case JOB_SWAP_ZRAM:
		r = swap_zram_add(j->swap.size, j->swap.algorithm, &s->zram_id, &err);
		if (s->zram_id >= 0) {
			snprintf(s->path, sizeof(s->path), "/dev/zram%d", s->zram_id);
			snprintf(e.kind, sizeof(e.kind), "%s", journal_kind_name(JOURNAL_ZRAM));
			snprintf(e.target, sizeof(e.target), "%s", s->path);
			snprintf(e.original, sizeof(e.original), "%d", s->zram_id);
			store_journal_add(st, &e, &s->journal_id);
			s->made = true;
		}
		break;
	case JOB_SWAP_FILE:
		if (j->swap.path) {
			snprintf(s->path, sizeof(s->path), "%s", j->swap.path);
			if ((r = swap_path_trusted(s->path, &err)) < 0)
				break;
		} else if ((r = jobdir_swap_path(jd, s->path, sizeof(s->path))) < 0) {
			sb_printf(&err, "cannot name a swap file in %s: %s", jd->path, strerror(-r));
			break;
		}
		snprintf(e.kind, sizeof(e.kind), "%s", journal_kind_name(JOURNAL_SWAPFILE));
		snprintf(e.target, sizeof(e.target), "%s", s->path);
		if ((r = store_journal_add(st, &e, &s->journal_id)) < 0)
			break;
		r = swap_file_create(s->path, j->swap.size, &err);
		if (r < 0)
			store_journal_del(st, s->journal_id);
		else
			s->made = true;
		break;
	}
	if (r >= 0)
		r = swap_enable(s->path, j->swap.priority, &err);
	if (r < 0)
		log_error("swap: %s", err.len ? err.buf : "");
	sb_free(&err);
	if (r < 0)
		return r;
	char sz[32];
	util_format_size(j->swap.size, sz, sizeof(sz));
	log_info("swap: %s (%s) enabled", s->path, sz);
	/* zswap goes in front once the device is there to write back to */
	return swap_knobs_apply(st, j, job_id, boot_id, s);
}

void exec_swap_teardown(struct store *st, struct exec_swap_state *s)
{
	if (s->n_knobs) {
		knob_restore(st, s->knobs, s->n_knobs);
		free(s->knobs);
		s->knobs = NULL;
		s->n_knobs = 0;
	}
	if (!s->made)
		return;
	int r;
	if (s->zram_id >= 0) {
		r = swap_zram_remove(s->zram_id);
	} else {
		r = swap_disable(s->path);
		if (r >= 0 && unlink(s->path) < 0 && errno != ENOENT)
			r = -errno;
	}
	if (r >= 0) {
		store_journal_del(st, s->journal_id);
		log_info("swap: %s removed", s->path);
	}
	s->made = false;
}
