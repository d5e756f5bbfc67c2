/* What a run ran on: kernel, boot, machine size, swap, cgroup version. */
#pragma once
#include <stddef.h>
struct store_run;
/* Fills the provenance fields of r (kernel, boot id, cmdline, CPUs,
 * MemTotal, swap, cgroup version). The settings (prov_settings) are
 * read apart, once the run's knobs are in force. */
int prov_fill(struct store_run *r);
int prov_boot_id(char *buf, size_t len);
/* The machine's mm and cpufreq settings as "key=value\n" lines, keys
 * being the files' paths (read under root, "" for this machine, a fixture
 * directory in tests): THP (enabled, defrag, shmem_enabled), every mTHP
 * size's enabled and shmem_enabled, MGLRU, vm.swappiness, every zswap
 * parameter, then "cpufreq.governor" (cpu0's, "none" without cpufreq,
 * "mixed: ..." when CPUs differ) and "cpufreq.turbo" (on, off, none). A
 * file the kernel lacks is left out. Truncated lines are never written.
 * store_setting_name names a key for display. */
void prov_settings(const char *root, char *buf, size_t len);
