/* Which files a job may set as knobs: memory-management knobs by default
 * (SECURITY.md, "Knobs"), plus what the machine's operator adds with
 * knobs.allow in /etc/kab/machine.conf. A knob is matched on its
 * canonical path (symlinks resolved), so a link under /sys cannot lead a
 * job out of the list.
 *
 * A pattern is an absolute path under /proc/sys or /sys, or a sysctl name
 * ("vm.*", "kernel.numa_balancing"); in a component, "*" matches any
 * characters but "/" and "{a,b}" one of the words listed; a component
 * "**" matches any number of components, none included. */
#pragma once
#include "harness/base/util.h"

#include <stdbool.h>
#include <stddef.h>

/* One knobs.allow pattern of machine.conf, as written. */
struct knob_pattern {
	char *text;
	int line;
};

/* The pattern as a path pattern (vm.swappiness: /proc/sys/vm/swappiness,
 * and the same for wildcards) in *ret_path; -EINVAL with the reason in *ret_why when it is malformed. */
int knob_allow_parse(const char *pattern, char **ret_path, const char **ret_why);
/* Whether path pattern (from knob_allow_parse) matches an absolute path. */
bool knob_allow_match(const char *pattern_path, const char *path);
/* path (absolute, no "." or ".." component) with every symlink resolved;
 * components past the deepest existing directory are kept as written. */
int knob_allow_canonical(const char *path, char **ret);
/* Whether a canonical path may be set: one of extra's patterns matches
 * it, or a default pattern does and no default exception does. */
bool knob_allowed(const char *canonical, const struct knob_pattern *extra, size_t n_extra);
/* The default list for messages: the patterns, then "; not " and the
 * exceptions. */
void knob_allow_describe(struct strbuf *sb);
