/* kabd's door checks (Host, Origin, token, content type), the socket
 * peer's rights, secret files' owner and mode and the directories on
 * their path, and the client's idea of loopback. */
#include "harness/cli/client.h"
#include "harness/daemon/gate.h"
#include "harness/daemon/listen.h"
#include "harness/base/peer.h"
#include "harness/base/secret.h"
#include "t.h"
#include "harness/base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static struct gate tcp_gate(const char *listen_at, bool tls)
{
	struct sockaddr_storage a;
	bool lo;
	struct gate g;
	T_EQ_INT(listen_parse(listen_at, &a, &lo), 0);
	gate_init_tcp(&g, &a, tls);
	return g;
}

static void test_host(void)
{
	struct gate g = tcp_gate("127.0.0.1:8469", false);
	T_CHECK(gate_host_ok(&g, "127.0.0.1:8469"));
	T_CHECK(gate_host_ok(&g, "localhost:8469"));
	T_CHECK(gate_host_ok(&g, "LocalHost:8469"));
	T_CHECK(gate_host_ok(&g, "[::1]:8469"));
	T_CHECK(!gate_host_ok(&g, NULL));
	T_CHECK(!gate_host_ok(&g, ""));
	T_CHECK(!gate_host_ok(&g, "localhost"));          /* port 80 is not ours */
	T_CHECK(!gate_host_ok(&g, "localhost:8470"));
	T_CHECK(!gate_host_ok(&g, "evil.example:8469"));   /* DNS rebinding */
	T_CHECK(!gate_host_ok(&g, "localhost.evil.example:8469"));
	T_CHECK(!gate_host_ok(&g, "127.0.0.1:8469x"));
	T_CHECK(!gate_host_ok(&g, "127.0.0.1:"));
	T_CHECK(!gate_host_ok(&g, "::1:8469"));            /* IPv6 needs brackets */
	T_CHECK(!gate_host_ok(&g, "[::1]8469"));
	T_CHECK(!gate_host_ok(&g, "10.0.0.5:8469"));

	struct gate n = tcp_gate("10.0.0.5:443", true);
	n.names[n.n_names++] = "kab.lab.example";
	T_CHECK(gate_host_ok(&n, "10.0.0.5:443"));
	T_CHECK(gate_host_ok(&n, "10.0.0.5"));             /* https's default port */
	T_CHECK(gate_host_ok(&n, "kab.lab.example"));
	T_CHECK(gate_host_ok(&n, "KAB.lab.example:443"));
	T_CHECK(!gate_host_ok(&n, "10.0.0.6:443"));
	T_CHECK(!gate_host_ok(&n, "lab.example:443"));

	struct gate v6 = tcp_gate("[fd00::5]:8469", true);
	T_CHECK(gate_host_ok(&v6, "[fd00::5]:8469"));
	T_CHECK(gate_host_ok(&v6, "[fd00:0::5]:8469"));    /* the same address written longer */
	T_CHECK(!gate_host_ok(&v6, "[fd00::6]:8469"));

	struct gate u = { .unix_socket = true };
	T_CHECK(gate_host_ok(&u, NULL));
	T_CHECK(gate_host_ok(&u, "localhost"));
	T_CHECK(!gate_host_ok(&u, "localhost:8469"));
	T_CHECK(!gate_host_ok(&u, "evil.example"));
	char buf[256];
	gate_describe(&n, buf, sizeof(buf));
	T_EQ_STR(buf, "127.0.0.1:443, localhost:443, [::1]:443, 10.0.0.5:443, kab.lab.example:443");
}

static void test_origin(void)
{
	struct gate g = tcp_gate("127.0.0.1:8469", false);
	T_CHECK(gate_origin_ok(&g, NULL));
	T_CHECK(gate_origin_ok(&g, "http://127.0.0.1:8469"));
	T_CHECK(gate_origin_ok(&g, "http://localhost:8469"));
	T_CHECK(!gate_origin_ok(&g, "https://localhost:8469"));  /* another scheme, another origin */
	T_CHECK(!gate_origin_ok(&g, "http://evil.example"));
	T_CHECK(!gate_origin_ok(&g, "http://evil.example:8469"));
	T_CHECK(!gate_origin_ok(&g, "null"));
	T_CHECK(!gate_origin_ok(&g, "http://localhost:8469/"));
	T_CHECK(!gate_origin_ok(&g, "http://x@localhost:8469"));
	T_CHECK(!gate_origin_ok(&g, ""));
	struct gate t = tcp_gate("10.0.0.5:443", true);
	T_CHECK(gate_origin_ok(&t, "https://10.0.0.5"));
	T_CHECK(!gate_origin_ok(&t, "http://10.0.0.5:443"));
	struct gate u = { .unix_socket = true };
	T_CHECK(gate_origin_ok(&u, NULL));
	T_CHECK(!gate_origin_ok(&u, "http://localhost"));
}

static void test_content_type_and_token(void)
{
	T_CHECK(gate_content_type_ok("application/x-kab-job"));
	T_CHECK(gate_content_type_ok("Application/X-Kab-Job; charset=utf-8"));
	T_CHECK(gate_content_type_ok(" application/x-kab-job ;charset=utf-8"));
	T_CHECK(!gate_content_type_ok(NULL));
	T_CHECK(!gate_content_type_ok("text/plain"));
	T_CHECK(!gate_content_type_ok("application/x-www-form-urlencoded"));
	T_CHECK(!gate_content_type_ok("multipart/form-data; boundary=x"));
	T_CHECK(!gate_content_type_ok("application/x-kab-jobs"));
	T_CHECK(!gate_content_type_ok("application/x-kab-jo"));
	T_CHECK(gate_token_ok("s3cret-token", "Bearer s3cret-token"));
	T_CHECK(!gate_token_ok("s3cret-token", "Bearer s3cret-toke"));
	T_CHECK(!gate_token_ok("s3cret-token", "Bearer s3cret-tokenX"));
	T_CHECK(!gate_token_ok("s3cret-token", "s3cret-token"));
	T_CHECK(!gate_token_ok("s3cret-token", NULL));
	T_CHECK(!gate_token_ok(NULL, "Bearer x"));
}

static void test_peer(void)
{
	int sv[2];
	T_EQ_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	struct peer p = { .uid = 12345 };
	T_EQ_INT(peer_get(sv[0], &p), 0);
	T_EQ_INT(p.uid, getuid());
	T_EQ_INT(p.pid, getpid());
	close(sv[0]);
	close(sv[1]);
	int fd = open("/dev/null", O_RDONLY);
	T_CHECK(peer_get(fd, &p) < 0);  /* not a socket */
	close(fd);

	T_CHECK(peer_may_submit(0, PEER_NO_GROUP));
	gid_t g;
	T_EQ_INT(peer_group_gid("root", &g), 0);
	T_EQ_INT(g, 0);
	T_EQ_INT(peer_group_gid("no-such-group-kab-test", &g), -ENOENT);
	/* nobody is not in group root, and no group means root only */
	const struct passwd *nb = getpwnam("nobody");
	if (nb && nb->pw_gid != 0) {
		T_CHECK(!peer_may_submit(nb->pw_uid, 0));
		T_CHECK(!peer_may_submit(nb->pw_uid, PEER_NO_GROUP));
		T_CHECK(peer_may_submit(nb->pw_uid, nb->pw_gid));  /* its primary group */
	}
	T_CHECK(!peer_may_submit(4000000000u, 65534));  /* no such user */
	char buf[64];
	peer_describe(0, buf, sizeof(buf));
	T_EQ_STR(buf, "uid 0 (root)");
	peer_describe(4000000000u, buf, sizeof(buf));
	T_EQ_STR(buf, "uid 4000000000");
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	unlink(path);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	T_CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

static void test_secret(void)
{
	char dir[] = "/tmp/kab-test-gate.XXXXXX", path[64];
	T_CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/token", dir);
	char *t = NULL;
	write_file(path, "abcdefgh1234\n", 0600);
	if (geteuid() == 0) {
		T_EQ_INT(secret_read_token(path, &t), 0);
		T_EQ_STR(t, "abcdefgh1234");
		free(t);
		t = NULL;
		write_file(path, "abcdefgh1234\n", 0644);
		T_EQ_INT(secret_read_token(path, &t), -EPERM);
		write_file(path, "abcdefgh1234\n", 0620);
		T_EQ_INT(secret_read_token(path, &t), -EPERM);
		write_file(path, "abcdefgh1234\n", 0600);
		T_EQ_INT(chown(path, 65534, 0), 0);
		T_EQ_INT(secret_read_token(path, &t), -EPERM);
		write_file(path, "short\n", 0600);
		T_EQ_INT(secret_read_token(path, &t), -EINVAL);
		write_file(path, "two words\n", 0600);
		T_EQ_INT(secret_read_token(path, &t), -EINVAL);
		T_CHECK(t == NULL);
	} else {
		t_skip("secret_read_token of a token file", "needs root (the file must be root's)");
	}
	/* not root: dir is not root's, refused before anything in it is looked at */
	int not_root = geteuid() == 0 ? 0 : -EPERM;
	T_EQ_INT(secret_read_token(dir, &t), not_root ? not_root : -EINVAL); /* a directory */
	unlink(path);
	T_EQ_INT(secret_read_token(path, &t), not_root ? not_root : -ENOENT);
	rmdir(dir);
}

/* err holds each of words (NULL-terminated; NULL: none asked) */
static void says(const struct strbuf *err, const char *const *words)
{
	for (; words && *words; words++) {
		bool found = err->buf && strstr(err->buf, *words);
		T_CHECK(found);
		if (!found)
			fprintf(stderr, "  no \"%s\" in \"%s\"\n", *words, err->buf ? err->buf : "");
	}
}

/* secret_open on root/rel as kab's euid: its return, and err holding
 * each of the words (NULL-terminated) when it failed */
static int open_secret(const char *root, const char *rel, const char *const *words)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	struct strbuf err = { 0 };
	int fd = -1;
	int r = secret_open(path, "test secret", geteuid(), &fd, &err);
	if (r == 0) {
		T_CHECK(fd >= 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC);
		char buf[16] = "";
		T_CHECK(read(fd, buf, sizeof(buf) - 1) > 0 && strcmp(buf, "s3cret\n") == 0);
		close(fd);
	}
	says(&err, words);
	sb_free(&err);
	return r;
}

static void at(char *buf, const char *root, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", root, rel);
}

/* a tree under a 0700 mkdtemp directory (in /tmp, which is passed: sticky):
 * a/b/secret clean, then each way a directory on its path could let
 * another user swap it */
static void test_secret_path(void)
{
	char root[] = "/tmp/kab-test-secret.XXXXXX", p[PATH_MAX], q[PATH_MAX];
	T_CHECK(mkdtemp(root) != NULL);
	bool is_root = geteuid() == 0;
	at(p, root, "a");
	T_EQ_INT(mkdir(p, 0755), 0);
	at(p, root, "a/b");
	T_EQ_INT(mkdir(p, 0700), 0);
	at(p, root, "a/b/secret");
	write_file(p, "s3cret\n", 0600);

	T_EQ_INT(open_secret(root, "a/b/secret", NULL), 0);
	T_EQ_INT(open_secret(root, "a/./b/../b//secret", NULL), 0);
	T_EQ_INT(open_secret(root, "a/b", (const char *[]){ "is a directory", NULL }), -EINVAL);
	T_EQ_INT(open_secret(root, "a/b/secret/x", (const char *[]){ "not a directory", NULL }), -ENOTDIR);
	T_EQ_INT(open_secret(root, "a/b/none", (const char *[]){ "No such file", NULL }), -ENOENT);

	/* relative, from the working directory's path */
	int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	at(p, root, "a");
	T_CHECK(cwd >= 0 && chdir(p) == 0);
	T_EQ_INT(open_secret(".", "b/secret", NULL), 0);
	T_CHECK(fchdir(cwd) == 0);
	close(cwd);

	/* a directory its group may write: refused, named, with the chmod */
	at(p, root, "a/b");
	T_EQ_INT(chmod(p, 0770), 0);
	char fix[PATH_MAX + 16];
	snprintf(fix, sizeof(fix), "chmod go-w %s)", p);
	T_EQ_INT(open_secret(root, "a/b/secret", (const char *[]){ p, "mode 0770", fix, NULL }), -EPERM);
	T_EQ_INT(chmod(p, 0700), 0);

	/* a symlink's target is walked as the path is: symlinks, absolute and
	 * relative, to the clean file pass; one into a directory others may
	 * write is refused, naming that directory */
	at(p, root, "a/b/secret");
	at(q, root, "abs");
	T_EQ_INT(symlink(p, q), 0);
	T_EQ_INT(open_secret(root, "abs", NULL), 0);
	at(q, root, "rel");
	T_EQ_INT(symlink("a/b", q), 0);
	T_EQ_INT(open_secret(root, "rel/secret", NULL), 0);
	at(p, root, "w");
	T_EQ_INT(mkdir(p, 0777), 0);
	T_EQ_INT(chmod(p, 0777), 0);
	at(q, root, "w/secret");
	write_file(q, "s3cret\n", 0600);
	at(q, root, "tow");
	T_EQ_INT(symlink("w", q), 0);
	T_EQ_INT(open_secret(root, "tow/secret", (const char *[]){ p, "mode 0777", "chmod go-w", NULL }), -EPERM);
	at(q, root, "loop");
	T_EQ_INT(symlink("loop", q), 0);
	T_EQ_INT(open_secret(root, "loop/secret", NULL), -ELOOP);

	/* sticky and open to all, as /tmp: passed on the way to a directory of
	 * kab's owner, refused as the secret's own directory */
	at(p, root, "w");
	T_EQ_INT(chmod(p, 01777), 0);
	at(q, root, "w/d");
	T_EQ_INT(mkdir(q, 0700), 0);
	at(q, root, "w/d/secret");
	write_file(q, "s3cret\n", 0600);
	T_EQ_INT(open_secret(root, "w/d/secret", NULL), 0);
	T_EQ_INT(open_secret(root, "w/secret", (const char *[]){ p, "mode 1777", "sticky bit", "/etc/kab", NULL }), -EPERM);

	if (is_root) {
		/* a directory owned by nobody: refused, with the chown */
		at(p, root, "a/b");
		T_EQ_INT(chown(p, 65534, 65534), 0);
		snprintf(fix, sizeof(fix), "chown root %s; chmod go-w %s)", p, p);
		T_EQ_INT(open_secret(root, "a/b/secret", (const char *[]){ p, "owner uid 65534", fix, NULL }), -EPERM);
		T_EQ_INT(open_secret(root, "rel/secret", (const char *[]){ p, "owner uid 65534", NULL }), -EPERM);
		T_EQ_INT(chown(p, 0, 0), 0);
		/* a symlink into a directory owned by nobody: refused, naming it */
		at(p, root, "n");
		T_EQ_INT(mkdir(p, 0700), 0);
		T_EQ_INT(chown(p, 65534, 65534), 0);
		at(q, root, "n/secret");
		write_file(q, "s3cret\n", 0600);
		at(q, root, "ton");
		T_EQ_INT(symlink(p, q), 0);
		T_EQ_INT(open_secret(root, "ton/secret", (const char *[]){ p, "owner uid 65534", NULL }), -EPERM);
		/* a symlink owned by nobody, though it points to the clean file */
		at(q, root, "abs");
		T_EQ_INT(lchown(q, 65534, 65534), 0);
		T_EQ_INT(open_secret(root, "abs", (const char *[]){ q, "symlink", "chown -h root", NULL }), -EPERM);
		/* in /tmp, a directory of nobody's passed to: refused */
		at(p, root, "w/d");
		T_EQ_INT(chown(p, 65534, 65534), 0);
		T_EQ_INT(open_secret(root, "w/d/secret", (const char *[]){ p, "owner uid 65534", NULL }), -EPERM);
	} else {
		t_skip("secret_open through a directory or symlink of nobody's", "needs root (chown)");
	}
	/* the token file is read through the same walk */
	if (is_root) {
		char *t = NULL;
		at(p, root, "a/b");
		T_EQ_INT(chmod(p, 0750), 0);
		at(q, root, "a/b/token");
		write_file(q, "abcdefgh1234\n", 0600);
		T_EQ_INT(secret_read_token(q, &t), 0);
		free(t);
		t = NULL;
		T_EQ_INT(chmod(p, 0770), 0);
		T_EQ_INT(secret_read_token(q, &t), -EPERM);
		T_CHECK(t == NULL);
	}
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	T_EQ_INT(system(cmd), 0);
}

/* secret_open_trusted on root/rel as kab's euid: its return, and err
 * holding each of the words (NULL-terminated) when it failed */
static int open_trusted(const char *root, const char *rel, const char *const *words)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	struct strbuf err = { 0 };
	int fd = -1;
	int r = secret_open_trusted(path, "test file", geteuid(), &fd, &err);
	if (r == 0) {
		T_CHECK(fd >= 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC);
		close(fd);
	}
	says(&err, words);
	sb_free(&err);
	return r;
}

/* Files that decide what kab trusts (machine.conf, a CA, a certificate):
 * the walk and where they may sit as for a secret; the file root's or
 * kab's, not writable by group or others, readable by all */
static void test_trusted_path(void)
{
	char root[] = "/tmp/kab-test-trusted.XXXXXX", p[PATH_MAX], q[PATH_MAX], fix[PATH_MAX + 16];
	T_CHECK(mkdtemp(root) != NULL);
	at(p, root, "etc");
	T_EQ_INT(mkdir(p, 0755), 0);
	at(p, root, "etc/ca.pem");
	write_file(p, "trust\n", 0644);

	/* readable by all: trusted, though no secret */
	T_EQ_INT(open_trusted(root, "etc/ca.pem", NULL), 0);
	T_EQ_INT(open_secret(root, "etc/ca.pem", (const char *[]){ "mode 0644", "chmod 600", NULL }), -EPERM);
	char *text = NULL;
	size_t len = 0;
	struct strbuf err = { 0 };
	T_EQ_INT(secret_read_trusted(p, "test file", geteuid(), &text, &len, &err), 0);
	T_CHECK(text && len == 6 && strcmp(text, "trust\n") == 0);
	free(text);
	write_file(p, "trust\n", 0600);
	T_EQ_INT(open_trusted(root, "etc/ca.pem", NULL), 0);

	/* writable by group or others: refused, named, with the chmod */
	snprintf(fix, sizeof(fix), "(chmod go-w %s)", p);
	write_file(p, "trust\n", 0664);
	T_EQ_INT(open_trusted(root, "etc/ca.pem", (const char *[]){ p, "mode 0664", "decides what kab trusts", fix, NULL }), -EPERM);
	write_file(p, "trust\n", 0646);
	T_EQ_INT(open_trusted(root, "etc/ca.pem", (const char *[]){ "mode 0646", fix, NULL }), -EPERM);
	T_EQ_INT(secret_read_trusted(p, "test file", geteuid(), &text, &len, &err), -EPERM);
	T_CHECK(err.buf && strstr(err.buf, fix));
	sb_free(&err);
	write_file(p, "trust\n", 0644);
	T_EQ_INT(open_trusted(root, "etc", (const char *[]){ "is a directory", NULL }), -EINVAL);
	T_EQ_INT(open_trusted(root, "etc/none", (const char *[]){ "No such file", NULL }), -ENOENT);

	/* its directory writable by its group: refused, naming the directory */
	at(q, root, "etc");
	T_EQ_INT(chmod(q, 0775), 0);
	snprintf(fix, sizeof(fix), "(chmod go-w %s)", q);
	T_EQ_INT(open_trusted(root, "etc/ca.pem", (const char *[]){ q, "mode 0775", fix, NULL }), -EPERM);
	T_EQ_INT(chmod(q, 0755), 0);

	/* a sticky directory open to all: passed, but no home for the file */
	at(q, root, "t");
	T_EQ_INT(mkdir(q, 01777), 0);
	T_EQ_INT(chmod(q, 01777), 0);
	at(q, root, "t/ca.pem");
	write_file(q, "trust\n", 0644);
	T_EQ_INT(open_trusted(root, "t/ca.pem", (const char *[]){ "mode 1777", "a file kab trusts", "/etc/kab", NULL }), -EPERM);
	at(q, root, "t/d");
	T_EQ_INT(mkdir(q, 0755), 0);
	at(q, root, "t/d/ca.pem");
	write_file(q, "trust\n", 0644);
	T_EQ_INT(open_trusted(root, "t/d/ca.pem", NULL), 0);

	if (geteuid() == 0) {
		/* of nobody's: refused, with the chown; its symlink too */
		T_EQ_INT(chown(p, 65534, 65534), 0);
		snprintf(fix, sizeof(fix), "(chown root %s; chmod go-w %s)", p, p);
		T_EQ_INT(open_trusted(root, "etc/ca.pem", (const char *[]){ "owner uid 65534", fix, NULL }), -EPERM);
		T_EQ_INT(chown(p, 0, 0), 0);
		at(q, root, "link");
		T_EQ_INT(symlink(p, q), 0);
		T_EQ_INT(open_trusted(root, "link", NULL), 0);
		T_EQ_INT(lchown(q, 65534, 65534), 0);
		T_EQ_INT(open_trusted(root, "link", (const char *[]){ q, "a trusted file's path", "chown -h root", NULL }), -EPERM);
		/* its directory of nobody's */
		at(q, root, "etc");
		T_EQ_INT(chown(q, 65534, 65534), 0);
		T_EQ_INT(open_trusted(root, "etc/ca.pem", (const char *[]){ q, "owner uid 65534", "chown root", NULL }), -EPERM);
		T_EQ_INT(chown(q, 0, 0), 0);
	} else {
		t_skip("secret_open_trusted of a file, symlink or directory of nobody's", "needs root (chown)");
	}

	/* the CLI's --token-file: the user's own, 0600, a token's form */
	struct client c;
	at(q, root, "etc/token");
	struct client_conf cf = { .url = "http://127.0.0.1:8469", .token_file = q };
	write_file(q, "abcdefgh1234\n", 0600);
	T_EQ_INT(client_init(&c, &cf), 0);
	T_EQ_STR(c.token ? c.token : "", "abcdefgh1234");
	client_clear(&c);
	write_file(q, "abcdefgh1234\n", 0640);
	T_EQ_INT(client_init(&c, &cf), -EPERM);
	write_file(q, "short\n", 0600);
	T_EQ_INT(client_init(&c, &cf), -EINVAL);
	write_file(q, "abcdefgh1234\n", 0600);
	at(p, root, "etc");
	T_EQ_INT(chmod(p, 0775), 0);
	T_EQ_INT(client_init(&c, &cf), -EPERM);
	T_EQ_INT(chmod(p, 0755), 0);

	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	T_EQ_INT(system(cmd), 0);
}

static void test_client_loopback(void)
{
	T_CHECK(client_url_loopback("http://127.0.0.1:8469"));
	T_CHECK(client_url_loopback("http://127.1.2.3:8469/"));
	T_CHECK(client_url_loopback("http://localhost:8469"));
	T_CHECK(client_url_loopback("http://[::1]:8469"));
	T_CHECK(client_url_loopback("http://[::ffff:127.0.0.1]:8469"));
	T_CHECK(!client_url_loopback("http://10.0.0.5:8469"));
	T_CHECK(!client_url_loopback("http://localhost.evil.example:8469"));
	T_CHECK(!client_url_loopback("http://127.0.0.1.evil.example"));
	T_CHECK(!client_url_loopback("http://127.0.0.1@evil.example:8469"));
	T_CHECK(!client_url_loopback("http://[fd00::1]:8469"));
	T_CHECK(!client_url_loopback("127.0.0.1:8469"));
	T_CHECK(!client_url_loopback("http://"));

	/* the token never goes over plain http off loopback */
	struct client c;
	struct client_conf cf = { .url = "http://10.0.0.5:8469", .token_file = "/nonexistent" };
	T_EQ_INT(client_init(&c, &cf), -EPERM);
	cf.url = "ftp://127.0.0.1:8469";
	T_EQ_INT(client_init(&c, &cf), -EINVAL);
	struct client_conf sock = { .socket = "/run/kab/kabd.sock", .token_file = "/nonexistent" };
	T_EQ_INT(client_init(&c, &sock), 0); /* no token over the socket: not even read */
	T_EQ_STR(c.socket, "/run/kab/kabd.sock");
	T_EQ_STR(c.base, "http://localhost");
	T_CHECK(c.token == NULL);
	client_clear(&c);
}

int main(void)
{
	log_quiet = true;
	test_host();
	test_origin();
	test_content_type_and_token();
	test_peer();
	test_secret();
	test_secret_path();
	test_trusted_path();
	test_client_loopback();
	return t_done("test_gate");
}
