/* Job files: from collected sections to a struct job, from the text
 * alone (job_check.c then looks at the machine).
 *
 * Each entry goes through the key table (job_keys.c), which parses its
 * value; here are what the keys of a section mean together, knob keys
 * ("sysctl NAME", "sysfs PATH"), a workload type's own keys (from its
 * wl_ops), and what the sections mean together. Every problem is
 * reported and parsing goes on, so one run of `kab check` shows them all.
 */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"
#include "workloads/wl.h"
#include "kernels/series.h"
#include "db/lab.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* What a section's keys turned out to be: line 0 when absent. */
struct seen {
	int line;
	bool ok;
};

#define ERR(b, line, ...) diags_add((b)->d, (b)->file, (line), __VA_ARGS__)

/* "[variant A]" for messages. */
static const char *sec_title(const struct job_section *s, char *buf, size_t len)
{
	snprintf(buf, len, "[%s%s%s]", job_section_name(s->kind), s->label ? " " : "", s->label ? s->label : "");
	return buf;
}

/* expect.VARIANT = ...: the variant is checked once all are read */
static bool workload_expect_variant(struct job_builder *b, const struct job_section *s, const struct job_entry *e,
				    struct job_workload *w)
{
	const char *variant = e->key + strlen("expect.");
	char title[128];
	sec_title(s, title, sizeof(title));
	if (!job_valid_name(variant)) {
		ERR(b, e->line, "bad key \"%s\" in %s: expect.VARIANT names a variant, e.g. expect.zswap-on", e->key, title);
		return true;
	}
	if (!e->broken && !*e->value) {
		ERR(b, e->line, "empty value for \"%s\" in %s", e->key, title);
		return true;
	}
	if (!e->broken)
		job_parse_expect(b, e, variant, &w->expect, &w->n_expect);
	return true;
}

/* Each expect.VARIANT names one of the job's variants. */
static void check_expect_variants(struct job_builder *b)
{
	struct job *j = b->j;
	for (size_t wi = 0; wi < j->n_workloads; wi++)
		for (size_t i = 0; i < j->workloads[wi].n_expect; i++) {
			const struct job_expect *x = &j->workloads[wi].expect[i];
			if (!x->variant || (i > 0 && j->workloads[wi].expect[i - 1].variant &&
					    strcmp(j->workloads[wi].expect[i - 1].variant, x->variant) == 0))
				continue;
			bool found = false;
			struct strbuf names = { 0 };
			const char *vnames[JOB_VARIANTS_MAX];
			size_t nv = 0;
			for (size_t v = 0; v < j->n_variants; v++) {
				found = found || (j->variants[v].name && strcmp(j->variants[v].name, x->variant) == 0);
				sb_printf(&names, "%s%s", v ? ", " : "", j->variants[v].name ? j->variants[v].name : "?");
				if (j->variants[v].name && nv < JOB_VARIANTS_MAX)
					vnames[nv++] = j->variants[v].name;
			}
			const char *hint = found ? NULL : util_did_you_mean(x->variant, vnames, nv);
			if (!found && hint)
				ERR(b, x->line, "expect.%s: the job has no variant named \"%s\" (did you mean \"%s\"? variants: %s)",
				    x->variant, x->variant, hint, names.buf ? names.buf : "none");
			else if (!found)
				ERR(b, x->line, "expect.%s: the job has no variant named \"%s\" (variants: %s)", x->variant, x->variant,
				    names.buf ? names.buf : "none");
			sb_free(&names);
		}
}

static void note_hint(struct job_builder *b, const char *hint)
{
	if (b->n_hinted < ARRAY_SIZE(b->hinted))
		b->hinted[b->n_hinted++] = hint;
}

static bool was_hinted(const struct job_builder *b, const char *key)
{
	for (size_t i = 0; i < b->n_hinted; i++)
		if (strcmp(b->hinted[i], key) == 0)
			return true;
	return false;
}

static void unknown_key(struct job_builder *b, const struct job_section *s, const struct job_entry *e)
{
	if (diags_full(b->d)) {
		/* only counted: no hint to compute */
		ERR(b, e->line, "unknown key");
		return;
	}
	/* the keys a hint may point to, and those the message lists (with
	 * keys read elsewhere: sysctl NAME, sysfs PATH) */
	const char *cands[64], *listed[64];
	size_t n = 0, n_listed = 0;
	for (size_t i = 0; i < job_n_keys && n_listed < ARRAY_SIZE(listed); i++) {
		const struct job_keydef *k = &job_keydefs[i];
		if (k->sec != s->kind)
			continue;
		if (k->type != KT_DOC)
			cands[n++] = k->name;
		if (!(k->flags & KF_UNLISTED))
			listed[n_listed++] = k->name;
	}
	for (size_t i = 0; i < b->n_extra && n_listed < ARRAY_SIZE(listed); i++)
		cands[n++] = listed[n_listed++] = b->extra[i];
	char title[128], list[512], fixed[512];
	sec_title(s, title, sizeof(title));

	/* "sysclt vm.x": suggest the whole corrected key. */
	const char *sp = strpbrk(e->key, " \t");
	if (s->kind == JOB_SEC_VARIANT && sp) {
		static const char *const kinds[] = { "sysctl", "sysfs" };
		char word[64];
		size_t wl = (size_t)(sp - e->key);
		if (wl < sizeof(word)) {
			memcpy(word, e->key, wl);
			word[wl] = 0;
			const char *hint = util_did_you_mean(word, kinds, ARRAY_SIZE(kinds));
			if (hint) {
				snprintf(fixed, sizeof(fixed), "%s%s", hint, sp);
				ERR(b, e->line, "unknown key \"%s\" in %s (did you mean \"%s\"?)", e->key, title, fixed);
				return;
			}
		}
	}
	const char *hint = util_did_you_mean(e->key, cands, n);
	if (hint) {
		ERR(b, e->line, "unknown key \"%s\" in %s (did you mean \"%s\"?)", e->key, title, hint);
		note_hint(b, hint);
		return;
	}
	job_join_list(listed, n_listed, list, sizeof(list));
	ERR(b, e->line, "unknown key \"%s\" in %s (keys: %s)", e->key, title, list);
}

/* Hook for keys not in job_keydefs: returns false if it does not know key. */
typedef bool (*extra_key_fn)(struct job_builder *b, const struct job_section *s, const struct job_entry *e, void *obj);

/* Applies a section's entries to obj; fills seen[] for job_keydefs. */
static void apply_entries(struct job_builder *b, const struct job_section *s, void *obj, struct seen *seen,
			  extra_key_fn extra)
{
	char title[128];
	sec_title(s, title, sizeof(title));
	for (size_t i = 0; i < s->n; i++) {
		const struct job_entry *e = &s->v[i];
		int ki = job_key_index(s->kind, e->key);
		if (ki < 0) {
			if (!extra || !extra(b, s, e, obj))
				unknown_key(b, s, e);
			continue;
		}
		const struct job_keydef *k = &job_keydefs[ki];
		if (seen[ki].line) {
			ERR(b, e->line, "duplicate key \"%s\" in %s (first at line %d)", e->key, title, seen[ki].line);
			continue;
		}
		seen[ki].line = e->line;
		if (k->off_line)
			*(int *)((char *)obj + k->off_line) = e->line;
		if (e->broken)
			continue;
		if (e->cont_line && !(k->flags & KF_MULTILINE)) {
			ERR(b, e->cont_line, "indented line continues \"%s\" (line %d), which takes one line: remove the leading whitespace",
			    e->key, e->line);
			continue;
		}
		if (!*e->value) {
			ERR(b, e->line, "empty value for \"%s\" in %s", e->key, title);
			continue;
		}
		seen[ki].ok = job_key_set(b, k, e, obj);
	}
	for (size_t i = 0; i < job_n_keys; i++)
		if (job_keydefs[i].sec == s->kind && (job_keydefs[i].flags & KF_REQUIRED) && !seen[i].line &&
		    !was_hinted(b, job_keydefs[i].name)) {
			if (job_keydefs[i].type == KT_TYPE) {
				char types[256];
				job_list_types(types, sizeof(types));
				ERR(b, s->line, "missing required key \"%s\" in %s (types: %s)", job_keydefs[i].name, title, types);
			} else {
				ERR(b, s->line, "missing required key \"%s\" in %s", job_keydefs[i].name, title);
			}
		}
}

/* archive: an https:// URL, or a local directory (relative to the job
 * file); plain http and other schemes are refused. */
static void check_archive(struct job_builder *b)
{
	struct job *j = b->j;
	if (!j->archive)
		return;
	if (!strstr(j->archive, "://") && j->archive[0] != '/') {
		char *abs = job_source_path(b, j->archive);
		if (!abs) {
			b->oom = true;
			return;
		}
		free(j->archive);
		j->archive = abs;
	}
	char why[1024];
	if (!kseries_archive_ok(j->archive, why, sizeof(why)))
		ERR(b, j->archive_line, "%s", why);
}

/* lab.on: a selector the lab takes (db/lab.h), said at its line */
static void check_lab_on(struct job_builder *b)
{
	struct job *j = b->j;
	if (!j->lab_on)
		return;
	struct lab_selector sel;
	struct strbuf why = { 0 };
	if (lab_selector_parse(j->lab_on, &sel, &why) < 0)
		ERR(b, j->lab_on_line, "lab.on: %s", why.buf ? why.buf : "not a lab selector");
	sb_free(&why);
}

void job_check_sampler_overlap(const char *file, const struct job_condition *c, struct diags *d)
{
	bool mask[JOB_CPUS_MAX] = { 0 };
	const char *why = NULL;
	if (c->sampler_cpu < 0 || !c->cpus || job_parse_cpus(c->cpus, mask, &why) < 0 || !mask[c->sampler_cpu])
		return;
	diags_add(d, file, c->sampler_cpu_line,
		  "sampler_cpu = %d is one of cpus = %s: the sampler goes off the workload's CPUs; pick another", c->sampler_cpu,
		  c->cpus);
}

/* [job]'s conditioning keys, each together (job_check_machine checks
 * them against the machine: kab check runs where the job runs). */
static void check_condition(struct job_builder *b, const struct seen *seen)
{
	struct job_condition *c = &b->j->cond;
	const struct seen *idle_max = &seen[JK_JOB_WAIT_IDLE_MAX];
	if (idle_max->line && !c->wait_idle_line)
		ERR(b, idle_max->line, "wait_idle_max bounds wait_idle: give wait_idle = PERCENT too (wait_idle = 10%%)");
	if (c->cpus) {
		bool mask[JOB_CPUS_MAX] = { 0 };
		const char *why = NULL;
		if (job_parse_cpus(c->cpus, mask, &why) < 0)
			ERR(b, c->cpus_line, "bad cpus \"%s\": %s", c->cpus, why);
	}
	/* with the machine checks, after cpus is found to fit the machine */
	if (!b->notes)
		job_check_sampler_overlap(b->file, c, b->d);
}

static void build_job_section(struct job_builder *b, const struct job_section *s)
{
	struct seen seen[JOB_N_KEYS_MAX] = { 0 };
	apply_entries(b, s, b->j, seen, NULL);
	const struct seen *seed = &seen[JK_JOB_SEED];
	const struct seen *order = &seen[JK_JOB_ORDER];
	if (seed->line && order->ok && b->j->order != JOB_ORDER_RANDOM)
		ERR(b, seed->line, "seed applies only to order = random");
	if (seed->line && !order->line)
		ERR(b, seed->line, "seed applies only to order = random (the default order is abba)");
	const struct seen *pairs = &seen[JK_JOB_PAIRS];
	const struct seen *primary = &seen[JK_JOB_PRIMARY];
	if (pairs->ok && b->j->adaptive.on && !primary->line)
		ERR(b, pairs->line, "pairs = adaptive stops when every primary metric is decided: name them with primary = METRIC ... in [job]");
	const struct seen *boots = &seen[JK_JOB_BOOTS];
	if (boots->line && pairs->line)
		ERR(b, boots->line, "give boots or pairs, not both: with kernel variants a pair is one boot of each variant");
	b->pairs_line = boots->line ? boots->line : pairs->line ? pairs->line : s->line;
	for (size_t i = 0; i < job_n_keys; i++)
		b->job_key_line[i] = seen[i].line;
	check_archive(b);
	check_lab_on(b);
	check_condition(b, seen);
}

/* [metric NAME]: report settings for a metric or a prefix of them. */
static void build_metric_section(struct job_builder *b, const struct job_section *s)
{
	struct job *j = b->j;
	struct job_metric *nm = realloc(j->metric_settings, (j->n_metric_settings + 1) * sizeof(*nm));
	if (!nm) {
		b->oom = true;
		return;
	}
	j->metric_settings = nm;
	struct job_metric *m = &j->metric_settings[j->n_metric_settings++];
	*m = (struct job_metric){ .name = strdup(s->label), .line = s->line };
	job_keys_init(b, JOB_SEC_METRIC, m);
	if (!m->name)
		b->oom = true;
	if (!job_valid_metric(s->label))
		ERR(b, s->line, "bad metric \"%s\" in [metric %s]: expected SOURCE.NAME or SOURCE.PREFIX*, e.g. stress-ng.bogo_ops_per_s or vmstat.pgscan_*",
		    s->label, s->label);
	struct seen seen[JOB_N_KEYS_MAX] = { 0 };
	apply_entries(b, s, m, seen, NULL);
	if (s->n == 0)
		ERR(b, s->line, "[metric %s] sets nothing: give it direction, unit, min_change, equivalence, label or ratio, or remove it",
		    s->label);
	int ratio_line = s->line;
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].key, "ratio") == 0)
			ratio_line = s->v[i].line;
	if (m->ratio && m->name && job_parse_ratio(b->file, ratio_line, m, b->d) == -ENOMEM)
		b->oom = true;
	else if (!m->ratio && m->name && strncmp(m->name, "ratio.", 6) == 0)
		ERR(b, s->line, "[metric %s] names a ratio: give it ratio = METRIC / METRIC, e.g. ratio = interrupts.TLB / vmstat.pswpout",
		    s->label);
}

/* [swap] zswap = on, zswap.shrinker = on, …: sysfs knobs of the zswap
 * module (the keys with a param), applied for the whole job like a
 * variant's knobs, in the table's order. */
static void swap_zswap_knobs(struct job_builder *b, struct job_swap *sw, const struct seen *seen)
{
	for (size_t i = 0; i < job_n_keys; i++) {
		const struct job_keydef *k = &job_keydefs[i];
		struct strbuf value = { 0 };
		if (k->sec != JOB_SEC_SWAP || !k->param || !seen[i].ok || !job_key_format(k, sw, &value)) {
			sb_free(&value);
			continue;
		}
		/* an enum's choice is written as the parameter takes it */
		const char *v = k->param_values ? k->param_values[*(const int *)((const char *)sw + k->off)] : value.buf;
		char path[128];
		snprintf(path, sizeof(path), JOB_ZSWAP_PARAMS "%s", k->param);
		struct job_knob *nk = realloc(sw->knobs, (sw->n_knobs + 1) * sizeof(*nk));
		if (!nk) {
			sb_free(&value);
			b->oom = true;
			return;
		}
		sw->knobs = nk;
		struct job_knob *kn = &nk[sw->n_knobs];
		*kn = (struct job_knob){
			.kind = JOB_KNOB_SYSFS, .name = strdup(path), .path = strdup(path), .value = strdup(v), .line = seen[i].line
		};
		sb_free(&value);
		if (!kn->name || !kn->path || !kn->value)
			b->oom = true;
		sw->n_knobs++;
	}
}

static void build_swap_section(struct job_builder *b, const struct job_section *s)
{
	struct job_swap *sw = &b->j->swap;
	struct seen seen[JOB_N_KEYS_MAX] = { 0 };
	size_t d0 = diags_count(b->d);
	sw->line = s->line;
	apply_entries(b, s, sw, seen, NULL);
	if (!seen[JK_SWAP_DEVICE].ok)
		return;
	const char *dev = job_swap_kind_name(sw->kind);
	bool sized = sw->kind == JOB_SWAP_ZRAM || sw->kind == JOB_SWAP_FILE;
	const struct seen *size = &seen[JK_SWAP_SIZE];
	const struct seen *path = &seen[JK_SWAP_PATH];
	const struct seen *alg = &seen[JK_SWAP_ALGORITHM];
	const struct seen *prio = &seen[JK_SWAP_PRIORITY];
	if (sized && !size->line)
		ERR(b, s->line, "missing required key \"size\" in [swap]: device = %s needs a size, e.g. size = 2G", dev);
	if (!sized && size->line)
		ERR(b, size->line, "size applies only to device = zram or file, not %s", dev);
	if (path->line && sw->kind != JOB_SWAP_FILE)
		ERR(b, path->line, "path applies only to device = file, not %s", dev);
	if (alg->line && sw->kind != JOB_SWAP_ZRAM)
		ERR(b, alg->line, "algorithm applies only to device = zram, not %s", dev);
	if (prio->line && !sized)
		ERR(b, prio->line, "priority applies only to device = zram or file, not %s", dev);
	/* no path: the executor makes a fresh file in the job's own directory */
	if (b->notes) {
		b->notes->swap_clean = diags_count(b->d) == d0;
		b->notes->swap_path_line = path->line ? path->line : s->line;
		b->notes->swap_algorithm_line = alg->line;
	}
	swap_zswap_knobs(b, sw, seen);
}

static bool variant_knob(struct job_builder *b, const struct job_section *s, const struct job_entry *e, void *obj)
{
	struct job_variant *v = obj;
	struct job_knob k;
	int r = job_knob_parse(b->file, e, &k, b->d);
	if (r == 1)
		return false;
	if (r == -ENOMEM)
		b->oom = true;
	if (r < 0)
		return true;
	if (v->n_knobs >= JOB_KNOBS_MAX) {
		/* counted, reported once by build_variant */
		if (!b->knobs_over++)
			b->knobs_over_line = e->line;
		job_knob_clear(&k);
		return true;
	}
	for (size_t i = 0; i < v->n_knobs; i++)
		if (strcmp(v->knobs[i].path, k.path) == 0) {
			char title[128];
			ERR(b, e->line, "%s sets %s twice (first at line %d)", sec_title(s, title, sizeof(title)), k.path,
			    v->knobs[i].line);
			job_knob_clear(&k);
			return true;
		}
	struct job_knob *nk = realloc(v->knobs, (v->n_knobs + 1) * sizeof(*nk));
	if (!nk) {
		job_knob_clear(&k);
		b->oom = true;
		return true;
	}
	v->knobs = nk;
	v->knobs[v->n_knobs++] = k;
	char key[4096];
	snprintf(key, sizeof(key), "%s %s", k.kind == JOB_KNOB_SYSCTL ? "sysctl" : "sysfs", k.name);
	job_key_fits(b, e->line, key, k.value, false);
	return true;
}

/* kernel = build needs tree and base, or the build = ID of one recorded
 * earlier, which fixed them; kernel = image an image; running takes none
 * of the keys of a kernel of its own. */
static void check_build_keys(struct job_builder *b, const struct job_section *s, struct job_variant *v, const struct seen *seen)
{
	/* what a build's inputs are, and so what a recorded build fixed */
	static const enum job_key_id input_keys[] = { JK_VARIANT_TREE,   JK_VARIANT_BASE,   JK_VARIANT_TRACK,
						      JK_VARIANT_SERIES, JK_VARIANT_CONFIG, JK_VARIANT_FRAGMENT };
	static const enum job_key_id own_keys[] = { JK_VARIANT_IMAGE, JK_VARIANT_INITRD, JK_VARIANT_CMDLINE };
	char title[128];
	sec_title(s, title, sizeof(title));
	const char *kernel = v->kernel ? v->kernel : "running";
	bool build = strcmp(kernel, "build") == 0, image = strcmp(kernel, "image") == 0;
	const struct seen *recorded = &seen[JK_VARIANT_BUILD];
	for (size_t i = 0; i < ARRAY_SIZE(input_keys) && !build; i++) {
		const struct seen *k = &seen[input_keys[i]];
		if (k->line)
			ERR(b, k->line, "%s applies only to kernel = build, not kernel = %s", job_keydefs[input_keys[i]].name, kernel);
	}
	if (recorded->line && !build)
		ERR(b, recorded->line, "build applies only to kernel = build, not kernel = %s: it names a kernel kab built earlier (kab builds lists them)",
		    kernel);
	for (size_t i = 0; i < ARRAY_SIZE(own_keys) && !build && !image; i++) {
		const struct seen *k = &seen[own_keys[i]];
		if (k->line)
			ERR(b, k->line, "%s applies only to a variant that boots its own kernel (kernel = build or image), not kernel = running",
			    job_keydefs[own_keys[i]].name);
	}
	if (v->cmdline && (strchr(v->cmdline, '\'') || strchr(v->cmdline, '"')))
		ERR(b, v->cmdline_line, "bad cmdline: quotes are not passed on to the kernel as written; give plain parameters");
	const struct seen *kline = &seen[JK_VARIANT_KERNEL];
	size_t vi = (size_t)(v - b->j->variants);
	if (b->notes && vi < ARRAY_SIZE(b->notes->variant)) {
		b->notes->variant[vi].kernel_line = kline->line;
		b->notes->variant[vi].tree_ok = seen[JK_VARIANT_TREE].ok;
	}
	if (image) {
		if (seen[JK_VARIANT_IMAGE].line == 0)
			ERR(b, kline->line, "missing required key \"image\" in %s: kernel = image needs the kernel image to boot (image = /boot/vmlinuz-6.1.0-57-amd64)",
			    title);
		return;
	}
	if (!build)
		return;
	if (seen[JK_VARIANT_IMAGE].line)
		ERR(b, seen[JK_VARIANT_IMAGE].line, "image applies only to kernel = image: kernel = build %s",
		    recorded->line ? "boots the image of the build it names" : "makes its own");
	for (size_t i = 0; i < ARRAY_SIZE(input_keys) && recorded->line; i++) {
		const struct seen *k = &seen[input_keys[i]];
		const char *name = job_keydefs[input_keys[i]].name;
		if (k->line)
			ERR(b, k->line, "%s does not go with build (line %d): a recorded build's tree, base, series and config were fixed when it was built; remove %s, or remove build to build anew",
			    name, recorded->line, name);
	}
	if (!recorded->line && !seen[JK_VARIANT_TREE].line)
		ERR(b, kline->line, "missing required key \"tree\" in %s: kernel = build needs the git tree to build (tree = /path/to/linux), or the build = ID of one kab built earlier", title);
	const struct seen *base = &seen[JK_VARIANT_BASE], *track = &seen[JK_VARIANT_TRACK];
	if (!recorded->line && !base->line && !track->line)
		ERR(b, kline->line, "missing required key \"base\" in %s: kernel = build needs the ref to build (base = v6.1), or a branch to follow (track = origin master)",
		    title);
	if (!recorded->line && base->line && track->line)
		ERR(b, track->line, "track does not go with base (line %d): a tracked variant builds the branch's head as each run finds it; remove base, or remove track to build a fixed base",
		    base->line);
	if (!recorded->line && !v->config && !(v->config = strdup("running")))
		b->oom = true;
}

static void build_variant(struct job_builder *b, const struct job_section *s, struct util_strmap *names)
{
	struct job *j = b->j;
	struct job_variant *nv = realloc(j->variants, (j->n_variants + 1) * sizeof(*nv));
	if (!nv) {
		b->oom = true;
		return;
	}
	j->variants = nv;
	struct job_variant *v = &j->variants[j->n_variants++];
	*v = (struct job_variant){ .line = s->line, .label = strdup(s->label) };
	job_keys_init(b, JOB_SEC_VARIANT, v);
	if (!v->label)
		b->oom = true;
	if (!job_valid_name(s->label))
		job_bad_name(b, s->line, "variant label", s->label);

	struct seen seen[JOB_N_KEYS_MAX] = { 0 };
	b->knobs_over = 0;
	apply_entries(b, s, v, seen, variant_knob);
	if (b->knobs_over)
		ERR(b, b->knobs_over_line,
		    "too many knobs in [variant %s] (%zu, at most %u): this is the first over the budget; set only the knobs the comparison is about (doc/jobs.md, \"Budgets\")",
		    s->label, v->n_knobs + b->knobs_over, JOB_KNOBS_MAX);
	if (!v->name && !(v->name = strdup(s->label)))
		b->oom = true;
	check_build_keys(b, s, v, seen);
	if (!v->name)
		return;
	const struct seen *name = &seen[JK_VARIANT_NAME];
	int first;
	int r = util_strmap_put(names, v->name, (int)(j->n_variants - 1), &first);
	if (r < 0)
		b->oom = true;
	else if (r == 1)
		ERR(b, name->line ? name->line : s->line, "duplicate variant name \"%s\" (also the name of [variant %s] at line %d)",
		    v->name, j->variants[first].label, j->variants[first].line);
}

static bool is_extra_key(const struct job_builder *b, const char *key)
{
	for (size_t i = 0; i < b->n_extra; i++)
		if (strcmp(b->extra[i], key) == 0)
			return true;
	return false;
}

/* A key of the workload's type. The type is looked up before the keys are
 * read (build_workload), so these are checked like the common ones. */
static bool workload_param(struct job_builder *b, const struct job_section *s, const struct job_entry *e, void *obj)
{
	struct job_workload *w = obj;
	char title[128];
	sec_title(s, title, sizeof(title));
	if (strncmp(e->key, "expect.", 7) == 0)
		return workload_expect_variant(b, s, e, w);
	if (b->n_extra && !is_extra_key(b, e->key))
		return false;
	if (!b->n_extra) {
		/* Unknown type: a key close to a common one is surely a typo. */
		const char *common[JOB_N_KEYS_MAX];
		size_t n = 0;
		for (size_t i = 0; i < job_n_keys; i++)
			if (job_keydefs[i].sec == JOB_SEC_WORKLOAD)
				common[n++] = job_keydefs[i].name;
		if (util_did_you_mean(e->key, common, n))
			return false;
	}
	for (size_t i = 0; i < w->n_params; i++)
		if (strcmp(w->params[i].key, e->key) == 0) {
			ERR(b, e->line, "duplicate key \"%s\" in %s (first at line %d)", e->key, title, w->params[i].line);
			return true;
		}
	if (!e->broken && !*e->value)
		ERR(b, e->line, "empty value for \"%s\" in %s", e->key, title);
	else if (!e->broken)
		job_key_fits(b, e->line, e->key, e->value, true);
	struct job_param *np = realloc(w->params, (w->n_params + 1) * sizeof(*np));
	if (!np) {
		b->oom = true;
		return true;
	}
	w->params = np;
	struct job_param *p = &w->params[w->n_params++];
	*p = (struct job_param){ .key = strdup(e->key), .value = strdup(e->value), .line = e->line };
	if (!p->key || !p->value)
		b->oom = true;
	return true;
}

static void build_workload(struct job_builder *b, const struct job_section *s)
{
	struct job *j = b->j;
	struct job_workload *nw = realloc(j->workloads, (j->n_workloads + 1) * sizeof(*nw));
	if (!nw) {
		b->oom = true;
		return;
	}
	j->workloads = nw;
	struct job_workload *w = &j->workloads[j->n_workloads++];
	*w = (struct job_workload){ .line = s->line, .name = strdup(s->label) };
	job_keys_init(b, JOB_SEC_WORKLOAD, w);
	if (!w->name)
		b->oom = true;
	size_t d0 = diags_count(b->d);
	if (!job_valid_name(s->label))
		job_bad_name(b, s->line, "workload name", s->label);

	const struct wl_ops *ops = NULL;
	for (size_t i = 0; i < s->n && !ops; i++)
		if (strcmp(s->v[i].key, "type") == 0)
			ops = wl_find(s->v[i].value);
	for (const struct wl_key *k = ops ? ops->keys : NULL; k && k->name && b->n_extra < ARRAY_SIZE(b->extra); k++)
		b->extra[b->n_extra++] = k->name;

	struct seen seen[JOB_N_KEYS_MAX] = { 0 };
	apply_entries(b, s, w, seen, workload_param);
	char title[128];
	sec_title(s, title, sizeof(title));
	for (const struct wl_key *k = ops ? ops->keys : NULL; k && k->name; k++)
		if (k->required && !job_param(w, k->name) && !was_hinted(b, k->name))
			ERR(b, s->line, "missing required key \"%s\" in %s: %s", k->name, title, k->help ? k->help : ops->summary);

	if (wl_opts_make(ops, w, &w->opts) == -ENOMEM)
		b->oom = true;

	const struct seen *high = &seen[JK_WORKLOAD_MEMORY_HIGH];
	if (high->ok && seen[JK_WORKLOAD_MEMORY_MAX].ok && w->memory_high != JOB_MEM_MAX &&
	    w->memory_max != JOB_MEM_MAX && w->memory_high > w->memory_max) {
		char hi[32], mx[32];
		util_format_size(w->memory_high, hi, sizeof(hi));
		util_format_size(w->memory_max, mx, sizeof(mx));
		ERR(b, high->line, "memory.high %s is above memory.max %s: it would never throttle", hi, mx);
	}
	size_t wi = j->n_workloads - 1;
	if (b->notes && wi < ARRAY_SIZE(b->notes->workload_clean))
		b->notes->workload_clean[wi] = ops && diags_count(b->d) == d0;
}

/* [report]: how the report shows the job (rows = the cover letter's). */
static void build_report_section(struct job_builder *b, const struct job_section *s)
{
	struct seen seen[JOB_N_KEYS_MAX] = { 0 };
	apply_entries(b, s, b->j, seen, NULL);
}

/* [variant], [workload] and [metric] labels already seen, each with the
 * line of its section: duplicates found in linear time. */
struct labels {
	struct util_strmap of[JOB_SEC_IGNORED];
};

/* The line of an earlier section of s's kind with s's label (0: none),
 * after recording s. */
static int first_with_label(struct job_builder *b, struct labels *seen, const struct job_section *s)
{
	int first = 0;
	if (s->kind != JOB_SEC_VARIANT && s->kind != JOB_SEC_WORKLOAD && s->kind != JOB_SEC_METRIC)
		return 0;
	if (util_strmap_put(&seen->of[s->kind], s->label, s->line, &first) < 0)
		b->oom = true;
	return first;
}

/* pairs x variants x workloads x runs_per_boot, the rows of the schedule. */
static void check_steps_budget(struct job_builder *b)
{
	const struct job *j = b->j;
	uint64_t reps = job_boots_kernels(j) ? j->runs_per_boot : 1;
	uint64_t steps = (uint64_t)j->pairs * j->n_variants * j->n_workloads * reps;
	if (steps <= JOB_STEPS_MAX)
		return;
	ERR(b, b->pairs_line, "the job has %llu runs (%u pairs x %zu variants x %zu workloads x %llu per boot), at most %u: lower pairs, or split the job (doc/jobs.md, \"Budgets\")",
	    (unsigned long long)steps, j->pairs, j->n_variants, j->n_workloads, (unsigned long long)reps, JOB_STEPS_MAX);
}

/* What the walk over the sections found, for the job-wide checks. */
struct walk {
	int job_line, swap_line, report_line; /* of the first of each; 0: none */
	size_t bad_variants, bad_workloads;   /* reported already: counted, so no "needs two" follows */
	bool job_guessed;                     /* a misspelt [job] header, reported */
};

/* Each section into the job, in file order; duplicates and the sections
 * the reader already reported are counted, not built. */
static void build_sections(struct job_builder *b, const struct job_section *secs, size_t n_secs, struct walk *w)
{
	struct labels labels = { 0 };
	struct util_strmap variant_names = { 0 };
	for (size_t i = 0; i < n_secs; i++) {
		const struct job_section *s = &secs[i];
		int first = 0;
		if (s->kind == JOB_SEC_IGNORED) {
			/* [varaint B]: reported; count it so no "needs two variants" follows. */
			w->bad_variants += s->guess == JOB_SEC_VARIANT;
			w->bad_workloads += s->guess == JOB_SEC_WORKLOAD;
			w->job_guessed = w->job_guessed || s->guess == JOB_SEC_JOB;
			continue;
		}
		if (s->unlabeled) {
			w->bad_variants += s->kind == JOB_SEC_VARIANT;
			w->bad_workloads += s->kind == JOB_SEC_WORKLOAD;
			continue;
		}
		if (s->kind == JOB_SEC_JOB || s->kind == JOB_SEC_SWAP || s->kind == JOB_SEC_REPORT) {
			int *line = s->kind == JOB_SEC_JOB ? &w->job_line : s->kind == JOB_SEC_SWAP ? &w->swap_line : &w->report_line;
			first = *line;
			if (!first)
				*line = s->line;
		} else {
			first = first_with_label(b, &labels, s);
		}
		if (first) {
			char title[128];
			ERR(b, s->line, "duplicate section %s (first at line %d)", sec_title(s, title, sizeof(title)), first);
			w->bad_variants += s->kind == JOB_SEC_VARIANT;
			w->bad_workloads += s->kind == JOB_SEC_WORKLOAD;
			continue;
		}
		b->n_extra = b->n_hinted = 0;
		switch (s->kind) {
		case JOB_SEC_JOB: build_job_section(b, s); break;
		case JOB_SEC_SWAP: build_swap_section(b, s); break;
		case JOB_SEC_VARIANT: build_variant(b, s, &variant_names); break;
		case JOB_SEC_WORKLOAD: build_workload(b, s); break;
		case JOB_SEC_METRIC: build_metric_section(b, s); break;
		case JOB_SEC_REPORT: build_report_section(b, s); break;
		case JOB_SEC_IGNORED: break;
		}
	}
	for (size_t k = 0; k < ARRAY_SIZE(labels.of); k++)
		util_strmap_free(&labels.of[k]);
	util_strmap_free(&variant_names);
}

/* Whether a bisection can measure v at each commit of a range (as
 * bisect_ask.c's builds_from_tree): kab builds it from a tree, or it
 * boots recorded builds (build = ID), and each commit's is recorded by a
 * build machine (doc/bisect.md, "A bisection on a lab machine that does
 * not build"). */
static bool job_variant_bisectable(const struct job_variant *v)
{
	return v->kernel && strcmp(v->kernel, "build") == 0 && (v->tree || job_variant_recorded(v));
}

/* bisect.revert and bisect.align rebuild the variant a bisection
 * measures (the last bisectable one, as kab bisect picks it) with a
 * revert or a config fragment: one that boots recorded builds cannot be. */
static void check_bisect_controls(struct job_builder *b)
{
	const struct job *j = b->j;
	const struct job_variant *v = NULL;
	for (size_t i = j->n_variants; i-- > 0 && !v;)
		if (job_variant_bisectable(&j->variants[i]))
			v = &j->variants[i];
	if (!v || !job_variant_recorded(v))
		return;
	static const enum job_key_id keys[] = { JK_JOB_BISECT_REVERT, JK_JOB_BISECT_ALIGN };
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		int line = b->job_key_line[keys[k]];
		bool on = keys[k] == JK_JOB_BISECT_REVERT ? j->bisect_revert : j->bisect_align;
		if (!line || !on)
			continue;
		ERR(b, line,
		    "%s = yes: [variant %s], the variant a bisection measures, boots a recorded build (build = ID), "
		    "which kab cannot rebuild %s: the control needs a variant kab builds from a tree (kernel = build "
		    "with tree); remove %s or build the variant from a tree",
		    job_keydefs[keys[k]].name, v->label,
		    keys[k] == JK_JOB_BISECT_REVERT ? "with the culprit reverted" : "with forced alignment",
		    job_keydefs[keys[k]].name);
	}
}

/* bisect = auto and bisect.boots: the job has a variant a bisection
 * builds. A build variant missing its tree is reported already. */
static void check_bisect(struct job_builder *b)
{
	const struct job *j = b->j;
	bool can = false, untold = false;
	for (size_t i = 0; i < j->n_variants; i++) {
		const struct job_variant *v = &j->variants[i];
		can = can || job_variant_bisectable(v);
		untold = untold || (v->kernel && strcmp(v->kernel, "build") == 0 && !v->tree && !job_variant_recorded(v));
	}
	static const enum job_key_id keys[] = { JK_JOB_BISECT, JK_JOB_BISECT_BOOTS, JK_JOB_BISECT_REVERT, JK_JOB_BISECT_ALIGN };
	for (size_t k = 0; k < ARRAY_SIZE(keys) && !can && !untold; k++) {
		int line = b->job_key_line[keys[k]];
		const char *name = job_keydefs[keys[k]].name;
		const char *what = keys[k] == JK_JOB_BISECT ? "bisect = auto" : name;
		if (!line || (keys[k] == JK_JOB_BISECT && j->bisect != JOB_BISECT_AUTO) ||
		    (keys[k] == JK_JOB_BISECT_REVERT && !j->bisect_revert) || (keys[k] == JK_JOB_BISECT_ALIGN && !j->bisect_align))
			continue;
		ERR(b, line,
		    "%s: this job has no variant that kab builds from a tree (kernel = build with tree) or boots builds "
		    "of one (build = ID): a bisection measures each commit of a range, and a job of kernel = running or "
		    "image cannot be bisected; remove %s",
		    what, name);
	}
	check_bisect_controls(b);
}

/* What the sections mean together: kernels booted by every variant or
 * none, an archive for lore series, the sections a job needs. */
static void check_job_wide(struct job_builder *b, const struct walk *w, bool build_only, bool partial)
{
	struct job *j = b->j;
	if (job_boots_kernels(j) && !build_only) {
		for (size_t i = 0; i < j->n_variants; i++)
			if (strcmp(j->variants[i].kernel, "running") == 0)
				ERR(b, j->variants[i].line,
				    "[variant %s] has kernel = running in a job whose other variants boot kernels: every variant names the kernel it boots (for the running one: kernel = image, image = /boot/vmlinuz-$(uname -r))",
				    j->variants[i].label);
	} else if (!job_boots_kernels(j)) {
		for (size_t i = 0; i < job_n_keys; i++)
			if ((job_keydefs[i].flags & KF_BOOT) && b->job_key_line[i])
				ERR(b, b->job_key_line[i], "%s applies only to a job whose variants boot kernels (kernel = build or image)",
				    job_keydefs[i].name);
	}
	for (size_t i = 0; i < j->n_variants; i++)
		if (j->variants[i].series && strncmp(j->variants[i].series, "lore:", 5) == 0 && !j->archive)
			ERR(b, j->variants[i].series_line,
			    "series = %s needs an archive to fetch it from: set archive = URL in [job] (e.g. https://lore.kernel.org/all)",
			    j->variants[i].series);

	if (!w->job_line && !w->job_guessed && !partial)
		ERR(b, 0, "missing [job] section (it needs at least: name = ...)");
	if (j->n_variants + w->bad_variants < 2 && !partial)
		ERR(b, 0, "a job needs at least two variants ([variant A], [variant B]); found %zu", j->n_variants);
	if (j->n_workloads + w->bad_workloads == 0 && !partial)
		ERR(b, 0, "a job needs at least one [workload NAME] section");
	if (!w->bad_variants && !partial)
		check_expect_variants(b);
	check_steps_budget(b);
	check_bisect(b);
}

size_t job_build(struct job *j, const char *file, const char *dir, struct job_section *secs, size_t n_secs,
		 bool build_only, bool partial, struct job_notes *notes, struct diags *d)
{
	struct job_builder b = { .j = j, .file = file, .d = d, .notes = notes, .dir = dir };
	struct walk w = { 0 };
	size_t d0 = diags_count(d);
	job_keys_init(&b, JOB_SEC_JOB, j);
	job_keys_init(&b, JOB_SEC_SWAP, &j->swap);
	build_sections(&b, secs, n_secs, &w);
	if (notes) {
		notes->job_line = w.job_line;
		notes->switch_line = b.job_key_line[JK_JOB_SWITCH];
	}
	check_job_wide(&b, &w, build_only, partial);
	if (b.oom)
		ERR(&b, 0, "out of memory while reading the job");
	return diags_count(d) - d0;
}
