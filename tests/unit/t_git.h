/* A generated git repository for the bisection's tests: a bare repository
 * of n commits on main, commit i adding file fi and saying "change i",
 * made with git fast-import; the commits' shas, oldest first, into shas. */
#pragma once
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static inline bool t_make_repo(const char *dir, int n, char (*shas)[41])
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "git init -q --bare %s && git -C %s symbolic-ref HEAD refs/heads/main && git -C %s fast-import --quiet",
		 dir, dir, dir);
	FILE *f = popen(cmd, "w");
	if (!f)
		return false;
	for (int i = 0; i < n; i++)
		fprintf(f, "commit refs/heads/main\ncommitter t <t@kab> %d +0000\ndata <<EOT\nchange %d\nEOT\nM 100644 inline f%d\ndata <<EOT\n%d\nEOT\n\n",
			1000000 + i, i, i, i);
	if (pclose(f) != 0)
		return false;
	snprintf(cmd, sizeof(cmd), "git -C %s rev-list --reverse main", dir);
	if (!(f = popen(cmd, "r")))
		return false;
	int i = 0;
	char line[64];
	while (i < n && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(shas[i++], 41, "%s", line);
	}
	return pclose(f) == 0 && i == n;
}
