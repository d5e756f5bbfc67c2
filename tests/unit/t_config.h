/* The configuration a unit test runs with: resolved from the process's
 * environment as kab's main does, again after each of the test's setenv,
 * and installed for the library (which reads no environment itself). */
#pragma once
#include "harness/base/config.h"
#include "harness/base/util.h"

#include <stdlib.h>

static const char *t_getenv(const char *name)
{
	return getenv(name);
}

static inline void t_config_from_env(void)
{
	struct kab_config c;
	struct diags d = { 0 };
	config_resolve(&c, t_getenv, &d);
	diags_free(&d);
	config_use(&c);
}
