/* /etc/kab/machine.conf; see machine.h. */
#include "machine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MACHINE_CONF_DEFAULT "/etc/kab/machine.conf"

const char *machine_conf_path(void)
{
	const char *e = getenv("KAB_MACHINE_CONF");
	return e && *e ? e : MACHINE_CONF_DEFAULT;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

int machine_conf_load(struct machine_conf *mc, struct diags *d)
{
	static const char *const keys[] = { "switch" };
	*mc = (struct machine_conf){ 0 };
	snprintf(mc->path, sizeof(mc->path), "%s", machine_conf_path());
	_cleanup_free_ char *text = NULL;
	int r = util_read_file(mc->path, &text, NULL);
	if (r == -ENOENT)
		return 0;
	if (r < 0) {
		diags_add(d, mc->path, 0, "cannot read the machine's settings: %s", strerror(-r));
		return r;
	}
	int ret = 0, lineno = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		char *eq = strchr(s, '=');
		if (!eq) {
			diags_add(d, mc->path, lineno, "expected key = value, got \"%s\"", s);
			ret = -EINVAL;
			continue;
		}
		*eq = '\0';
		char *key = trim(s), *value = trim(eq + 1);
		if (strcmp(key, "switch") == 0) {
			if (strcmp(value, "kexec") != 0 && strcmp(value, "reboot") != 0) {
				diags_add(d, mc->path, lineno, "bad switch \"%s\" (choices: kexec, reboot)", value);
				ret = -EINVAL;
				continue;
			}
			mc->has_switch = true;
			mc->switch_mode = strcmp(value, "reboot") == 0 ? JOB_SWITCH_REBOOT : JOB_SWITCH_KEXEC;
			mc->switch_line = lineno;
			continue;
		}
		const char *hint = util_did_you_mean(key, keys, ARRAY_SIZE(keys));
		diags_add(d, mc->path, lineno, "unknown key \"%s\"%s%s%s (keys: switch)", key, hint ? ": did you mean \"" : "",
			  hint ? hint : "", hint ? "\"?" : "");
		ret = -EINVAL;
	}
	return ret;
}
