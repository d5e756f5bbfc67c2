/* Job files: the key table. Each key of each section once: its type,
 * where its value goes, its range, default and choices, how it prints,
 * and its reference text. Parsing (job_keys.c), the normalized form
 * (job_print.c), the defaults, the boot-only keys, the zswap parameters
 * and the reference (kab check --keys: doc/jobs.md's key tables and kab(1)
 * are made from it, and tests/docs checks that they are) all walk it.
 *
 * Adding a key: a field for its value in job.h (if it has one), a row at
 * the end of the table, and a test; then KEYS_UPDATE=1 tests/docs/run.sh
 * writes its rows into doc/jobs.md and kab(1). A key the code must name
 * (a rule between keys in job_build.c) has an id in job_priv.h's enum
 * job_key_id and its row among the named ones. */
#include "harness/job/job.h"
#include "harness/job/job_priv.h"
#include "harness/base/util.h"

#include <stddef.h>

/* Indexed by the enums' values. */
static const char *const order_choices[] = { "abba", "alternate", "random", NULL };
static const char *const swap_choices[] = { "none", "zram", "file", "existing", NULL };
/* The direction's words and values, both in DIRECTION_LIST's order. */
static const char *const direction_choices[] = { DIRECTION_LIST(DIRECTION_WORD) NULL };
static const int direction_values[] = { DIRECTION_LIST(DIRECTION_VALUE) };
static const char *const tristate_choices[] = { "keep", "off", "on", NULL };
static const char *const tristate_param[] = { NULL, "N", "Y", NULL };
static const char *const switch_choices[] = { "kexec", "reboot", NULL };
static const char *const bootfail_choices[] = { "finish", "abort", NULL };
static const char *const yesno_choices[] = { "no", "yes", NULL };
static const char *const cpufreq_choices[] = { "keep", "performance", NULL };
static const char *const oom_choices[] = { "refuse", "tolerate", NULL };
static const char *const bisect_choices[] = { "off", "auto", NULL };
#define JOB_LABEL_MAX 64

#define KEY(s, n, t, o) .sec = JOB_SEC_##s, .name = (n), .type = (t), .off = (o)
#define COND(f) (offsetof(struct job, cond) + offsetof(struct job_condition, f))
const struct job_keydef job_keydefs[] = {
	[JK_JOB_NAME] = { KEY(JOB, "name", KT_NAME, offsetof(struct job, name)),
	  .flags = KF_REQUIRED | KF_ALWAYS,
	  .doc_type = "name",
	  .doc_default = "required",
	  .help = "The job's name, shown in reports.",
	},
	[JK_JOB_PAIRS] = { KEY(JOB, "pairs", KT_PAIRS, 0),
	  .flags = KF_ALWAYS, .def = "3",
	  .doc_type = "1 to 1000, or `adaptive MIN..MAX [step STEP]`",
	  .doc_default = "`3`",
	  .help = "Number of A/B pairs. Each pair runs every variant once per workload. `adaptive 5..20` is a budget: "
		  "kab looks at the data after 5, 10, 15 and 20 pairs (MIN, then every STEP pairs, STEP defaulting to "
		  "MIN) and stops a workload early once every primary metric is decided (see `primary`); otherwise it "
		  "runs to MAX and reports `undecided` with the interval. MIN at least 2, MAX − MIN a multiple of STEP, "
		  "at most 10 looks; needs `primary`. Printed as `adaptive 5..20 step 5`.",
	},
	[JK_JOB_ORDER] = { KEY(JOB, "order", KT_ENUM, offsetof(struct job, order)),
	  .choices = order_choices, .flags = KF_ALWAYS, .def = "abba",
	  .doc_type = "`abba`, `alternate`, `random`",
	  .doc_default = "`abba`",
	  .help = "Order of the variants in the schedule: `abba` runs A B, B A, A B, … (cancels linear drift); "
		  "`alternate` runs A B, A B, …; `random` runs each block of two pairs as A B + B A or B A + A B, drawn "
		  "from `seed` (balanced).",
	},
	[JK_JOB_SEED] = { KEY(JOB, "seed", KT_U64, offsetof(struct job, seed)),
	  .def = "1", .shown = job_shown_random,
	  .doc_type = "0 to 2^64−1",
	  .doc_default = "`1`",
	  .help = "Seed for `order = random`; an error with any other order.",
	},
	[JK_JOB_INTERVAL] = { KEY(JOB, "interval", KT_DURATION, offsetof(struct job, interval_s)),
	  .min = JOB_INTERVAL_MIN, .max = JOB_INTERVAL_MAX, .flags = KF_ALWAYS, .def = "1s",
	  .doc_type = "duration, 0.05s to 60s",
	  .doc_default = "`1s`",
	  .help = "Interval of the counter sampler (time series). Start-to-end deltas do not depend on it.",
	},
	[JK_JOB_WARMUP] = { KEY(JOB, "warmup", KT_UINT, offsetof(struct job, warmup)),
	  .min = 0, .max = 1, .flags = KF_ALWAYS, .def = "1",
	  .doc_type = "`0`, `1`",
	  .doc_default = "`1`",
	  .help = "Uncounted warm-up runs of each workload just before its first pair ([doc/running.md](running.md#what-a-run-does), Warm-up): "
		  "`1` runs one, in the schedule's first variant for that workload (in a job that boots kernels, in the "
		  "first boot), recorded with the status `warmup` and never counted; `0` runs none, and the first "
		  "pair's runs are the workload's first.",
	},
	[JK_JOB_METRICS] = { KEY(JOB, "metrics", KT_METRICS, offsetof(struct job, metrics)),
	  .off_n = offsetof(struct job, n_metrics), .flags = KF_MULTILINE, .rank = 3,
	  .doc_type = "metric names, space-separated",
	  .doc_default = "none",
	  .help = "Extra rows for the report besides the workload's own metrics and the curated mm list, each "
		  "`SOURCE.NAME` (`vmstat.pgmajfault`, `interrupts.RES`, `memcg.pgsteal`) or `SOURCE.PREFIX*` for all "
		  "with that prefix (`vmstat.thp_*`). May span continuation lines.",
	},
	[JK_JOB_PRIMARY] = { KEY(JOB, "primary", KT_METRICS, offsetof(struct job, primary)),
	  .off_n = offsetof(struct job, n_primary), .flags = KF_MULTILINE, .rank = 3,
	  .doc_type = "metric names, space-separated",
	  .doc_default = "none",
	  .help = "The metrics the job is about, written like `metrics`. The report tests them without the "
		  "Benjamini–Hochberg correction that applies to all other rows (their verdict uses p, the others' q), "
		  "marks them, and an adaptive budget stops only when all of them are decided.",
	},
	[JK_SWAP_DEVICE] = { KEY(SWAP, "device", KT_ENUM, offsetof(struct job_swap, kind)),
	  .choices = swap_choices, .flags = KF_REQUIRED | KF_ALWAYS, .def = "existing",
	  .doc_type = "`zram`, `file`, `existing`, `none`",
	  .doc_default = "required",
	  .help = "`zram`: kab creates a zram device, makes it swap, and removes it at the end. `file`: the same with a "
		  "swap file. `existing`: use the swap that is there, unchanged. `none`: kab sets up no swap (swap that "
		  "is already on stays on).",
	},
	[JK_SWAP_SIZE] = { KEY(SWAP, "size", KT_SIZE, offsetof(struct job_swap, size)),
	  .min = JOB_SWAP_MIN, .shown = job_shown_sized,
	  .doc_type = "size, at least 1M",
	  .doc_default = "required for `zram` and `file`",
	  .help = "Size of the zram device (uncompressed) or of the swap file. An error with `existing` and `none`.",
	},
	[JK_SWAP_PATH] = { KEY(SWAP, "path", KT_PATH, offsetof(struct job_swap, path)),
	  .shown = job_shown_file,
	  .doc_type = "absolute path",
	  .doc_default = "a new `swap-XXXXXX` in the job's directory under the state directory",
	  .help = "`file` only. Must not exist (kab creates and removes it); its directory must, and it and every "
		  "directory above it must be root's and not writable by others (sticky ones such as `/var/tmp` "
		  "excepted): kab runs `mkswap` and `swapon` on the name as root.",
	},
	[JK_SWAP_ALGORITHM] = { KEY(SWAP, "algorithm", KT_WORD, offsetof(struct job_swap, algorithm)),
	  .shown = job_shown_zram,
	  .doc_type = "word",
	  .doc_default = "kernel default",
	  .help = "`zram` only: the compression algorithm (`comp_algorithm`), e.g. `lzo-rle`, `lz4`, `zstd`.",
	},
	[JK_SWAP_PRIORITY] = { KEY(SWAP, "priority", KT_INT, offsetof(struct job_swap, priority)),
	  .min = 0, .max = JOB_PRIORITY_MAX, .flags = KF_UNSET, .unset = -1,
	  .doc_type = "0 to 32767",
	  .doc_default = "swapon default",
	  .help = "`zram` and `file` only: the swap priority.",
	},
	[JK_SWAP_ZSWAP] = { KEY(SWAP, "zswap", KT_ENUM, offsetof(struct job_swap, zswap)),
	  .choices = tristate_choices, .param = "enabled", .param_values = tristate_param,
	  .doc_type = "`keep`, `off`, `on`",
	  .doc_default = "`keep`",
	  .help = "zswap in front of the swap device for the whole job (`/sys/module/zswap/parameters/enabled`), set "
		  "once the device is on and put back at the end.",
	},
	[JK_SWAP_ZSWAP_SHRINKER] = { KEY(SWAP, "zswap.shrinker", KT_ENUM, offsetof(struct job_swap, zswap_shrinker)),
	  .choices = tristate_choices, .param = "shrinker_enabled", .param_values = tristate_param,
	  .doc_type = "`keep`, `off`, `on`",
	  .doc_default = "`keep`",
	  .help = "zswap's shrinker writeback to the device (`shrinker_enabled`).",
	},
	[JK_SWAP_ZSWAP_COMPRESSOR] = { KEY(SWAP, "zswap.compressor", KT_WORD, offsetof(struct job_swap, zswap_compressor)),
	  .param = "compressor",
	  .doc_type = "word",
	  .doc_default = "`keep`",
	  .help = "zswap's compressor, e.g. `lzo`, `lz4`, `zstd`; `kab check` refuses one the kernel lacks (not in "
		  "`/proc/crypto` and no `crypto-NAME` module alias), naming those it has.",
	},
	[JK_SWAP_ZSWAP_MAX_POOL] = { KEY(SWAP, "zswap.max_pool_percent", KT_INT, offsetof(struct job_swap, zswap_max_pool)),
	  .min = 1, .max = 100, .flags = KF_UNSET, .unset = -1, .param = "max_pool_percent",
	  .doc_type = "1 to 100",
	  .doc_default = "`keep`",
	  .help = "zswap's pool limit in percent of RAM; a small pool makes zswap write back (`zswpwb`).",
	},
	[JK_VARIANT_NAME] = { KEY(VARIANT, "name", KT_NAME, offsetof(struct job_variant, name)),
	  .flags = KF_ALWAYS,
	  .doc_type = "name",
	  .doc_default = "the label",
	  .help = "Name shown in reports; unique among variants.",
	},
	[JK_VARIANT_KERNEL] = { KEY(VARIANT, "kernel", KT_KERNEL, offsetof(struct job_variant, kernel)),
	  .flags = KF_ALWAYS, .def = "running",
	  .doc_type = "`running`, `build`, `image`",
	  .doc_default = "`running`",
	  .help = "The kernel to run on. `running`: whatever runs (runtime-knob variants). `build`: kab builds it from "
		  "`tree`, `base`, `series`, `config`, `config.fragment` (see [kernels/README.md](../kernels/README.md)); "
		  "`kab build JOB` builds every such variant and `kab builds` lists the builds; a build whose config "
		  "has modules (and `BLK_DEV_INITRD`) is given an initramfs, `initrd.img` beside its `bzImage`, made with "
		  "the distribution's `mkinitramfs` (Debian's initramfs-tools-core), which runs as root, as installing "
		  "the artifacts does: git, make and the compiler run as the unprivileged build user `kab-build`, which "
		  "`make install` creates (SECURITY.md, \"Kernel builds\"). `image`: a kernel image file (`image = "
		  "/boot/vmlinuz-6.1.0-57-amd64`, a bzImage, with `initrd = PATH`), registered as a build of kind "
		  "`image` (copied under the kernels directory; the same contents give the same build). `build` with "
		  "`build = ID`: a build kab recorded earlier, booted as it is (below). A job with a `build` or `image` "
		  "variant **boots kernels**: every variant must name its kernel (`running` is refused beside them), "
		  "the job runs under kabd, and the executor switches kernels between boots (see \"Jobs that boot "
		  "kernels\" below). `$KAB_KBUILD_WORK` and `$KAB_KERNELS_DIR` move the work directory (default "
		  "`/var/cache/kab/kbuild`; it and its parents must be searchable by `kab-build`) and the artifact "
		  "directory (default `kernels/` in the state directory, `/var/lib/kab/kernels`).",
	},
	[JK_VARIANT_TREE] = { KEY(VARIANT, "tree", KT_SOURCE, offsetof(struct job_variant, tree)),
	  .rank = 1,
	  .doc_type = "path",
	  .doc_default = "—",
	  .help = "`kernel = build`: the git tree of the kernel to build (relative paths from the job file's "
		  "directory); never written: kab builds in a worktree of its own clone.",
	},
	[JK_VARIANT_BASE] = { KEY(VARIANT, "base", KT_SOURCE, offsetof(struct job_variant, base)),
	  .rank = 1,
	  .doc_type = "git ref",
	  .doc_default = "—",
	  .help = "`kernel = build`: the commit, tag or branch the build starts from (`base = v6.1`), the `series` "
		  "applied on it; or `track` instead.",
	},
	[JK_VARIANT_TRACK] = { KEY(VARIANT, "track", KT_TRACK, 0),
	  .off_line = offsetof(struct job_variant, track_line), .rank = 1, .print = job_print_track,
	  .doc_type = "`REMOTE BRANCH`",
	  .doc_default = "none",
	  .help = "`kernel = build`, instead of `base`: follow a branch of the tree's remote (`track = origin "
		  "mm-unstable`). Each time the job runs (a nightly: each night), kab fetches `refs/heads/BRANCH` from "
		  "the URL of the tree's remote `REMOTE` (`git remote get-url`) into its own clone of the tree "
		  "(`WORK/<tree key>/src`, as `kab-build`, at most 600 s, no tags, never a credential prompt; the tree "
		  "itself is never written), builds the head's commit (the build's key is the sha: a head that did not "
		  "move reuses its build, a new one builds incrementally in the same object directory) and records on "
		  "the job's variant row the track, the commit's sha, subject and committer date, and how the head "
		  "moved since the same job name's previous night for that variant (same variant name and track): "
		  "nothing (`NULL`) for the first night, an unchanged head or one that moved forward; `force-pushed: "
		  "<old12> is not an ancestor of <new12>` when the previous night's commit is not an ancestor of the "
		  "new head (never a silent reordering); `unknown: ...` when the previous commit is no longer in kab's "
		  "clone or the tree. A fetch that fails (the remote gone, the branch deleted, no answer in time) fails "
		  "the job with the reason (`kernel build failed: JOB:LINE: track = origin main: cannot fetch branch "
		  "main from remote origin (URL): git's message`) and records no commit; a build that fails after the "
		  "fetch keeps the commit it was building. Rules: `track` and `base` do not go together (a fixed base "
		  "and a moving head are two variants: give the baseline `base = v6.1` and the nightly `track`); "
		  "`series` may go with it (applied on the head each night); not with `build = ID`; REMOTE and BRANCH "
		  "are git ref names, at most 128 characters each, neither starting with `-`, BRANCH without "
		  "`refs/heads/`. `kab check` refuses a remote that is not one of the tree's (`git remote`, naming "
		  "them) and a branch the remote does not have (`git ls-remote --heads`, 30 s at most, with a close "
		  "name as a hint), each at the `track` line, and prints the head it found as a comment under the "
		  "normalized `track` line (`; track: origin main is at 1a2b3c4d5e6f (when kab check ran; ...)`). A "
		  "remote it cannot reach is a warning on stderr (and in that comment), not an error: a nightly job is "
		  "checked when its timer submits it, and a network that is down then must not make the night vanish; "
		  "the night's own fetch fails it with git's message instead. A remote on this machine (a path or "
		  "`file://`) is read in place, and marked safe for `kab-build` in its git config. The report's Kernels "
		  "block shows `tracks origin main: 1a2b3c4d5e6f \"subject\" (committed DATE)` under the variant's "
		  "build (with the event, if any), the cover letter says `origin main at 1a2b3c4d5e6f (\"subject\")`, "
		  "and JSON has the build's `track` (`track`, `sha`, `subject`, `commit_date`, `event`; `null` for a "
		  "variant that tracks nothing). `kab build JOB` fetches and builds the same way and prints `variant "
		  "NAME: track origin main at SHA \"subject\"` with the event against the newest recorded night, but "
		  "records no night.",
	},
	[JK_VARIANT_SERIES] = { KEY(VARIANT, "series", KT_SOURCE, offsetof(struct job_variant, series)),
	  .rank = 1, .print = job_print_series,
	  .doc_type = "`SOURCE [vN]`",
	  .doc_default = "none",
	  .help = "`kernel = build`: the patches applied on the base with `git am -3`: an mbox, a directory of "
		  "`*.patch` files, or `lore:MESSAGE-ID` (a thread from `archive`). Only one version's patches, and "
		  "only when they are one author's: every patch from the sender of the version's cover letter (or, "
		  "without one, from one sender), no number twice; otherwise the build is refused naming the messages. "
		  "A thread with more than one version needs `vN` (`series = lore:20240101.abc@x v3`), unless the "
		  "message named is itself one of the series' (its version is taken); without it the refusal lists each "
		  "version and its senders.",
	},
	[JK_VARIANT_CONFIG] = { KEY(VARIANT, "config", KT_SOURCE, offsetof(struct job_variant, config)),
	  .rank = 1,
	  .doc_type = "`running`, `defconfig`, `tinyconfig` or a path",
	  .doc_default = "`running`",
	  .help = "`kernel = build`: the kernel configuration: the running kernel's (`/boot/config-$(uname -r)`), a "
		  "`make` target, or a file (relative to the job file).",
	},
	[JK_VARIANT_FRAGMENT] = { KEY(VARIANT, "config.fragment", KT_SOURCES, offsetof(struct job_variant, fragments)),
	  .off_n = offsetof(struct job_variant, n_fragments), .flags = KF_MULTILINE, .rank = 1,
	  .doc_type = "paths, space-separated",
	  .doc_default = "none",
	  .help = "`kernel = build`: config fragments merged on top of `config`, in order "
		  "(`scripts/kconfig/merge_config.sh`). May span continuation lines.",
	},
	[JK_VARIANT_BUILD] = { KEY(VARIANT, "build", KT_ID, offsetof(struct job_variant, build_id)),
	  .off_line = offsetof(struct job_variant, build_line),
	  .doc_type = "build id (1 to 2^63 - 1)",
	  .doc_default = "none",
	  .help = "`kernel = build`: the id of a build recorded earlier in the database the job runs with (`kab builds` "
		  "lists them), booted as it is, never rebuilt: for kernels built on a build machine and booted on a "
		  "test machine with no tree and no compiler (the kernels directory at the same path on both: builds "
		  "record absolute paths). Excludes `tree`, `base`, `series`, `config`, `config.fragment` (the build "
		  "fixed them); `initrd` and `cmdline` as for any build. `kab check` checks only its form; kabd's "
		  "submit and the executor's build stage check that the build is there, `ok`, of kind `build`, and its "
		  "files are (see [kernels/README.md](../kernels/README.md), \"A build made elsewhere or earlier\").",
	},
	[JK_VARIANT_IMAGE] = { KEY(VARIANT, "image", KT_SOURCE, offsetof(struct job_variant, image)),
	  .rank = 2,
	  .doc_type = "path",
	  .doc_default = "—",
	  .help = "`kernel = image`: the kernel image (relative paths from the job file's directory).",
	},
	[JK_VARIANT_INITRD] = { KEY(VARIANT, "initrd", KT_SOURCE, offsetof(struct job_variant, initrd)),
	  .rank = 2,
	  .doc_type = "path",
	  .doc_default = "none",
	  .help = "The initramfs this variant's kernel boots with (`image`, or `build` to give a built kernel one "
		  "instead of the `mkinitramfs` image kab makes for a config with modules).",
	},
	[JK_VARIANT_CMDLINE] = { KEY(VARIANT, "cmdline", KT_TEXT, offsetof(struct job_variant, cmdline)),
	  .max = 1024, .off_line = offsetof(struct job_variant, cmdline_line), .rank = 2,
	  .doc_type = "text",
	  .doc_default = "none",
	  .help = "Parameters added to the command line of this variant's boots, after kab's own (so `panic=30` here "
		  "wins over `[job] panic`); no quotes.",
	},
	[JK_VARIANT_SYSCTL] = { KEY(VARIANT, "sysctl NAME", KT_DOC, 0),
	  .doc_type = "string",
	  .doc_default = "—",
	  .help = "Write the value to `/proc/sys/NAME` before each run of this variant, restore it after. `NAME` is "
		  "dotted as sysctl(8) writes it (`vm.swappiness`; a `/` stands for a `.` inside a component), or with "
		  "slashes (`vm/swappiness`), or the full `/proc/sys/…` path. Printed dotted.",
	},
	[JK_VARIANT_SYSFS] = { KEY(VARIANT, "sysfs PATH", KT_DOC, 0),
	  .doc_type = "string",
	  .doc_default = "—",
	  .help = "Write the value to `PATH`, an absolute path under `/sys`, before each run of this variant, restore "
		  "it after.",
	},
	[JK_JOB_ARCHIVE] = { KEY(JOB, "archive", KT_TEXT, offsetof(struct job, archive)),
	  .max = 180, .off_line = offsetof(struct job, archive_line),
	  .doc_type = "`https://` URL or a directory",
	  .doc_default = "none",
	  .help = "Where `series = lore:MESSAGE-ID` is found: `ARCHIVE/MESSAGE-ID/t.mbox.gz`, fetched from a "
		  "public-inbox archive over https (`https://lore.kernel.org/all`; the certificate checked against the "
		  "system's CAs, or the bundle `$KAB_CA_BUNDLE` names; redirects followed only to https) or read from a "
		  "local directory laid out the same way (relative to the job file). Plain `http://` and other schemes "
		  "are refused by `kab check`. At most 16 MiB is downloaded and 64 MiB decompressed (SECURITY.md, "
		  "\"Patch series\").",
	},
	[JK_JOB_BOOTS] = { KEY(JOB, "boots", KT_UINT, offsetof(struct job, pairs)),
	  .min = 1, .max = JOB_PAIRS_MAX, .flags = KF_BOOT | KF_ALIAS, .off_line = offsetof(struct job, boots_line),
	  .doc_type = "1 to 1000",
	  .doc_default = "`3`",
	  .help = "Jobs that boot kernels: boots of each variant, in `order` (ABBA: A B B A …). A pair is one boot of "
		  "each variant; `pairs` means the same (give one of the two).",
	},
	[JK_JOB_RUNS_PER_BOOT] = { KEY(JOB, "runs_per_boot", KT_UINT, offsetof(struct job, runs_per_boot)),
	  .min = 1, .max = 100, .flags = KF_BOOT | KF_ALWAYS, .def = "1", .rank = 2,
	  .doc_type = "1 to 100",
	  .doc_default = "`1`",
	  .help = "Runs of each workload inside one boot; they collapse to their median, so the boot stays the unit of "
		  "replication (doc/statistics.md, rule 1).",
	},
	[JK_JOB_SWITCH] = { KEY(JOB, "switch", KT_ENUM, offsetof(struct job, switch_mode)),
	  .choices = switch_choices, .flags = KF_BOOT | KF_ALWAYS, .def = "kexec", .rank = 2, .print = job_print_switch,
	  .doc_type = "`kexec`, `reboot`",
	  .doc_default = "`kexec`, or the machine's (below)",
	  .help = "How the executor changes kernels: `kexec_file_load(2)` (kexec-tools where the syscall is missing) "
		  "and a jump, or a one-shot boot entry (systemd-boot's `bootctl set-oneshot`, GRUB's `grub-reboot` "
		  "with an entry in `/boot/grub/custom.cfg`) and `systemctl reboot`, for machines whose firmware or "
		  "drivers break under kexec. `kab check` refuses `kexec` on a kernel that cannot kexec and suggests "
		  "`reboot`.",
	},
	[JK_JOB_BOOT_ATTEMPTS] = { KEY(JOB, "boot_attempts", KT_UINT, offsetof(struct job, boot_attempts)),
	  .min = 1, .max = 10, .flags = KF_BOOT | KF_ALWAYS, .def = "2", .rank = 2,
	  .doc_type = "1 to 10",
	  .doc_default = "`2`",
	  .help = "Failed boots of a variant's kernel before it is marked boot-failed and its runs are dropped.",
	},
	[JK_JOB_ON_BOOT_FAILURE] = { KEY(JOB, "on_boot_failure", KT_ENUM, offsetof(struct job, on_boot_failure)),
	  .choices = bootfail_choices, .flags = KF_BOOT | KF_ALWAYS, .def = "finish", .rank = 2,
	  .doc_type = "`finish`, `abort`",
	  .doc_default = "`finish`",
	  .help = "What a boot-failed variant does to the job: `finish` runs the other variants' boots and ends `done` "
		  "with the reason; `abort` ends it `failed`.",
	},
	[JK_JOB_PANIC] = { KEY(JOB, "panic", KT_UINT, offsetof(struct job, panic_s)),
	  .min = 1, .max = 3600, .flags = KF_BOOT | KF_ALWAYS, .def = "10", .rank = 2,
	  .doc_type = "1 to 3600 (s)",
	  .doc_default = "`10`",
	  .help = "kab boots kernels with `panic=N oops=panic`, so one that does not come up resets the machine to its "
		  "firmware default kernel.",
	},
	[JK_JOB_DROP_CACHES] = { KEY(JOB, "drop_caches", KT_ENUM, COND(drop_caches)),
	  .choices = yesno_choices, .off_line = COND(drop_caches_line), .rank = 1,
	  .doc_type = "`no`, `yes`",
	  .doc_default = "`no`",
	  .help = "Conditioning: before each run (after its knobs, before it starts), `sync` and `echo 3 > "
		  "/proc/sys/vm/drop_caches`, so no run finds the page cache the one before left. Applies to every "
		  "workload (the kbuild workload's own `drop_caches` does the same for that workload alone).",
	},
	[JK_JOB_COMPACT] = { KEY(JOB, "compact", KT_ENUM, COND(compact)),
	  .choices = yesno_choices, .off_line = COND(compact_line), .rank = 1,
	  .doc_type = "`no`, `yes`",
	  .doc_default = "`no`",
	  .help = "Conditioning: before each run, `echo 1 > /proc/sys/vm/compact_memory`, so each run starts with "
		  "memory as unfragmented as the kernel can make it (large folios, THP). `kab check` refuses it on a "
		  "kernel without compaction.",
	},
	[JK_JOB_WAIT_IDLE] = { KEY(JOB, "wait_idle", KT_PERCENT, COND(wait_idle_pct)),
	  .flags = KF_UNSET, .unset = -1, .off_line = COND(wait_idle_line), .rank = 1,
	  .doc_type = "percent, above 0 to 100",
	  .doc_default = "none",
	  .help = "Conditioning: before each run, wait until the machine's CPUs were less than this busy over one "
		  "second (`/proc/stat`'s user, nice, system, irq, softirq and steal time over all CPUs; kab itself "
		  "sleeps while it measures, so this is other processes' and the kernel's CPU). The 1-minute load "
		  "average is too slow to say the machine is quiet now.",
	},
	[JK_JOB_WAIT_IDLE_MAX] = { KEY(JOB, "wait_idle_max", KT_DURATION, COND(wait_idle_max_s)),
	  .min = 1, .max = 3600, .flags = KF_ALWAYS, .def = "1m", .rank = 1, .shown = job_shown_waiting,
	  .doc_type = "duration, 1s to 1h",
	  .doc_default = "`1m`",
	  .help = "The bound of `wait_idle`. When it passes the run goes on, and its provenance records `idle=no` with "
		  "the last second's busy percentage; the report's header counts such runs (\"Not idle at start: 2 of 6 "
		  "runs\"). Never silent.",
	},
	[JK_JOB_CPUFREQ] = { KEY(JOB, "cpufreq", KT_ENUM, COND(cpufreq)),
	  .choices = cpufreq_choices, .off_line = COND(cpufreq_line), .rank = 1,
	  .doc_type = "`keep`, `performance`",
	  .doc_default = "`keep`",
	  .help = "Conditioning for the whole job: every CPU's `/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor` "
		  "set to `performance` before the first run and put back after the last. Journaled before the change "
		  "like a knob, so a crash is undone at kab's next start. `kab check` refuses it on a machine without "
		  "cpufreq (a VM): \"cpufreq = performance: this machine has no cpufreq (no "
		  "/sys/devices/system/cpu/cpu0/cpufreq): remove the key, or run on bare metal\".",
	},
	[JK_JOB_TURBO] = { KEY(JOB, "turbo", KT_ENUM, COND(turbo)),
	  .choices = tristate_choices, .off_line = COND(turbo_line), .rank = 1,
	  .doc_type = "`keep`, `off`, `on`",
	  .doc_default = "`keep`",
	  .help = "Conditioning for the whole job: `/sys/devices/system/cpu/intel_pstate/no_turbo` (intel_pstate), else "
		  "`/sys/devices/system/cpu/cpufreq/boost`; journaled and restored like `cpufreq`, refused by `kab "
		  "check` where neither exists.",
	},
	[JK_JOB_CPUS] = { KEY(JOB, "cpus", KT_TEXT, COND(cpus)),
	  .max = 180, .off_line = COND(cpus_line), .rank = 1,
	  .doc_type = "CPU list (`1`, `0-3,6`)",
	  .doc_default = "none",
	  .help = "Pins each workload to these CPUs (its process inherits the affinity kab sets around the fork; "
		  "everything it starts inherits it too). Each CPU must exist on the machine: `kab check` says which is "
		  "out of range.",
	},
	[JK_JOB_SAMPLER_CPU] = { KEY(JOB, "sampler_cpu", KT_INT, COND(sampler_cpu)),
	  .min = 0, .max = JOB_CPUS_MAX - 1, .flags = KF_UNSET, .unset = -1, .off_line = COND(sampler_cpu_line), .rank = 1,
	  .doc_type = "CPU number",
	  .doc_default = "none",
	  .help = "Pins kab's sampler thread to this CPU, which must not be one of `cpus`. Without it, a job with "
		  "`cpus` runs its sampler on kab's other CPUs, off the workload's.",
	},
	[JK_WORKLOAD_TYPE] = { KEY(WORKLOAD, "type", KT_TYPE, offsetof(struct job_workload, type)),
	  .flags = KF_REQUIRED | KF_ALWAYS,
	  .doc_type = "a workload type",
	  .doc_default = "required",
	  .help = "`stress-ng` or `command` (see below).",
	},
	[JK_WORKLOAD_MEMORY_MAX] = { KEY(WORKLOAD, "memory.max", KT_MEM, offsetof(struct job_workload, memory_max)),
	  .min = (double)JOB_MEM_FLOOR, .rank = 1,
	  .doc_type = "size or `max`, at least 16M",
	  .doc_default = "no limit",
	  .help = "Hard memory limit of the run's cgroup (cgroup v1: `memory.limit_in_bytes`).",
	},
	[JK_WORKLOAD_MEMORY_HIGH] = { KEY(WORKLOAD, "memory.high", KT_MEM, offsetof(struct job_workload, memory_high)),
	  .min = (double)JOB_MEM_FLOOR, .rank = 1,
	  .doc_type = "size or `max`, at least 16M",
	  .doc_default = "no limit",
	  .help = "Throttling limit (cgroup v2 only); not above `memory.max`.",
	},
	[JK_WORKLOAD_MEMORY_SWAP_MAX] = { KEY(WORKLOAD, "memory.swap.max", KT_MEM, offsetof(struct job_workload, memory_swap_max)),
	  .min = 0, .rank = 1,
	  .doc_type = "size, `0` or `max`",
	  .doc_default = "no limit",
	  .help = "Swap the cgroup may use; `0` forbids swapping (cgroup v1: `memory.memsw.limit_in_bytes` = "
		  "`memory.max` + this).",
	},
	[JK_WORKLOAD_TIMEOUT] = { KEY(WORKLOAD, "timeout", KT_DURATION, offsetof(struct job_workload, timeout_s)),
	  .min = JOB_TIMEOUT_MIN, .max = JOB_TIMEOUT_MAX, .rank = 1,
	  .doc_type = "duration, 0.1s to 168h",
	  .doc_default = "none",
	  .help = "Kill the run after this long; it is recorded as `timed-out`.",
	},
	[JK_WORKLOAD_FCOUNT] = { KEY(WORKLOAD, "fcount", KT_FUNCTIONS, offsetof(struct job_workload, fcount)),
	  .off_n = offsetof(struct job_workload, n_fcount), .flags = KF_MULTILINE, .rank = 1,
	  .doc_type = "kernel function names",
	  .doc_default = "none",
	  .help = "Count calls of these functions, machine-wide, during each run, as `fcount.NAME` metrics (unit "
		  "`calls`), e.g. `fcount = lru_add_drain`. kab uses the function tracer (one tracefs instance per "
		  "function, the count from its buffer's entries plus overruns) or else kprobe events, mounts tracefs "
		  "if needed and removes everything after (journaled). Where the kernel refuses (tracing locked down, a "
		  "function that is not traceable) the run goes on; the metric is recorded unavailable with the "
		  "kernel's reason and listed under \"Not measured on this machine\" in the report.",
	},
	[JK_WORKLOAD_OOM] = { KEY(WORKLOAD, "oom", KT_ENUM, offsetof(struct job_workload, oom)),
	  .choices = oom_choices, .rank = 1,
	  .doc_type = "`refuse`, `tolerate`",
	  .doc_default = "`refuse`",
	  .help = "A run during which the memcg OOM killer fired (`memory.events` `oom_kill` on cgroup v2, "
		  "`memory.oom_control` on v1) but that exited 0 is `oom-contaminated` and not counted; `tolerate` "
		  "counts it (`ok`), and the report's workload header says how many counted runs had kills. A workload "
		  "that failed with kills is `oom-killed` either way.",
	},
	[JK_WORKLOAD_EXPECT] = { KEY(WORKLOAD, "expect", KT_EXPECT, offsetof(struct job_workload, expect)),
	  .off_n = offsetof(struct job_workload, n_expect), .flags = KF_MULTILINE, .rank = 1, .print = job_print_expect,
	  .doc_type = "`METRIC OP NUMBER`, comma- or space-separated; OP one of `>` `>=` `<` `<=` `==` `!=`",
	  .doc_default = "none",
	  .help = "What every run's own metrics must show to be counted, e.g. `expect = vmstat.pswpout > 0` (the "
		  "workload reached swap) or `vmstat.pgscan_anon > 0` (it reached reclaim). A run that exited 0 but "
		  "misses one is `expect-failed`, not counted, listed with the metric, its value and the comparison (or "
		  "\"the run recorded no METRIC\"). METRIC is one metric by its full name (no `*`), as the report names "
		  "it; kab check refuses malformed comparisons, a pattern and numbers that are not finite.",
	},
	[JK_WORKLOAD_EXPECT_VARIANT] = { KEY(WORKLOAD, "expect.VARIANT", KT_DOC, 0),
	  .flags = KF_UNLISTED,
	  .doc_type = "as `expect`",
	  .doc_default = "none",
	  .help = "The same for the runs of one variant (its `name`), for the evidence that variant sets: "
		  "`expect.64K-mTHP = pageout.large_folio_pct >= 90` (its folios did not fall back to 4K). Both "
		  "`expect` and `expect.VARIANT` apply to that variant's runs.",
	},
	[JK_METRIC_DIRECTION] = { KEY(METRIC, "direction", KT_ENUM, offsetof(struct job_metric, direction)),
	  .choices = direction_choices, .values = direction_values, .flags = KF_UNSET, .unset = DIRECTION_UNSET,
	  .doc_type = "`higher`, `lower`, `neutral`",
	  .doc_default = "metric table",
	  .help = "Which way is better. A significant change of a neutral metric is reported as `changed`, of the "
		  "others as `better` or `worse`.",
	},
	[JK_METRIC_UNIT] = { KEY(METRIC, "unit", KT_UNIT, offsetof(struct job_metric, unit)),
	  .doc_type = "word, no spaces",
	  .doc_default = "metric table",
	  .help = "Unit shown in reports (`ops/s`, `ms`, `pages`).",
	},
	[JK_METRIC_MIN_CHANGE] = { KEY(METRIC, "min_change", KT_PERCENT, offsetof(struct job_metric, min_change_pct)),
	  .flags = KF_UNSET, .unset = -1,
	  .doc_type = "percentage, above 0% up to 100%",
	  .doc_default = "`1%`",
	  .help = "The smallest change worth a verdict: `better`/`worse`/`changed` need \\|Δ%\\| at least this (and p < "
		  "0.05, the 95% interval clear of 0). `2%` or `2`.",
	},
	[JK_METRIC_EQUIVALENCE] = { KEY(METRIC, "equivalence", KT_PERCENT, offsetof(struct job_metric, equivalence_pct)),
	  .flags = KF_UNSET, .unset = -1,
	  .doc_type = "percentage, above 0% up to 100%",
	  .doc_default = "`2%`",
	  .help = "The margin of `same`: the 90% interval of the change inside ±this (two one-sided tests). It never "
		  "widens with the noise. `epsilon` is read as its older name.",
	},
	[JK_METRIC_EPSILON] = { KEY(METRIC, "epsilon", KT_PERCENT, offsetof(struct job_metric, equivalence_pct)),
	  .flags = KF_ALIAS,
	},
	[JK_METRIC_LABEL] = { KEY(METRIC, "label", KT_TEXT, offsetof(struct job_metric, label)),
	  .max = JOB_LABEL_MAX,
	  .doc_type = "text, at most 64 characters",
	  .doc_default = "metric table",
	  .help = "Row label in cover letters and Markdown (`bogo ops/s`, `TLB shootdowns`).",
	},
	[JK_REPORT_ROWS] = { KEY(REPORT, "rows", KT_METRICS, offsetof(struct job, report_rows)),
	  .off_n = offsetof(struct job, n_report_rows), .flags = KF_MULTILINE,
	  .doc_type = "metric names, space-separated",
	  .doc_default = "the job's `primary` and `metrics`",
	  .help = "The cover letter's rows, written like `metrics` (`SOURCE.NAME` or `SOURCE.PREFIX*`), in place of "
		  "`primary` and `metrics`; a metric named here is collected even when no other list names it. The "
		  "text, Markdown, JSON and CSV formats are unchanged by it. May span continuation lines.",
	},
	[JK_JOB_BISECT] = { KEY(JOB, "bisect", KT_ENUM, offsetof(struct job, bisect)),
	  .choices = bisect_choices, .rank = 2,
	  .doc_type = "`off`, `auto`",
	  .doc_default = "`off`",
	  .help = "A nightly job's regressions bisected by themselves: when kabd's confirmation job confirms a change "
		  "point of this job, kabd asks for its bisection as `kab bisect --regression ID` does (submitter \"kabd "
		  "(bisect = auto)\"), with a budget of `bisect.boots`; a refusal (no clone of the tree yet, say) is "
		  "logged and recorded on the regression, once ([doc/bisect.md](bisect.md#started-by-itself-within-a-budget)). Needs a "
		  "variant kab builds from a tree (`kernel = build` with `tree`) or that boots builds of one (`build = "
		  "ID`, each commit built by a build machine): `kab check` refuses it on a job of `kernel = running` or "
		  "`image` variants only.",
	},
	[JK_JOB_BISECT_BOOTS] = { KEY(JOB, "bisect.boots", KT_UINT, offsetof(struct job, bisect_boots)),
	  .min = 1, .max = JOB_BISECT_BOOTS_MAX, .def = "300" /* JOB_BISECT_BOOTS_DEFAULT */, .rank = 2, .shown = job_shown_bisect_boots,
	  .doc_type = "1 to 100000",
	  .doc_default = "`300`",
	  .help = "The boots a bisection of this job may spend on its step jobs (two a pair), for `bisect = auto` and "
		  "as the default of `kab bisect --boots`. Before it queues a step job that would go over it, the "
		  "bisection ends `failed` with the range it had narrowed to. 300: a clear effect (4× the noise or "
		  "more) was bisected with 100 to 200 boots on average at 64 to 1024 commits "
		  "([doc/bisect.md](bisect.md#measured-the-simulation)); a bisection that needs more mostly ends with "
		  "no culprit. Needs a variant kab builds from a tree, as `bisect` does.",
	},
	[JK_JOB_BISECT_REVERT] = { KEY(JOB, "bisect.revert", KT_ENUM, offsetof(struct job, bisect_revert)),
	  .choices = yesno_choices, .rank = 2, .shown = job_shown_bisect_controls,
	  .doc_type = "`no`, `yes`",
	  .doc_default = "`no`",
	  .help = "A control of a bisection's culprit once it is confirmed against its parent: BAD with the culprit "
		  "reverted (git's three-way revert, made in kab's clone) against BAD, paired; the revert must give the "
		  "effect back, by the confirmation's rule, or the culprit is reported unconfirmed. A revert that does "
		  "not apply on BAD is reported as not applicable, the culprit kept ([doc/bisect.md](bisect.md#controls)). "
		  "Needs a variant kab builds from a tree (`kernel = build` with `tree`): `kab check` refuses it when "
		  "the variant a bisection measures boots recorded builds (`build = ID`), which cannot be rebuilt.",
	},
	[JK_JOB_BISECT_ALIGN] = { KEY(JOB, "bisect.align", KT_ENUM, offsetof(struct job, bisect_align)),
	  .choices = yesno_choices, .rank = 2, .shown = job_shown_bisect_controls,
	  .doc_type = "`no`, `yes`",
	  .doc_default = "`no`",
	  .help = "A control of a bisection's confirmed culprit: the culprit and its parent both rebuilt with "
		  "`CONFIG_DEBUG_FORCE_FUNCTION_ALIGN_64B` and `CONFIG_DEBUG_FORCE_DATA_SECTION_ALIGNED` (those the "
		  "tree's `lib/Kconfig.debug` has; the report names them) and compared again, paired. When the effect "
		  "vanishes (its CI holds 0 and lies clear of half the effect) the answer is \"layout-sensitive\": the "
		  "commit moved code or data, not the metric, and is not reported as a regression's first bad commit. "
		  "Needs a variant kab builds from a tree, as `bisect.revert` does.",
	},
	[JK_JOB_LAB_ON] = { KEY(JOB, "lab.on", KT_TEXT, offsetof(struct job, lab_on)),
	  .max = 1023, .off_line = offsetof(struct job, lab_on_line), .rank = 2,
	  .doc_type = "a lab selector (`host=lab3`, `tag=numa cpus>=64`)",
	  .doc_default = "none (any machine)",
	  .help = "The machines of a lab the job may run on, when it is submitted to the lab (`kab submit --lab`) "
		  "without `--on`: terms as `--on` takes them ([doc/lab.md](lab.md#how-the-lab-works)), checked by "
		  "`kab check`. A tracked nightly submitted to a lab must name one: its history, change points and "
		  "confirmation jobs are the machine's that runs it, so `host=NAME` keeps every night on one machine "
		  "(a class such as `tag=NAME` spreads its nights over several, each with a history of its own). A "
		  "local run ignores it.",
	},
	/* keys no code names: no id, in any section's order of addition */
	{ KEY(SWAP, "zswap.accept_threshold_percent", KT_INT, offsetof(struct job_swap, zswap_accept_threshold)),
	  .min = 0, .max = 100, .flags = KF_UNSET, .unset = -1, .param = "accept_threshold_percent",
	  .doc_type = "0 to 100",
	  .doc_default = "`keep`",
	  .help = "zswap's hysteresis (`accept_threshold_percent`): once its pool has hit its limit, zswap "
		  "takes new pages again only when the pool has shrunk below this percent of the limit (the kernel's "
		  "default is 90); `100` turns the hysteresis off.",
	},
	{ KEY(METRIC, "ratio", KT_TEXT, offsetof(struct job_metric, ratio)),
	  .max = 256, .print = job_print_ratio,
	  .doc_type = "`METRIC / METRIC`",
	  .doc_default = "none",
	  .help = "Only in a `[metric ratio.NAME]`, which it makes a metric of its own: each run's first metric "
		  "divided by its second (`ratio = interrupts.TLB / vmstat.pswpout`, TLB shootdowns per page swapped "
		  "out), computed after the run and before its `expect` is judged (an `expect` may name it). Each side "
		  "is one metric a run records, not a prefix and not another ratio. A run whose second metric is 0 or "
		  "missing has no value; the report lists it under \"Not measured\" with the reason. Its unit is "
		  "`ratio` unless `unit` says otherwise, its direction neutral unless `direction` says.",
	},
};
#undef COND
#undef KEY
const size_t job_n_keys = ARRAY_SIZE(job_keydefs);
_Static_assert(ARRAY_SIZE(job_keydefs) >= JK_NAMED && ARRAY_SIZE(job_keydefs) <= JOB_N_KEYS_MAX,
	       "the named keys head the table, and JOB_N_KEYS_MAX has room for all");
