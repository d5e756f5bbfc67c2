/* Knob values restored exactly: temporary files stand in for knobs, and
 * the journal (a temporary database) holds what a crashed kab would
 * restore from. An empty original is written back as "\n" (the kernel
 * ignores a write of no bytes), a long one whole, one longer than the
 * journal can hold is refused before anything changes, and a choice list
 * reads as its selected word. */
#include "harness/job/job.h"
#include "harness/exec/knobs.h"
#include "db/store.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/kab-knobs-XXXXXX";

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *get(const char *path)
{
	char *text = NULL;
	if (util_read_file(path, &text, NULL) < 0)
		return NULL;
	return text;
}

/* Applies value over a file holding before, checks the journal, restores,
 * and returns what the file holds then. */
static char *round_trip(struct store *st, const char *name, const char *before, const char *value)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	put(path, before);
	struct job_knob k = { .kind = JOB_KNOB_SYSFS, .name = path, .path = path, .value = (char *)value, .line = 1 };
	struct job_variant v = { .name = "A", .knobs = &k, .n_knobs = 1 };
	struct knob_applied *a = NULL;
	size_t n = 0;
	char in_force[8192];
	struct strbuf err = { 0 };
	int r = knob_apply(st, 1, "boot", &v, &a, &n, in_force, sizeof(in_force), &err);
	T_EQ_INT(r, 0);
	if (r < 0) {
		fprintf(stderr, "  %s\n", err.len ? err.buf : "");
		sb_free(&err);
		return NULL;
	}
	sb_free(&err);
	char *now = get(path);
	T_EQ_STR(now, value);
	free(now);

	/* the journal holds the original whole: what kab would restore after a crash */
	struct store_journal *j = NULL;
	size_t nj = 0;
	T_EQ_INT(store_journal_list(st, &j, &nj), 0);
	T_EQ_INT(nj, 1);
	if (nj == 1) {
		T_EQ_STR(j[0].target, path);
		T_EQ_INT(strlen(j[0].original), strlen(a[0].original));
		T_EQ_STR(j[0].original, a[0].original);
	}
	free(j);

	T_EQ_INT(knob_restore(st, a, n), 0);
	T_EQ_INT(store_journal_list(st, &j, &nj), 0);
	T_EQ_INT(nj, 0); /* dropped once restored */
	free(j);
	free(a);
	return get(path);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char db[160];
	snprintf(db, sizeof(db), "%s/kab.db", dir);
	struct store *st = NULL;
	T_EQ_INT(store_open(db, &st), 0);
	if (!st)
		return t_done("test_knobs");

	/* an empty value (kernel.core_pattern can be, /sys/power/state is in
	 * some VMs): "\n", what the kernel reads back as empty */
	char *after = round_trip(st, "empty", "\n", "core");
	T_EQ_STR(after, "\n");
	free(after);
	char buf[16];
	T_EQ_INT(knob_read("/dev/null", buf, sizeof(buf)), 0);
	T_EQ_STR(buf, "");

	/* longer than 255 bytes, with spaces, tabs and brackets that are not a choice list */
	char long_value[KNOB_VALUE_MAX + 2];
	for (int i = 0; i < 300; i++)
		long_value[i] = "ab c\t[d]"[i % 8];
	snprintf(long_value + 300, sizeof(long_value) - 300, "\n");
	after = round_trip(st, "long", long_value, "1");
	long_value[300] = '\0'; /* kab writes the value without the kernel's newline */
	T_EQ_STR(after, long_value);
	free(after);

	/* a page, the most a sysfs attribute shows, restores whole */
	memset(long_value, 'x', KNOB_VALUE_MAX);
	long_value[KNOB_VALUE_MAX] = '\n';
	long_value[KNOB_VALUE_MAX + 1] = '\0';
	after = round_trip(st, "page", long_value, "1");
	T_EQ_INT(after ? strlen(after) : 0, KNOB_VALUE_MAX);
	T_CHECK(after && strncmp(after, long_value, KNOB_VALUE_MAX) == 0);
	free(after);

	/* trailing spaces of a plain value are part of it */
	after = round_trip(st, "spaces", "core \n", "x");
	T_EQ_STR(after, "core ");
	free(after);

	/* a choice list restores as its selected word, zram's trailing space or not */
	after = round_trip(st, "thp", "always [madvise] never\n", "never");
	T_EQ_STR(after, "madvise");
	free(after);
	after = round_trip(st, "zram", "[lzo-rle] lzo lz4 \n", "lz4");
	T_EQ_STR(after, "lzo-rle");
	free(after);

	/* more than a page: refused before it is changed, nothing journaled */
	char path[128];
	snprintf(path, sizeof(path), "%s/huge", dir);
	char *huge = malloc(KNOB_VALUE_MAX + 3);
	memset(huge, 'y', KNOB_VALUE_MAX + 1);
	huge[KNOB_VALUE_MAX + 1] = '\n';
	huge[KNOB_VALUE_MAX + 2] = '\0';
	put(path, huge);
	T_EQ_INT(knob_read(path, long_value, KNOB_VALUE_MAX + 1), -E2BIG);
	struct job_knob k = { .kind = JOB_KNOB_SYSFS, .name = path, .path = path, .value = "1", .line = 1 };
	struct job_variant v = { .name = "A", .knobs = &k, .n_knobs = 1 };
	struct knob_applied *a = NULL;
	size_t n = 0;
	char in_force[64];
	struct strbuf err = { 0 };
	T_EQ_INT(knob_apply(st, 1, "boot", &v, &a, &n, in_force, sizeof(in_force), &err), -E2BIG);
	T_CHECK(err.len && strstr(err.buf, "holds more than 4096 bytes") != NULL);
	sb_free(&err);
	char *now = get(path);
	T_EQ_STR(now, huge);
	free(now);
	free(huge);
	struct store_journal *j = NULL;
	size_t nj = 0;
	T_EQ_INT(store_journal_list(st, &j, &nj), 0);
	T_EQ_INT(nj, 0);
	free(j);

	/* knob_write: an empty value is a newline, anything else as it is */
	T_EQ_INT(knob_write(path, ""), 0);
	now = get(path);
	T_EQ_STR(now, "\n");
	free(now);

	store_close(st);
	const char *names[] = { "empty", "long", "page", "spaces", "thp", "zram", "huge", "kab.db", "kab.db-wal", "kab.db-shm" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	return t_done("test_knobs");
}
