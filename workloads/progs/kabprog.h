/* What kab's memory microbenchmarks (kab-pageout, kab-shmem-truncate)
 * share: strict numbers, CLOCK_MONOTONIC, the per-size folio counters under
 * /sys/kernel/mm/transparent_hugepage/hugepages-*kB/stats, a page-table
 * walk that tells which folio sizes back a range (/proc/self/pagemap and
 * /proc/kpageflags), and "kab-metric NAME VALUE UNIT" summaries. */
#pragma once
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KP_THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define KP_PM_PRESENT (1ull << 63)
#define KP_PM_SWAP (1ull << 62)
#define KP_PM_PFN_MASK ((1ull << 55) - 1)
#define KP_KPF_COMPOUND_HEAD (1ull << 15)
#define KP_KPF_COMPOUND_TAIL (1ull << 16)
#define KP_MAX_SIZES 16
#define KP_MAX_COUNTERS 8

static inline int kp_parse_u64(const char *s, uint64_t *ret)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

static inline int64_t kp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int kp_read_u64_file(const char *path, uint64_t *ret)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char buf[64];
	int r = -EINVAL;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		r = kp_parse_u64(buf, ret);
	}
	fclose(f);
	return r;
}

/* A /proc/meminfo field in kB; -ENOENT when absent. */
static inline int kp_meminfo_kb(const char *key, uint64_t *ret)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return -errno;
	char line[256];
	size_t kl = strlen(key);
	int r = -ENOENT;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			char *p = line + kl + 1;
			while (*p == ' ')
				p++;
			p[strcspn(p, " \n")] = 0;
			r = kp_parse_u64(p, ret);
			break;
		}
	fclose(f);
	return r;
}

static inline int kp_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* One folio size and its counters (names given by the caller). */
struct kp_size {
	uint64_t kb;
	bool have[KP_MAX_COUNTERS];
	uint64_t before[KP_MAX_COUNTERS], after[KP_MAX_COUNTERS];
};

static inline int kp_cmp_size(const void *a, const void *b)
{
	return kp_cmp_u64(&((const struct kp_size *)a)->kb, &((const struct kp_size *)b)->kb);
}

/* The hugepages-SIZEkB directories, smallest first. */
static inline size_t kp_find_sizes(struct kp_size *fs)
{
	DIR *d = opendir(KP_THP_DIR);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < KP_MAX_SIZES) {
		if (strncmp(e->d_name, "hugepages-", 10) != 0)
			continue;
		char num[32];
		size_t l = strcspn(e->d_name + 10, "k");
		if (l == 0 || l >= sizeof(num) || strcmp(e->d_name + 10 + l, "kB") != 0)
			continue;
		memcpy(num, e->d_name + 10, l);
		num[l] = 0;
		memset(&fs[n], 0, sizeof(fs[n]));
		if (kp_parse_u64(num, &fs[n].kb) == 0)
			n++;
	}
	closedir(d);
	qsort(fs, n, sizeof(fs[0]), kp_cmp_size);
	return n;
}

/* Reads the counters into before[] (after = false) or after[]. A counter
 * this kernel lacks stays unset (have[] false). */
static inline void kp_read_counters(struct kp_size *fs, size_t n, const char *const *names, size_t nc, bool after)
{
	for (size_t i = 0; i < n; i++)
		for (size_t c = 0; c < nc && c < KP_MAX_COUNTERS; c++) {
			char path[256];
			uint64_t v = 0;
			snprintf(path, sizeof(path), KP_THP_DIR "/hugepages-%" PRIu64 "kB/stats/%s", fs[i].kb, names[c]);
			if (kp_read_u64_file(path, &v) < 0) {
				fs[i].have[c] = false;
				continue;
			}
			if (after) {
				fs[i].after[c] = v;
			} else {
				fs[i].have[c] = true;
				fs[i].before[c] = v;
			}
		}
}

static inline uint64_t kp_counter_delta(const struct kp_size *f, size_t c)
{
	if (!f->have[c] || f->after[c] < f->before[c])
		return 0;
	return f->after[c] - f->before[c];
}

/* What page-table walks found, summed over walks. */
struct kp_walk {
	uint64_t pages, resident, in_large;
	uint64_t weighted; /* sum over resident pages of their folio's page count */
	uint64_t swapped, walks;
	bool pfn_hidden, failed;
};

/* The pagemap entries of npages pages from p. */
static inline int kp_read_pagemap(int fd, const void *p, uint64_t npages, long psz, uint64_t *pm)
{
	off_t off = (off_t)((uintptr_t)p / (uintptr_t)psz * sizeof(uint64_t));
	size_t want = npages * sizeof(uint64_t), got = 0;
	while (got < want) {
		ssize_t r = pread(fd, (char *)pm + got, want - got, off + (off_t)got);
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

/* Kernel page flags of each resident page, read in runs of consecutive
 * PFNs so that a range of large folios costs few reads. */
static inline int kp_read_kpageflags(int fd, const uint64_t *pm, uint64_t npages, uint64_t *flags)
{
	uint64_t i = 0;
	while (i < npages) {
		if (!(pm[i] & KP_PM_PRESENT)) {
			flags[i++] = 0;
			continue;
		}
		uint64_t pfn = pm[i] & KP_PM_PFN_MASK, j = i + 1;
		while (j < npages && j - i < 4096 && (pm[j] & KP_PM_PRESENT) && (pm[j] & KP_PM_PFN_MASK) == pfn + (j - i))
			j++;
		size_t want = (j - i) * sizeof(uint64_t);
		if (pread(fd, &flags[i], want, (off_t)(pfn * sizeof(uint64_t))) != (ssize_t)want)
			return -EIO;
		i = j;
	}
	return 0;
}

/* Counts resident pages and those in large folios: a compound head (or a
 * tail whose head lies before the range) starts a folio, and the tails
 * with the following PFNs belong to it. */
static inline void kp_tally_folios(const uint64_t *pm, const uint64_t *flags, uint64_t npages, struct kp_walk *t)
{
	uint64_t cur = 0, next_pfn = 0;
	for (uint64_t i = 0; i <= npages; i++) {
		bool present = i < npages && (pm[i] & KP_PM_PRESENT);
		uint64_t pfn = present ? pm[i] & KP_PM_PFN_MASK : 0;
		uint64_t fl = present ? flags[i] : 0;
		if (present && (fl & KP_KPF_COMPOUND_TAIL) && cur > 0 && pfn == next_pfn) {
			cur++;
			next_pfn++;
			t->resident++;
			continue;
		}
		if (cur > 0) { /* the folio before this page is complete */
			if (cur > 1)
				t->in_large += cur;
			t->weighted += cur * cur;
			cur = 0;
		}
		if (!present)
			continue;
		t->resident++;
		if (fl & (KP_KPF_COMPOUND_HEAD | KP_KPF_COMPOUND_TAIL)) {
			cur = 1;
			next_pfn = pfn + 1;
		} else {
			t->weighted += 1;
		}
	}
}

/* Walks the npages pages at p (pm and flags: npages entries of scratch)
 * and adds what it finds to t. */
static inline void kp_walk_range(int pm_fd, int kpf_fd, const void *p, uint64_t npages, long psz,
				 uint64_t *pm, uint64_t *flags, struct kp_walk *t)
{
	if (pm_fd < 0 || kpf_fd < 0 || kp_read_pagemap(pm_fd, p, npages, psz, pm) < 0) {
		t->failed = true;
		return;
	}
	bool any_pfn = false;
	for (uint64_t i = 0; i < npages && !any_pfn; i++)
		any_pfn = (pm[i] & KP_PM_PRESENT) && (pm[i] & KP_PM_PFN_MASK);
	uint64_t resident = 0;
	for (uint64_t i = 0; i < npages; i++)
		resident += (pm[i] & KP_PM_PRESENT) != 0;
	if (resident > 0 && !any_pfn) {
		t->pfn_hidden = true;
		return;
	}
	if (kp_read_kpageflags(kpf_fd, pm, npages, flags) < 0) {
		t->failed = true;
		return;
	}
	kp_tally_folios(pm, flags, npages, t);
	t->pages += npages;
	t->walks++;
}

/* Prints the folio evidence of the walks as PREFIX.resident_pct,
 * PREFIX.large_folio_pct and PREFIX.folio_kB_mean (page-weighted). */
static inline void kp_print_walk(const char *prefix, const struct kp_walk *t, long psz)
{
	if (t->walks == 0) {
		fprintf(stderr, "kab: no page-table folio evidence: %s\n",
			t->pfn_hidden ? "pagemap hides PFNs (needs CAP_SYS_ADMIN)" : "/proc/self/pagemap or /proc/kpageflags unreadable");
		return;
	}
	printf("kab-metric %s.resident_pct %.3f %%\n", prefix, 100.0 * (double)t->resident / (double)t->pages);
	printf("kab-metric %s.large_folio_pct %.3f %%\n", prefix,
	       t->resident ? 100.0 * (double)t->in_large / (double)t->resident : 0);
	printf("kab-metric %s.folio_kB_mean %.3f kB\n", prefix,
	       t->resident ? (double)t->weighted / (double)t->resident * (double)psz / 1024 : 0);
}

/* Mean, median, min, max, stddev and stddev % of n samples in ns, printed
 * in unit ("ns" or "ms") as PREFIX.NAME_mean etc. */
static inline void kp_print_series(const char *prefix, const char *name, const uint64_t *v, unsigned n, const char *unit)
{
	if (n == 0)
		return;
	double scale = strcmp(unit, "ms") == 0 ? 1e-6 : 1;
	uint64_t *s = malloc(n * sizeof(uint64_t));
	if (!s)
		return;
	memcpy(s, v, n * sizeof(uint64_t));
	qsort(s, n, sizeof(uint64_t), kp_cmp_u64);
	double sum = 0, ss = 0;
	for (unsigned i = 0; i < n; i++)
		sum += (double)v[i];
	double mean = sum / n;
	for (unsigned i = 0; i < n; i++)
		ss += ((double)v[i] - mean) * ((double)v[i] - mean);
	double sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
	double median = n % 2 ? (double)s[n / 2] : ((double)s[n / 2 - 1] + (double)s[n / 2]) / 2;
	int prec = scale == 1 ? 0 : 6;
	printf("kab-metric %s.%s_mean %.*f %s\n", prefix, name, prec, mean * scale, unit);
	printf("kab-metric %s.%s_median %.*f %s\n", prefix, name, prec, median * scale, unit);
	printf("kab-metric %s.%s_min %.*f %s\n", prefix, name, prec, (double)s[0] * scale, unit);
	printf("kab-metric %s.%s_max %.*f %s\n", prefix, name, prec, (double)s[n - 1] * scale, unit);
	printf("kab-metric %s.%s_stddev %.*f %s\n", prefix, name, prec, sd * scale, unit);
	printf("kab-metric %s.%s_stddev_pct %.3f %%\n", prefix, name, mean > 0 ? 100 * sd / mean : 0);
	free(s);
}
