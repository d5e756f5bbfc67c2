/* The kab subcommands; each takes argv with argv[0] the verb. Exit codes:
 * 0 success, 1 the work failed, 2 bad usage or bad input. */
#pragma once
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

/* The database of a verb that takes --db: given, else kab.db in the state
 * directory (state_dir, else $STATE_DIRECTORY, else /var/lib/kab), kabd's
 * own: put in buf. NULL, said, when the state directory is not a path. */
const char *cmd_db(const char *given, const char *state_dir, char *buf, size_t len);
/* A database a verb reads must be there: 0, else the reason said with
 * hint (what to give instead) and 2, the exit status. */
int cmd_db_present(const char *db, const char *hint);

/* The options of every verb that may ask a kabd, in its getopt_long
 * table: --url (-s; --server is its older name), --socket, --token-file
 * and --cacert, as 's', 'S', 't' and 'C'. */
/* clang-format off */
#define CMD_CLIENT_OPTIONS \
	{ "url", required_argument, NULL, 's' }, \
	{ "server", required_argument, NULL, 's' }, \
	{ "socket", required_argument, NULL, 'S' }, \
	{ "token-file", required_argument, NULL, 't' }, \
	{ "cacert", required_argument, NULL, 'C' }
/* clang-format on */

/* Each verb's long options, the getopt_long table it parses with; main's
 * verbs[] names them, and tests/docs/check.py holds doc/kab.1 to them. */
extern const struct option cmd_check_options[], cmd_run_options[], cmd_report_options[], cmd_history_options[],
	cmd_regressions_options[], cmd_plan_options[], cmd_compare_options[], cmd_submit_options[],
	cmd_client_options[], cmd_lab_options[], cmd_build_options[], cmd_builds_options[], cmd_sample_options[],
	cmd_config_options[], cmd_bisect_options[], cmd_export_options[];

int cmd_check(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_run(int argc, char **argv);
/* kab plan JOB: an A/A calibration and the pairs a change needs (harness/cli/cmd_plan.c) */
int cmd_plan(int argc, char **argv);
int cmd_report(int argc, char **argv);
/* kab history NAME: the nightly history of a job name (harness/cli/cmd_history.c) */
int cmd_history(int argc, char **argv);
int cmd_regressions(int argc, char **argv);
/* kab export --kcidb ID: a job as a KCIDB submission (harness/cli/cmd_export.c) */
int cmd_export(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_sample(int argc, char **argv);
/* kab config: the configuration in force (harness/cli/cmd_config.c) */
int cmd_config(int argc, char **argv);
/* kernel builds (harness/cli/cmd_build.c) */
int cmd_build(int argc, char **argv);
int cmd_builds(int argc, char **argv);
/* clients of kabd (harness/cli/cmd_client.c) */
int cmd_submit(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_lab(int argc, char **argv);
int cmd_cancel(int argc, char **argv);
/* kab report ID --socket PATH | --url URL: the report a kabd renders */
struct client_conf;
int client_report(const struct client_conf *conf, long long id, const char *format);
/* One request to kabd (GET, or POST with an empty body), its reply's body
 * to stdout: 0; else the server's error on stderr and 2 for 404 or 400
 * (an unknown id or name, bad input), 1 for others, CLIENT_EXIT_UNREACHABLE
 * when kabd cannot be reached. */
int client_print(const struct client_conf *conf, const char *method, const char *path);
/* An error reply on stderr: its "error" field, and its body when it lists
 * more ("errors"). */
struct client_reply;
void client_print_error(const struct client_reply *r);
/* One of CMD_CLIENT_OPTIONS, as getopt_long returned it (c, optarg), into cc: false when
 * c is none of them. */
bool cmd_client_option(int c, const char *arg, struct client_conf *cc);
