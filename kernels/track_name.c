/* The names of a tracked branch (kernels/track.h): what git takes for a
 * ref name and never for an option, and a build's base ref that names a
 * track. Apart from track.c, which runs git,
 * so that the job parser links them alone (tests/fuzz/fuzz_job.c). */
#include "kernels/track.h"

#include <stdio.h>
#include <string.h>

bool ktrack_branch_ok(const char *name, const char **why)
{
	size_t n = strlen(name);
	const char *bad = NULL;
	if (!n)
		bad = "it is empty";
	else if (n > KTRACK_NAME_MAX)
		bad = "it is longer than 128 characters";
	else if (name[0] == '-')
		bad = "it starts with '-', which git would read as an option";
	else if (strcmp(name, "@") == 0)
		bad = "\"@\" is not a ref name";
	else if (strstr(name, "..") || strstr(name, "@{") || strstr(name, "//"))
		bad = "it has \"..\", \"@{\" or \"//\", which a git ref name cannot have";
	else if (name[0] == '/' || name[n - 1] == '/' || name[n - 1] == '.')
		bad = "it starts or ends with '/', or ends with '.'";
	for (const char *p = name; !bad && *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (ch < 0x20 || ch == 0x7f || strchr(" ~^:?*[\\", ch))
			bad = "it has a space, a control character or one of ~ ^ : ? * [ \\, which a git ref name cannot have";
		else if (ch == '.' && (p == name || p[-1] == '/'))
			bad = "a part of it starts with '.'";
		else if ((p[1] == '/' || p[1] == 0) && p - name >= 4 && strncmp(p - 4, ".lock", 5) == 0)
			bad = "a part of it ends with \".lock\"";
	}
	if (bad && why)
		*why = bad;
	return !bad;
}

bool ktrack_remote_ok(const char *name, const char **why)
{
	return ktrack_branch_ok(name, why);
}

bool ktrack_parse_ref(const char *ref, char remote[KTRACK_NAME_MAX + 1], char branch[KTRACK_NAME_MAX + 1])
{
	const char *sp = ref ? strchr(ref, ' ') : NULL, *why;
	if (!sp || sp == ref || (size_t)(sp - ref) > KTRACK_NAME_MAX || strlen(sp + 1) > KTRACK_NAME_MAX)
		return false;
	char r[KTRACK_NAME_MAX + 1], b[KTRACK_NAME_MAX + 1];
	snprintf(r, sizeof(r), "%.*s", (int)(sp - ref), ref);
	snprintf(b, sizeof(b), "%s", sp + 1);
	if (!ktrack_remote_ok(r, &why) || !ktrack_branch_ok(b, &why))
		return false;
	memcpy(remote, r, sizeof(r));
	memcpy(branch, b, sizeof(b));
	return true;
}
