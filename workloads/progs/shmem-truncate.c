/* kab-shmem-truncate: tmpfs and memfd teardown, the method of the linux-mm
 * posting that removes truncated shmem folios in batches. Each repetition
 * fills a tmpfs file or a memfd, then times one teardown: ftruncate() to
 * 0, a hole punch over the whole file, close() of a memfd (its last
 * reference) or unlink() of a closed tmpfs file. The tmpfs is a private
 * mount in a private mount namespace, so it vanishes with the process
 * even when it is killed. Results, and the folio sizes the file really
 * got, are "kab-metric NAME VALUE UNIT" lines on standard output.
 *
 * kab-shmem-truncate --backing tmpfs|memfd --op ftruncate|punch|close|unlink
 *                    --size BYTES [--reps N] [--huge never|always|within_size|advise]
 *                    [--fill write|fallocate]
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "kabprog.h"

#define MAX_REPS 10000
#define CHUNK (1u << 20)

enum op { OP_FTRUNCATE, OP_PUNCH, OP_CLOSE, OP_UNLINK };
static const char *const op_names[] = { "ftruncate", "punch", "close", "unlink", NULL };

struct opts {
	bool memfd, fallocate;
	enum op op;
	uint64_t size;
	unsigned reps;
	const char *huge;
};

static const char *const counter_names[] = { "shmem_alloc", "shmem_fallback" };
static const char *const counter_metric[] = { "alloc", "fallback" };
#define N_COUNTERS (sizeof(counter_names) / sizeof(counter_names[0]))

static int choice(const char *v, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	return -1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const char *const backings[] = { "tmpfs", "memfd", NULL };
	static const char *const huges[] = { "never", "always", "within_size", "advise", NULL };
	static const char *const fills[] = { "write", "fallocate", NULL };
	*o = (struct opts){ .reps = 5, .huge = "never" };
	int backing = -1, op = -1;
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];
		uint64_t n;
		int r = 0;
		if (strcmp(a, "--backing") == 0)
			r = backing = choice(v, backings);
		else if (strcmp(a, "--op") == 0)
			r = op = choice(v, op_names);
		else if (strcmp(a, "--size") == 0)
			r = kp_parse_u64(v, &o->size);
		else if (strcmp(a, "--huge") == 0) {
			r = choice(v, huges);
			o->huge = v;
		} else if (strcmp(a, "--fill") == 0) {
			r = choice(v, fills);
			o->fallocate = r == 1;
		} else if (strcmp(a, "--reps") == 0) {
			r = kp_parse_u64(v, &n);
			if (r == 0 && (n < 1 || n > MAX_REPS))
				r = -1;
			o->reps = (unsigned)n;
		} else
			r = -1;
		if (r < 0) {
			fprintf(stderr, "kab-shmem-truncate: bad option %s %s\n", a, v);
			return -EINVAL;
		}
	}
	if (argc % 2 == 0 || backing < 0 || op < 0 || o->size == 0) {
		fprintf(stderr, "usage: kab-shmem-truncate --backing tmpfs|memfd --op ftruncate|punch|close|unlink "
				"--size BYTES [--reps N] [--huge never|always|within_size|advise] [--fill write|fallocate]\n");
		return -EINVAL;
	}
	o->memfd = backing == 1;
	o->op = (enum op)op;
	if ((o->op == OP_CLOSE && !o->memfd) || (o->op == OP_UNLINK && o->memfd)) {
		fprintf(stderr, "kab-shmem-truncate: op %s needs backing %s\n", op_names[op], o->memfd ? "tmpfs" : "memfd");
		return -EINVAL;
	}
	return 0;
}

/* A tmpfs of our own, mounted in a mount namespace of our own with private
 * propagation: nothing shows on the host, and the kernel unmounts it and
 * frees its pages when this process ends, however it ends. */
static int private_tmpfs(const struct opts *o, char *dir, size_t len)
{
	if (unshare(CLONE_NEWNS) < 0) {
		fprintf(stderr, "kab-shmem-truncate: unshare(CLONE_NEWNS): %s (needs CAP_SYS_ADMIN)\n", strerror(errno));
		return -errno;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		fprintf(stderr, "kab-shmem-truncate: making / private in the new namespace: %s\n", strerror(errno));
		return -errno;
	}
	snprintf(dir, len, "kab-tmpfs-XXXXXX"); /* in the run's work directory */
	if (!mkdtemp(dir)) {
		fprintf(stderr, "kab-shmem-truncate: mkdtemp in the work directory: %s\n", strerror(errno));
		return -errno;
	}
	char data[128];
	/* room for the file and a huge folio more, so a limit never forces
	 * a smaller folio at the end */
	snprintf(data, sizeof(data), "size=%" PRIu64 ",huge=%s,mode=0700", o->size + (4u << 20), o->huge);
	if (mount("kab-shmem", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, data) < 0) {
		fprintf(stderr, "kab-shmem-truncate: mount tmpfs -o %s: %s\n", data, strerror(errno));
		rmdir(dir);
		return -errno;
	}
	return 0;
}

static int fill_file(int fd, const struct opts *o, unsigned char *buf)
{
	if (o->fallocate) {
		if (fallocate(fd, 0, 0, (off_t)o->size) < 0)
			return -errno;
		return 0;
	}
	for (uint64_t off = 0; off < o->size;) {
		size_t n = o->size - off < CHUNK ? (size_t)(o->size - off) : CHUNK;
		for (size_t pg = 0; pg < n; pg += 4096) /* no page is all zeroes */
			memcpy(buf + pg, &(uint64_t){ (off + pg) / 4096 + 1 }, sizeof(uint64_t));
		ssize_t w = pwrite(fd, buf, n, (off_t)off);
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		off += (uint64_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (parse_opts(argc, argv, &o) < 0)
		return 2;
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t npages = (o.size + (uint64_t)psz - 1) / (uint64_t)psz;
	uint64_t *op_ns = calloc(o.reps, sizeof(uint64_t));
	uint64_t *fill_ns = calloc(o.reps, sizeof(uint64_t));
	uint64_t *pm = calloc(npages, sizeof(uint64_t));
	uint64_t *kflags = calloc(npages, sizeof(uint64_t));
	unsigned char *buf = calloc(1, CHUNK);
	if (!op_ns || !fill_ns || !pm || !kflags || !buf) {
		fprintf(stderr, "kab-shmem-truncate: out of memory for bookkeeping\n");
		return 1;
	}
	memset(buf, 0x5a, CHUNK);
	char dir[64] = "", path[128] = "";
	if (!o.memfd) {
		if (private_tmpfs(&o, dir, sizeof(dir)) < 0)
			return 1;
		snprintf(path, sizeof(path), "%s/file", dir);
	}
	int pm_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kpf_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	struct kp_size fs[KP_MAX_SIZES];
	size_t nfs = kp_find_sizes(fs);
	kp_read_counters(fs, nfs, counter_names, N_COUNTERS, false);

	struct kp_walk walk = { 0 };
	double resident_kb = 0, pmd_kb = 0, freed_kb = 0;
	bool meminfo_ok = true;
	unsigned done = 0;
	int ret = 0;
	for (unsigned rep = 0; rep < o.reps && ret == 0; rep++) {
		uint64_t shmem0 = 0, huge0 = 0, shmem1 = 0, huge1 = 0, shmem2 = 0;
		meminfo_ok &= kp_meminfo_kb("Shmem", &shmem0) == 0 && kp_meminfo_kb("ShmemHugePages", &huge0) == 0;
		int fd = o.memfd ? memfd_create("kab-shmem", MFD_CLOEXEC)
				 : open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			fprintf(stderr, "kab-shmem-truncate: %s: %s\n", o.memfd ? "memfd_create" : path, strerror(errno));
			ret = 1;
			break;
		}
		int64_t t0 = kp_now_ns();
		int r = fill_file(fd, &o, buf);
		int64_t t1 = kp_now_ns();
		if (r < 0) {
			/* ENOSPC or ENOMEM: the fill does not fit */
			fprintf(stderr, "kab-shmem-truncate: filling %" PRIu64 " bytes: %s\n", o.size, strerror(-r));
			close(fd);
			if (!o.memfd)
				unlink(path);
			ret = 1;
			break;
		}
		fill_ns[rep] = (uint64_t)(t1 - t0);
		meminfo_ok &= kp_meminfo_kb("Shmem", &shmem1) == 0 && kp_meminfo_kb("ShmemHugePages", &huge1) == 0;
		if (meminfo_ok) {
			resident_kb += (double)shmem1 - (double)shmem0;
			pmd_kb += (double)huge1 - (double)huge0;
		}

		/* which folios back the file: map it, walk, unmap again; no
		 * mapping is left for the teardown to undo */
		void *map = mmap(NULL, o.size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
		if (map != MAP_FAILED) {
			kp_walk_range(pm_fd, kpf_fd, map, npages, psz, pm, kflags, &walk);
			munmap(map, o.size);
		}

		if (o.op == OP_UNLINK)
			close(fd); /* so that unlink drops the last reference */
		t0 = kp_now_ns();
		switch (o.op) {
		case OP_FTRUNCATE:
			r = ftruncate(fd, 0);
			break;
		case OP_PUNCH:
			r = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)o.size);
			break;
		case OP_CLOSE:
			r = close(fd);
			break;
		case OP_UNLINK:
			r = unlink(path);
			break;
		}
		t1 = kp_now_ns();
		if (r < 0) {
			fprintf(stderr, "kab-shmem-truncate: %s: %s\n", op_names[o.op], strerror(errno));
			ret = 1;
		}
		op_ns[rep] = (uint64_t)(t1 - t0);
		if (kp_meminfo_kb("Shmem", &shmem2) == 0 && meminfo_ok)
			freed_kb += (double)shmem1 - (double)shmem2;
		if (o.op == OP_FTRUNCATE || o.op == OP_PUNCH)
			close(fd);
		if (!o.memfd && o.op != OP_UNLINK)
			unlink(path);
		if (ret == 0) {
			done++;
			printf("rep %u: fill %.3f ms, %s %.3f ms\n", rep + 1, (double)fill_ns[rep] / 1e6, op_names[o.op],
			       (double)op_ns[rep] / 1e6);
		}
	}
	kp_read_counters(fs, nfs, counter_names, N_COUNTERS, true);
	if (!o.memfd) {
		umount2(dir, MNT_DETACH);
		rmdir(dir);
	}
	if (ret != 0)
		return ret;

	kp_print_series("shmem-truncate", "op_ms", op_ns, done, "ms");
	kp_print_series("shmem-truncate", "fill_ms", fill_ns, done, "ms");
	printf("kab-metric shmem-truncate.reps %u reps\n", done);
	kp_print_walk("shmem-truncate", &walk, psz);
	double filled_kb = (double)o.size / 1024 * done;
	if (meminfo_ok) {
		/* /proc/meminfo is machine-wide: shares of what was filled */
		printf("kab-metric shmem-truncate.meminfo_resident_pct %.3f %%\n", 100 * resident_kb / filled_kb);
		printf("kab-metric shmem-truncate.pmd_folio_pct %.3f %%\n", 100 * pmd_kb / filled_kb);
		printf("kab-metric shmem-truncate.freed_pct %.3f %%\n", 100 * freed_kb / filled_kb);
	}
	double large_kb = 0, fallbacks = 0;
	for (size_t i = 0; i < nfs; i++) {
		large_kb += (double)kp_counter_delta(&fs[i], 0) * (double)fs[i].kb;
		fallbacks += (double)kp_counter_delta(&fs[i], 1);
		if (kp_counter_delta(&fs[i], 0) == 0 && kp_counter_delta(&fs[i], 1) == 0)
			continue;
		for (size_t c = 0; c < N_COUNTERS; c++)
			if (fs[i].have[c])
				printf("kab-metric shmem-truncate.folios_%" PRIu64 "kB_%s %.3f folios\n", fs[i].kb, counter_metric[c],
				       (double)kp_counter_delta(&fs[i], c) / done);
	}
	if (nfs > 0) {
		printf("kab-metric shmem-truncate.mthp_alloc_pct %.3f %%\n", 100 * large_kb / filled_kb);
		printf("kab-metric shmem-truncate.mthp_fallbacks %.3f folios\n", fallbacks / done);
	}
	return 0;
}
