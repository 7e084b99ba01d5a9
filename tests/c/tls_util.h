/* SPDX-License-Identifier: MIT */
/*
 * tls_util.h — helpers for the TLS tests (include after net_util.h).
 *
 *   pki_make()        a fresh temporary CA, a server certificate for
 *                     "localhost" and 127.0.0.1, a client certificate, and
 *                     a second CA's server certificate (untrusted), made by
 *                     the openssl command at test time; pki_free removes it
 *   peer_spawn()      runs a real TLS peer (openssl, python3) with its
 *                     stdout on a pipe; peer_port() parses the port it
 *                     printed; peer_wait() runs the loop until it exits
 *   tls_conf()        a config from files of the pki
 */
#ifndef LIBLOOP_TEST_TLS_UTIL_H
#define LIBLOOP_TEST_TLS_UTIL_H

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

struct pki {
    char dir[64];
    char ca[128], cert[128], key[128], ccert[128], ckey[128], evil_cert[128], evil_key[128], evil_ca[128];
};

static inline int pki_sh(const char *cmd) {
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc;
}

/* Makes the certificates with openssl (EC P-256 keys: quick to make). */
static inline int pki_make(struct pki *p) {
    strcpy(p->dir, "/tmp/ll-tls-XXXXXX");
    if (mkdtemp(p->dir) == NULL)
        return -1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd %s && "
             "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > srv.ext && "
             "printf 'extendedKeyUsage=clientAuth\\n' > cli.ext && "
             "for ca in ca evil; do openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
             "  -keyout $ca.key -out $ca.pem -days 2 -subj /CN=$ca-test-ca >/dev/null 2>&1 || exit 1; done && "
             "for n in srv:ca evilsrv:evil cli:ca; do leaf=${n%%:*}; ca=${n#*:}; ext=srv.ext; [ $leaf = cli ] && ext=cli.ext; "
             "  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $leaf.key -out $leaf.csr "
             "  -subj /CN=$leaf >/dev/null 2>&1 && "
             "  openssl x509 -req -in $leaf.csr -CA $ca.pem -CAkey $ca.key -CAcreateserial -days 2 "
             "  -extfile $ext -out $leaf.pem >/dev/null 2>&1 || exit 1; done",
             p->dir);
    if (pki_sh(cmd) != 0)
        return -1;
    snprintf(p->ca, sizeof p->ca, "%s/ca.pem", p->dir);
    snprintf(p->cert, sizeof p->cert, "%s/srv.pem", p->dir);
    snprintf(p->key, sizeof p->key, "%s/srv.key", p->dir);
    snprintf(p->ccert, sizeof p->ccert, "%s/cli.pem", p->dir);
    snprintf(p->ckey, sizeof p->ckey, "%s/cli.key", p->dir);
    snprintf(p->evil_cert, sizeof p->evil_cert, "%s/evilsrv.pem", p->dir);
    snprintf(p->evil_key, sizeof p->evil_key, "%s/evilsrv.key", p->dir);
    snprintf(p->evil_ca, sizeof p->evil_ca, "%s/evil.pem", p->dir);
    return 0;
}

static inline void pki_free(struct pki *p) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", p->dir);
    pki_sh(cmd);
}

/* A config trusting ca (NULL: none added), serving cert/key (NULL: none). */
static inline ll_tls_config tls_conf(const char *ca, const char *cert, const char *key) {
    ll_tls_config c = 0;
    CHECK_EQ_INT(ll_tls_config_new(&c), 0);
    if (ca)
        CHECK_EQ_INT(ll_tls_config_load_ca_file(c, ca), 0);
    if (cert)
        CHECK_EQ_INT(ll_tls_config_load_cert_file(c, cert, key), 0);
    return c;
}

struct peer {
    pid_t pid;
    int out;     /* the peer's stdout */
    int status;  /* its wait status once it exited */
    int exited;
};

/* Runs argv with stdin from in_fd (-1: /dev/null) and stdout on a pipe. */
static inline int peer_spawn(struct peer *p, char *const argv[], int in_fd) {
    int fds[2];
    memset(p, 0, sizeof *p);
    if (pipe(fds) != 0)
        return -1;
    p->pid = fork();
    if (p->pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        dup2(in_fd >= 0 ? in_fd : nul, 0);
        dup2(fds[1], 1);
        if (getenv("LL_TLS_TEST_VERBOSE") == NULL)
            dup2(nul, 2);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    p->out = fds[0];
    return p->pid > 0 ? 0 : -1;
}

/* Reads the peer's stdout until a line holds key, then returns the number
 * after the line's last ':' (a port), or -1 after secs. */
static inline int peer_port(struct peer *p, const char *key, double secs) {
    char buf[4096];
    size_t n = 0;
    double dl = now_s() + secs;
    while (now_s() < dl && n < sizeof buf - 1) {
        struct pollfd pf = {p->out, POLLIN, 0};
        if (poll(&pf, 1, 100) <= 0)
            continue;
        ssize_t k = read(p->out, buf + n, 1);
        if (k <= 0)
            return -1;
        n += (size_t)k;
        buf[n] = 0;
        if (buf[n - 1] == '\n') {
            char *line = strrchr(buf, '\n');
            *line = 0;
            char *start = strrchr(buf, '\n');
            start = start ? start + 1 : buf;
            if (strstr(start, key) != NULL) {
                char *colon = strrchr(start, ':');
                return colon ? atoi(colon + 1) : -1;
            }
            *line = '\n';
        }
    }
    return -1;
}

/* Reads what the peer printed (up to cap-1 bytes, NUL-ended) until EOF, running the loop meanwhile. */
static inline size_t peer_read_all(struct peer *p, ll_loop loop, char *buf, size_t cap, double secs) {
    size_t n = 0;
    int fl = fcntl(p->out, F_GETFL);
    fcntl(p->out, F_SETFL, fl | O_NONBLOCK);
    double dl = now_s() + secs;
    while (now_s() < dl) {
        ssize_t k = read(p->out, buf + n, cap - 1 - n);
        if (k == 0)
            break;
        if (k > 0) {
            n += (size_t)k;
            if (n == cap - 1)
                break;
            continue;
        }
        tick(loop);
    }
    buf[n] = 0;
    return n;
}

/* Runs the loop until the peer exits (killed after secs); its exit status or -1. */
static inline int peer_wait(struct peer *p, ll_loop loop, double secs) {
    double dl = now_s() + secs;
    while (!p->exited) {
        if (waitpid(p->pid, &p->status, WNOHANG) == p->pid) {
            p->exited = 1;
            break;
        }
        if (now_s() > dl) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &p->status, 0);
            p->exited = 1;
            close(p->out);
            return -1;
        }
        tick(loop);
    }
    close(p->out);
    return WIFEXITED(p->status) ? WEXITSTATUS(p->status) : -1;
}

/* The outcome of a TLS connect: 0 and c->t, or the future's code. */
static inline int connect_tls(ll_loop loop, const char *host, int port, ll_tls_config cfg, const char *name, struct conn *c) {
    ll_future f = 0;
    struct connect_wait w = {c, 0, 0};
    int rc = ll_tls_connect(loop, host, port, cfg, name, conn_proto, c, &f);
    if (rc != 0)
        return rc;
    CHECK_EQ_INT(ll_future_add_done_callback(f, connect_done, &w), 0);
    RUN_UNTIL(loop, w.done, 60.0);
    uintptr_t v = 0;
    rc = ll_future_result(f, &v);
    if (rc == 0) {
        CHECK_EQ_INT(w.made_before, 1);
        CHECK_EQ_INT(v, c->t);
    } else {
        CHECK_EQ_INT(c->nev, 0); /* a failed TLS connect sends no event */
    }
    ll_release(f);
    return rc;
}

#endif /* LIBLOOP_TEST_TLS_UTIL_H */
