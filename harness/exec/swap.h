/* Swap behind the workloads: a zram device or a swap file that kab makes,
 * enables and removes, or what the machine already has. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct swap_dev {
	char path[256];   /* /dev/zram3 or the swap file */
	int zram_id;      /* -1 for a file */
	bool active;
};

/* Creates /dev/zramN of size bytes (comp algorithm optional); *ret_id is
 * set as soon as the device exists so the caller can journal it. */
int swap_zram_add(uint64_t size, const char *algorithm, int *ret_id, struct strbuf *err);
int swap_zram_remove(int id);
/* A swap file kab makes as root and runs mkswap and swapon on by name:
 * its directory and every one above must be root's and closed to other
 * writers (statedir.h); -EPERM with the reason in err. */
int swap_path_trusted(const char *path, struct strbuf *err);
int swap_file_create(const char *path, uint64_t size, struct strbuf *err);
/* mkswap + swapon(2). priority < 0: kernel default. */
int swap_enable(const char *path, int priority, struct strbuf *err);
/* swapoff(2); ENOENT/EINVAL (not active) count as success. */
int swap_disable(const char *path);
bool swap_is_active(const char *path);
/* Total and device list from /proc/meminfo and /proc/swaps. */
int swap_describe(uint64_t *ret_total, char *ret_devices, size_t len);
