/* What kab's foreground verbs (kab run, kab plan's calibration) share to
 * run a job here, in this process: the state directory, the executor's
 * lock, the store, what an earlier kab left restored, and the run itself
 * with a check that kab's output is still there. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct job;
struct store;

struct fg {
	struct store *st;
	int lock_fd;
};
#define FG_INIT ((struct fg){ .st = NULL, .lock_fd = -1 })

/* A closed stdout or stderr (kab run JOB | head) must never kill kab with
 * SIGPIPE halfway. 0, or -errno with the error logged. */
int fg_output(void);

/* As root (else no_root is logged): the state directory (state_dir, NULL
 * for the default), the executor's lock, the store db, and what an
 * earlier kab left restored. 0, or -errno with the error logged; fg_close
 * releases what was taken either way. */
int fg_open(struct fg *fg, const char *db, const char *state_dir, const char *no_root);

/* Stores j and its schedule as a new job; what names it in the error
 * ("the calibration job"). Its id and runs in ret_id and ret_n. */
int fg_submit(struct fg *fg, struct job *j, const char *db, const char *what, int64_t *ret_id, size_t *ret_n);

/* Runs the stored job's pending steps, stopping when kab's output closes
 * (the job is then cancelled), through its owner, jl_run: exec_job's
 * return. history: the job joins its name's history at its end. */
int fg_exec(struct fg *fg, struct job *j, int64_t id, bool history);

void fg_close(struct fg *fg);
