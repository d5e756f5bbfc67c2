/* kabd's door checks (Host, Origin, token, content type), the socket
 * peer's rights, secret files' owner and mode, and the client's idea of
 * loopback. */
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
	T_EQ_INT(secret_read_token(dir, &t), -EINVAL);  /* a directory */
	unlink(path);
	T_EQ_INT(secret_read_token(path, &t), -ENOENT);
	rmdir(dir);
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
	T_EQ_INT(client_init(&c, &sock), 0);  /* no token over the socket: not even read */
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
	test_client_loopback();
	return t_done("test_gate");
}
