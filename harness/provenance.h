/* What a run ran on: kernel, boot, machine size, swap, cgroup version. */
#pragma once
#include <stddef.h>
struct store_run;
/* Fills the provenance fields of r (kernel, boot id, cmdline, CPUs,
 * MemTotal, swap, cgroup version). */
int prov_fill(struct store_run *r);
int prov_boot_id(char *buf, size_t len);
