/* Which database a verb uses: the one --db names, else kabd's, kab.db in
 * the state directory, a directory root owns and kab checks (SECURITY.md,
 * "The database"), never whatever kab.db the current directory holds. */
#include "harness/cli/cmd.h"
#include "harness/base/statedir.h"
#include "harness/base/util.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

const char *cmd_db(const char *given, const char *state_dir, char *buf, size_t len)
{
	if (given)
		return given;
	int r = state_db_path(state_dir, buf, len);
	if (r < 0) {
		log_error("state directory \"%s\": not an absolute path without \".\", \"..\" or empty components; or give --db PATH",
			  state_dir ? state_dir : config_str(CONFIG_STATE_DIR));
		return NULL;
	}
	return buf;
}

int cmd_db_present(const char *db, const char *hint)
{
	if (access(db, F_OK) == 0)
		return 0;
	int e = errno;
	if (e == ENOENT)
		log_error("database %s does not exist (%s)", db, hint);
	else
		log_error("database %s: %s (%s)", db, strerror(e), hint);
	return 2;
}
