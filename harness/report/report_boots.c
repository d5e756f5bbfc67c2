/* A stored job that boots kernels, for its report: the Boots lines (each
 * variant's boots, failed boots and switch times), each variant's kernel
 * as the builds table records it, and every run joined to the boot it ran
 * in (runs.boot_id = boots.boot_id) and that boot's build. A run whose
 * kernel, boot or planned boot is not its variant's must never happen;
 * each one becomes a line of r->kernel_warnings, which every format shows. */
#include "harness/report/report.h"
#include "harness/report/report_priv.h"
#include "kernels/kexec.h"
#include "db/store.h"
#include "db/store_boots.h"
#include "db/store_builds.h"
#include "db/store_track.h"
#include "harness/base/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int add_boot_line(struct report *rep, char *line)
{
	if (!line)
		return -ENOMEM;
	char **nb = realloc(rep->boots, (rep->n_boots + 1) * sizeof(*nb));
	if (!nb) {
		free(line);
		return -ENOMEM;
	}
	rep->boots = nb;
	nb[rep->n_boots++] = line;
	return 0;
}

/* Per variant: its build, boots, failed boots and switch times; then
 * each failed boot's reason. After load_kernels. */
static int add_boots(struct store *st, struct report *rep, const struct store_boot *v, size_t n,
		     const struct store_step *steps, size_t n_steps)
{
	double *t = calloc(n ? n : 1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	int r = 0;
	for (size_t vi = 0; vi < rep->n_variants && r == 0; vi++) {
		size_t ok = 0, failed = 0, nt = 0, bf = 0;
		int64_t build = rep->kernels[vi].build_id;  /* the last boot's, else the variant's */
		char release[128] = "";
		for (size_t i = 0; i < n; i++) {
			if ((size_t)v[i].variant != vi)
				continue;
			build = v[i].build_id;
			if (v[i].status == BOOT_OK) {
				ok++;
				snprintf(release, sizeof(release), "%s", v[i].kernel_release);
				if (v[i].ready_at > 0)
					t[nt++] = v[i].kexec_s;
			}
			failed += v[i].status == BOOT_FAILED;
		}
		for (size_t i = 0; i < n_steps; i++)
			bf += (size_t)steps[i].variant == vi && steps[i].status == STEP_BOOT_FAILED;
		if (!release[0] && build > 0) {
			struct store_build b = { 0 };
			if (store_build_get(st, build, &b) == 0)
				snprintf(release, sizeof(release), "%s", b.kernelrelease);
			store_build_clear(&b);
		}
		char times[128] = "";
		struct stats_desc sd;
		if (nt && stats_describe(t, nt, &sd) == 0)
			snprintf(times, sizeof(times), ", switch to ready %.1f s median (%.1f-%.1f)", sd.median, sd.min, sd.max);
		char *line = NULL;
		if (asprintf(&line, "%s: build %lld (%s): %zu boot%s, %zu failed%s%s", rep->variants[vi], (long long)build,
			     release[0] ? release : "?", ok, ok == 1 ? "" : "s", failed, times,
			     bf ? "; BOOT-FAILED, its runs did not happen" : "") < 0)
			line = NULL;
		r = add_boot_line(rep, line);
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		if (v[i].status != BOOT_FAILED && v[i].status != BOOT_ABANDONED)
			continue;
		char *line = NULL;
		if (asprintf(&line, "boot %d of the plan (%s, build %lld) %s: %s", v[i].slot + 1,
			     (size_t)v[i].variant < rep->n_variants ? rep->variants[v[i].variant] : "?", (long long)v[i].build_id,
			     boot_status_name(v[i].status), v[i].reason) < 0)
			line = NULL;
		r = add_boot_line(rep, line);
	}
	free(t);
	return r;
}

/* builds.patches: one "subject\tmessage-id" line per applied patch. */
static int parse_patches(const char *text, struct report_kernel *k)
{
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");
		if (n) {
			const char *tab = memchr(p, '\t', n);
			size_t sn = tab ? (size_t)(tab - p) : n;
			struct report_patch *np = realloc(k->patches, (k->n_patches + 1) * sizeof(*np));
			if (!np)
				return -ENOMEM;
			k->patches = np;
			struct report_patch *x = &np[k->n_patches];
			x->subject = strndup(p, sn);
			x->message_id = tab ? strndup(tab + 1, n - sn - 1) : strdup("");
			if (!x->subject || !x->message_id) {
				free(x->subject);
				free(x->message_id);
				return -ENOMEM;
			}
			k->n_patches++;
		}
		p += n + (p[n] == '\n');
	}
	return 0;
}

/* Moves a text field out of the build; "" (an image's tree) is none. */
static char *take(char **field)
{
	char *s = *field;
	*field = NULL;
	if (s && !s[0]) {
		free(s);
		s = NULL;
	}
	return s;
}

/* Build id's record into k; a build missing from the table leaves found false. */
static int kernel_fill(struct store *st, int64_t id, struct report_kernel *k)
{
	k->build_id = id;
	struct store_build b = { 0 };
	int r = store_build_get(st, id, &b);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	k->found = true;
	snprintf(k->kind, sizeof(k->kind), "%s", b.kind[0] ? b.kind : "build");
	k->status = b.status;
	snprintf(k->kernelrelease, sizeof(k->kernelrelease), "%s", b.kernelrelease);
	snprintf(k->base_sha, sizeof(k->base_sha), "%s", b.base_sha);
	k->tree = take(&b.tree);
	k->base_ref = take(&b.base_ref);
	if (strcmp(k->kind, "image") == 0)
		k->image = take(&b.series);
	else
		k->series = take(&b.series);
	r = parse_patches(b.patches, k);
	store_build_clear(&b);
	return r;
}

/* Each variant's build: the one recorded with the job's variants, else
 * the one its boots booted. */
static int load_kernels(struct store *st, struct report *rep, const struct store_boot *boots, size_t nb)
{
	rep->kernels = calloc(rep->n_variants ? rep->n_variants : 1, sizeof(*rep->kernels));
	int64_t *ids = calloc(rep->n_variants ? rep->n_variants : 1, sizeof(*ids));
	int r = rep->kernels && ids ? 0 : -ENOMEM;
	if (r == 0 && (r = store_variant_builds_get(st, rep->job_id, ids, rep->n_variants)) == -ENOENT)
		r = 0;
	for (size_t v = 0; v < rep->n_variants && r == 0; v++) {
		struct report_kernel *k = &rep->kernels[v];
		for (size_t i = 0; i < nb; i++) {
			if ((size_t)boots[i].variant != v)
				continue;
			if (ids[v] <= 0)
				ids[v] = boots[i].build_id;
			k->boots += boots[i].status == BOOT_OK;
			k->failed_boots += boots[i].status == BOOT_FAILED;
		}
		if (ids[v] > 0)
			r = kernel_fill(st, ids[v], k);
		struct store_track t;
		if (r == 0 && store_variant_track_get(st, rep->job_id, v, &t) == 0) {
			snprintf(k->track.track, sizeof(k->track.track), "%s", t.track);
			snprintf(k->track.sha, sizeof(k->track.sha), "%s", t.sha);
			snprintf(k->track.subject, sizeof(k->track.subject), "%s", t.subject);
			snprintf(k->track.event, sizeof(k->track.event), "%s", t.event);
			k->track.date = t.date;
		}
	}
	free(ids);
	return r;
}

static void kernel_clear(struct report_kernel *k)
{
	for (size_t i = 0; i < k->n_patches; i++) {
		free(k->patches[i].subject);
		free(k->patches[i].message_id);
	}
	free(k->patches);
	free(k->tree);
	free(k->base_ref);
	free(k->series);
	free(k->image);
}

void report_boots_free(struct report *r)
{
	for (size_t v = 0; r->kernels && v < r->n_variants; v++)
		kernel_clear(&r->kernels[v]);
	free(r->kernels);
	for (size_t i = 0; i < r->n_run_boots; i++)
		free(r->run_boots[i].runs);
	free(r->run_boots);
	for (size_t i = 0; i < r->n_kernel_warnings; i++)
		free(r->kernel_warnings[i]);
	free(r->kernel_warnings);
}

const char *report_order_words(const char *order)
{
	if (strcmp(order, "abba") == 0)
		return "ABBA";
	if (strcmp(order, "alternate") == 0)
		return "ABAB";
	if (strcmp(order, "random") == 0)
		return "in a random balanced order";
	return order;
}

/* ---- the boot each run ran in ---- */

/* Warning lines kept; a job whose every run is wrong says how many more. */
#define WARNINGS_MAX 50

struct boot_key {
	const char *boot_id;
	long row;
};

struct join {
	struct store *st;
	struct report *rep;
	const struct store_boot *boots;
	size_t nb;
	struct store_step *steps;  /* sorted by id */
	size_t ns;
	const struct report_run *runs;
	size_t nr;
	long *entry;               /* [boots row]: its index in rep->run_boots; -1: none */
	struct boot_key *keys;     /* the boots with a boot id, sorted by it */
	size_t n_keys;
	size_t n_warnings;         /* all, kept or not */
	int err;
};

static void warn(struct join *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct join *j, const char *fmt, ...)
{
	struct report *rep = j->rep;
	if (j->n_warnings++ >= WARNINGS_MAX)
		return;
	char **nw = realloc(rep->kernel_warnings, (rep->n_kernel_warnings + 1) * sizeof(*nw));
	if (!nw) {
		j->err = -ENOMEM;
		return;
	}
	rep->kernel_warnings = nw;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&nw[rep->n_kernel_warnings], fmt, ap);
	va_end(ap);
	if (n < 0)
		j->err = -ENOMEM;
	else
		rep->n_kernel_warnings++;
}

/* A build's kernelrelease: the job's builds, else the table; "" if unknown. */
static void release_of(struct join *j, int64_t id, char *buf, size_t len)
{
	buf[0] = 0;
	for (size_t v = 0; v < j->rep->n_variants; v++)
		if (j->rep->kernels[v].found && j->rep->kernels[v].build_id == id) {
			snprintf(buf, len, "%s", j->rep->kernels[v].kernelrelease);
			return;
		}
	struct store_build b = { 0 };
	if (id > 0 && store_build_get(j->st, id, &b) == 0)
		snprintf(buf, len, "%s", b.kernelrelease);
	store_build_clear(&b);
}

/* The job's build whose kernel has this release; 0: none. */
static int64_t build_with_release(const struct join *j, const char *release)
{
	for (size_t v = 0; release[0] && v < j->rep->n_variants; v++)
		if (j->rep->kernels[v].found && strcmp(j->rep->kernels[v].kernelrelease, release) == 0)
			return j->rep->kernels[v].build_id;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct boot_key *x = a, *y = b;
	int c = strcmp(x->boot_id, y->boot_id);
	return c ? c : (x->row > y->row) - (x->row < y->row);
}

static int step_cmp(const void *a, const void *b)
{
	const struct store_step *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Steps by id, boots by boot id: a job has up to 50000 runs to look up. */
static int index_boots_steps(struct join *j)
{
	if (!(j->keys = malloc((j->nb ? j->nb : 1) * sizeof(*j->keys))))
		return -ENOMEM;
	for (size_t i = 0; i < j->nb; i++)
		if (j->boots[i].boot_id[0])
			j->keys[j->n_keys++] = (struct boot_key){ .boot_id = j->boots[i].boot_id, .row = (long)i };
	qsort(j->keys, j->n_keys, sizeof(*j->keys), key_cmp);
	qsort(j->steps, j->ns, sizeof(*j->steps), step_cmp);
	return 0;
}

/* The first boots row whose boot is boot_id; -1: none. */
static long find_row(const struct join *j, const char *boot_id)
{
	size_t lo = 0, hi = j->n_keys;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(j->keys[mid].boot_id, boot_id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < j->n_keys && strcmp(j->keys[lo].boot_id, boot_id) == 0 ? j->keys[lo].row : -1;
}

static const struct store_step *find_step(const struct join *j, int64_t id)
{
	struct store_step key = { .id = id };
	return bsearch(&key, j->steps, j->ns, sizeof(*j->steps), step_cmp);
}

static long boot_add(struct join *j, size_t variant, int slot, const char *boot_id, int64_t build, const char *release)
{
	struct report *rep = j->rep;
	struct report_boot *nb = realloc(rep->run_boots, (rep->n_run_boots + 1) * sizeof(*nb));
	if (!nb) {
		j->err = -ENOMEM;
		return -1;
	}
	rep->run_boots = nb;
	struct report_boot *b = &nb[rep->n_run_boots];
	*b = (struct report_boot){ .variant = variant, .slot = slot, .build_id = build };
	snprintf(b->boot_id, sizeof(b->boot_id), "%s", boot_id);
	snprintf(b->kernel_release, sizeof(b->kernel_release), "%s", release);
	return (long)rep->n_run_boots++;
}

/* The run_boots entry of a boot the job did not record, by boot id and the run's variant. */
static long unrecorded_boot(struct join *j, const struct report_run *run)
{
	for (size_t i = 0; i < j->rep->n_run_boots; i++) {
		const struct report_boot *b = &j->rep->run_boots[i];
		if (b->slot < 0 && b->variant == (size_t)run->variant && strcmp(b->boot_id, run->boot_id) == 0)
			return (long)i;
	}
	return boot_add(j, (size_t)run->variant, -1, run->boot_id, j->rep->kernels[run->variant].build_id,
			run->kernel_release);
}

/* The boots to list: those that came up and those that held a run, in
 * the order they happened. */
static void recorded_boots(struct join *j)
{
	for (size_t i = 0; i < j->nb && j->err == 0; i++) {
		const struct store_boot *b = &j->boots[i];
		/* a boot that did not come up but held runs (it must not) is listed too */
		bool used = b->status == BOOT_OK;
		for (size_t k = 0; k < j->nr && !used; k++)
			used = b->boot_id[0] && find_row(j, j->runs[k].boot_id) == (long)i;
		if (used && b->variant >= 0 && (size_t)b->variant < j->rep->n_variants)
			j->entry[i] = boot_add(j, (size_t)b->variant, b->slot, b->boot_id, b->build_id, b->kernel_release);
	}
}

/* A boot of a build other than its variant's. */
static void check_boot(struct join *j, const struct store_boot *b)
{
	const struct report_kernel *k = &j->rep->kernels[b->variant];
	if (b->status == BOOT_OK && k->build_id > 0 && b->build_id != k->build_id)
		warn(j, "boot %d of the plan (variant %s) booted build %lld, not the variant's build %lld", b->slot + 1,
		     j->rep->variants[b->variant], (long long)b->build_id, (long long)k->build_id);
}

/* "build 2's kernel (6.1.192-kab2)" or "kernel 6.1.0-9-amd64". */
static void kernel_words(const struct join *j, const char *release, char *buf, size_t len)
{
	int64_t other = build_with_release(j, release);
	if (other > 0)
		snprintf(buf, len, "build %lld's kernel (%s)", (long long)other, release);
	else
		snprintf(buf, len, "kernel %s", release[0] ? release : "(none recorded)");
}

/* Whether the run was in a boot of its own variant, planned for it. */
static bool check_run_boot(struct join *j, const struct report_run *run, const struct store_boot *b, const char *vname)
{
	bool wrong = false;
	char on[256];
	if ((size_t)b->variant != (size_t)run->variant) {
		kernel_words(j, run->kernel_release, on, sizeof(on));
		warn(j, "run %lld of variant %s ran on %s: boot %d of the plan was a boot of variant %s", (long long)run->id,
		     vname, on, b->slot + 1, j->rep->variants[b->variant]);
		wrong = true;
	}
	if (b->status != BOOT_OK) {
		warn(j, "run %lld of variant %s ran in boot %d of the plan, which is recorded %s", (long long)run->id, vname,
		     b->slot + 1, boot_status_name(b->status));
		wrong = true;
	}
	const struct store_step *step = find_step(j, run->step_id);
	if (step && step->boot >= 0 && step->boot != b->slot) {
		warn(j, "run %lld of variant %s was planned for boot %d of the plan but ran in boot %d", (long long)run->id,
		     vname, step->boot + 1, b->slot + 1);
		wrong = true;
	}
	return wrong;
}

/* Whether the run's kernel is the build its boot booted (its variant's
 * when the boot is not recorded): its release and kab.build= marker. */
static bool check_run_kernel(struct join *j, const struct report_run *run, int64_t expect, const char *vname)
{
	bool wrong = false;
	char want[128], on[256];
	release_of(j, expect, want, sizeof(want));
	if (want[0] && strcmp(run->kernel_release, want) != 0) {
		kernel_words(j, run->kernel_release, on, sizeof(on));
		warn(j, "run %lld of variant %s ran on %s, not on build %lld's (%s)", (long long)run->id, vname, on,
		     (long long)expect, want);
		wrong = true;
	}
	if (run->marker > 0 && expect > 0 && run->marker != expect) {
		warn(j, "run %lld of variant %s ran on a kernel command line marked " KEXEC_MARKER "%lld, not build %lld",
		     (long long)run->id, vname, (long long)run->marker, (long long)expect);
		wrong = true;
	}
	return wrong;
}

static void run_add(struct join *j, struct report_boot *b, const struct report_run *run, bool wrong)
{
	struct report_boot_run *nr = realloc(b->runs, (b->n_runs + 1) * sizeof(*nr));
	if (!nr) {
		j->err = -ENOMEM;
		return;
	}
	b->runs = nr;
	struct report_boot_run *x = &nr[b->n_runs++];
	*x = (struct report_boot_run){ .id = run->id, .workload = run->workload >= 0 ? (size_t)run->workload : SIZE_MAX,
				       .pair = run->pair, .wrong = wrong };
	x->status = run->status;
	snprintf(x->kernel_release, sizeof(x->kernel_release), "%s", run->kernel_release);
}

static void join_run(struct join *j, const struct report_run *run)
{
	const char *vname = j->rep->variants[run->variant];
	long row = find_row(j, run->boot_id);
	const struct store_boot *b = row >= 0 ? &j->boots[row] : NULL;
	bool wrong = true;
	long e;
	if (b && j->entry[row] >= 0) {
		e = j->entry[row];
		wrong = check_run_boot(j, run, b, vname);
	} else if (b) {
		warn(j, "run %lld of variant %s ran in boot %d of the plan, a boot of variant index %d, which the job does not have",
		     (long long)run->id, vname, b->slot + 1, b->variant);
		b = NULL;
		e = unrecorded_boot(j, run);
	} else {
		warn(j, "run %lld of variant %s ran in boot %.8s, which is none of the job's recorded boots", (long long)run->id,
		     vname, run->boot_id[0] ? run->boot_id : "(none recorded)");
		e = unrecorded_boot(j, run);
	}
	int64_t expect = b ? b->build_id : j->rep->kernels[run->variant].build_id;
	wrong = check_run_kernel(j, run, expect, vname) || wrong;
	if (e >= 0 && j->err == 0)
		run_add(j, &j->rep->run_boots[e], run, wrong);
}

/* Stable: boots stay in the order they happened within a variant. */
static void group_by_variant(struct report *rep)
{
	for (size_t i = 1; i < rep->n_run_boots; i++) {
		struct report_boot x = rep->run_boots[i];
		size_t k = i;
		while (k > 0 && rep->run_boots[k - 1].variant > x.variant) {
			rep->run_boots[k] = rep->run_boots[k - 1];
			k--;
		}
		rep->run_boots[k] = x;
	}
}

static int join_runs(struct join *j)
{
	if (!(j->entry = malloc((j->nb ? j->nb : 1) * sizeof(*j->entry))) || index_boots_steps(j) < 0) {
		free(j->entry);
		return -ENOMEM;
	}
	for (size_t i = 0; i < j->nb; i++)
		j->entry[i] = -1;
	recorded_boots(j);
	for (size_t i = 0; i < j->nb && j->err == 0; i++)
		if (j->entry[i] >= 0)
			check_boot(j, &j->boots[i]);
	for (size_t i = 0; i < j->nr && j->err == 0; i++)
		if (j->runs[i].variant >= 0 && (size_t)j->runs[i].variant < j->rep->n_variants)
			join_run(j, &j->runs[i]);
	free(j->entry);
	free(j->keys);
	if (j->err == 0 && j->n_warnings > WARNINGS_MAX) {
		size_t more = j->n_warnings - WARNINGS_MAX;
		j->n_warnings = 0; /* lets this one line through */
		warn(j, "... and %zu more like these (the JSON's runs_by_boot marks every such run wrong_kernel)", more);
	}
	if (j->err == 0)
		group_by_variant(j->rep);
	return j->err;
}

int report_load_boots(struct store *st, struct report *rep, const struct report_run *runs, size_t nr)
{
	struct store_boot *boots = NULL;
	struct store_step *steps = NULL;
	size_t nb = 0, ns = 0;
	int r = store_boots_load(st, rep->job_id, &boots, &nb);
	if (r == 0)
		r = store_steps_load(st, rep->job_id, &steps, &ns);
	if (r == 0)
		r = load_kernels(st, rep, boots, nb);
	if (r == 0)
		r = add_boots(st, rep, boots, nb, steps, ns);
	if (r == 0) {
		struct join j = { .st = st, .rep = rep, .boots = boots, .nb = nb, .steps = steps, .ns = ns,
				  .runs = runs, .nr = nr };
		r = join_runs(&j);
	}
	free(boots);
	free(steps);
	return r;
}
