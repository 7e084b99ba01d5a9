/* SPDX-License-Identifier: MIT */
/* File calls (include/libloop/fs.h): each call's value and its failure as
 * -errno through the future; scandir's name list; copyfile; sendfile
 * between files; reads chained from done callbacks into the caller's
 * buffer; withdrawing a queued call and refusing to cancel a started one;
 * bad input. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net_util.h"
#include "thread_probe.h"

static char dir[64];

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* Runs loop until f is done; returns ll_future_result's code, the value in *v. */
static int wait_fs(ll_loop loop, ll_future f, uintptr_t *v) {
    RUN_UNTIL(loop, ll_future_done(f) == 1, 5.0);
    uintptr_t val = 0;
    int rc = ll_future_result(f, &val);
    if (v)
        *v = val;
    return rc;
}

/* The call's future: its value, released. */
#define FS_OK(loop, call)                                                                        \
    __extension__({                                                                              \
        ll_future f_ = 0;                                                                        \
        uintptr_t v_ = 0;                                                                        \
        CHECK_EQ_INT(call, 0);                                                                   \
        CHECK_EQ_INT(wait_fs((loop), f_, &v_), 0);                                               \
        ll_release(f_);                                                                          \
        v_;                                                                                      \
    })

/* The call's future's failure code (also through ll_future_exception, with a message), released. */
#define FS_FAILS(loop, call)                                                                     \
    __extension__({                                                                              \
        ll_future f_ = 0;                                                                        \
        CHECK_EQ_INT(call, 0);                                                                   \
        int rc_ = wait_fs((loop), f_, NULL);                                                     \
        int code_ = 0;                                                                           \
        const char *msg_ = NULL;                                                                 \
        CHECK_EQ_INT(ll_future_exception(f_, &code_, &msg_, NULL), 0);                           \
        CHECK_EQ_INT(code_, rc_);                                                                \
        CHECK(msg_ != NULL && msg_[0] != 0);                                                     \
        ll_release(f_);                                                                          \
        rc_;                                                                                     \
    })

static void test_file_round_trip(void) {
    ll_loop loop = new_loop();
    char path[128];
    path_in(path, sizeof path, "round");
    int fd = (int)FS_OK(loop, ll_fs_open(loop, path, O_RDWR | O_CREAT | O_TRUNC, 0640, &f_));
    CHECK(fd >= 0);
    CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);

    enum { N = 4096 };
    unsigned char *out = malloc(N), *in = malloc(N);
    for (int i = 0; i < N; i++)
        out[i] = (unsigned char)(i * 7);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_write(loop, fd, out, N, -1, &f_)), N);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_write(loop, fd, "ABCD", 4, 100, &f_)), 4);
    memset(in, 0, N);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_read(loop, fd, in, N, 0, &f_)), N);
    memcpy(out + 100, "ABCD", 4);
    CHECK(memcmp(in, out, N) == 0);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_read(loop, fd, in, N, -1, &f_)), 0); /* at the end */
    CHECK_EQ_INT(FS_OK(loop, ll_fs_read(loop, fd, in, 10, N - 4, &f_)), 4);

    struct stat st, fst, lst;
    CHECK_EQ_INT(FS_OK(loop, ll_fs_stat(loop, path, &st, &f_)), 0);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_fstat(loop, fd, &fst, &f_)), 0);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_lstat(loop, path, &lst, &f_)), 0);
    CHECK_EQ_INT(st.st_size, N);
    CHECK(S_ISREG(st.st_mode));
    CHECK_EQ_INT(st.st_ino, fst.st_ino);
    CHECK_EQ_INT(st.st_ino, lst.st_ino);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_ftruncate(loop, fd, 10, &f_)), 0);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_fsync(loop, fd, &f_)), 0);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_fstat(loop, fd, &fst, &f_)), 0);
    CHECK_EQ_INT(fst.st_size, 10);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_close(loop, fd, &f_)), 0);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_close(loop, fd, &f_)), -EBADF);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_unlink(loop, path, &f_)), 0);
    free(out);
    free(in);
    ll_release(loop);
}

static void test_failures(void) {
    ll_loop loop = new_loop();
    char missing[128], other[128];
    path_in(missing, sizeof missing, "missing");
    path_in(other, sizeof other, "other");
    char buf[16];
    struct stat st;
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_open(loop, missing, O_RDONLY, 0, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_read(loop, 9999, buf, sizeof buf, 0, &f_)), -EBADF);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_write(loop, 9999, buf, sizeof buf, -1, &f_)), -EBADF);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_stat(loop, missing, &st, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_lstat(loop, missing, &st, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_fstat(loop, 9999, &st, &f_)), -EBADF);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_rename(loop, missing, other, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_unlink(loop, missing, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_mkdir(loop, dir, 0700, &f_)), -EEXIST);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_rmdir(loop, missing, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_scandir(loop, missing, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_fsync(loop, 9999, &f_)), -EBADF);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_ftruncate(loop, 9999, 0, &f_)), -EBADF);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_copyfile(loop, missing, other, 0, &f_)), -ENOENT);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_sendfile(loop, 9999, 9998, 0, 8, &f_)), -EBADF);
    STILL_RUNS(loop);
    ll_release(loop);
}

static void test_directories(void) {
    ll_loop loop = new_loop();
    char sub[128], name[160];
    path_in(sub, sizeof sub, "sub");
    CHECK_EQ_INT(FS_OK(loop, ll_fs_mkdir(loop, sub, 0755, &f_)), 0);
    const char *names[] = {"b", "a", "cc"};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s/%s", sub, names[i]);
        close(open(name, O_CREAT | O_WRONLY, 0644));
    }
    ll_future f = 0;
    CHECK_EQ_INT(ll_fs_scandir(loop, sub, &f), 0);
    uintptr_t v = 0;
    CHECK_EQ_INT(wait_fs(loop, f, &v), 0);
    const char *p = (const char *)v;
    static const char want[] = "a\0b\0cc\0"; /* and the empty name that ends it */
    CHECK(p != NULL && memcmp(p, want, sizeof want) == 0);
    ll_release(f); /* frees the list */

    char from[160], to[160];
    snprintf(from, sizeof from, "%s/cc", sub);
    snprintf(to, sizeof to, "%s/dd", sub);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_rename(loop, from, to, &f_)), 0);
    CHECK(access(to, F_OK) == 0 && access(from, F_OK) != 0);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_rmdir(loop, sub, &f_)), -ENOTEMPTY);
    const char *left[] = {"a", "b", "dd"};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s/%s", sub, left[i]);
        CHECK_EQ_INT(FS_OK(loop, ll_fs_unlink(loop, name, &f_)), 0);
    }
    CHECK_EQ_INT(ll_fs_scandir(loop, sub, &f), 0);
    CHECK_EQ_INT(wait_fs(loop, f, &v), 0);
    CHECK(v != 0 && ((const char *)v)[0] == 0); /* empty: only the closing name */
    ll_release(f);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_rmdir(loop, sub, &f_)), 0);
    ll_release(loop);
}

static void write_file(const char *path, const void *data, size_t n, mode_t mode) {
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, data, n), (long long)n);
    close(fd);
}

static size_t read_file(const char *path, void *buf, size_t n) {
    int fd = open(path, O_RDONLY);
    ssize_t r = fd >= 0 ? read(fd, buf, n) : -1;
    if (fd >= 0)
        close(fd);
    return r < 0 ? 0 : (size_t)r;
}

static void test_copyfile_sendfile(void) {
    ll_loop loop = new_loop();
    char from[128], to[128];
    path_in(from, sizeof from, "cfrom");
    path_in(to, sizeof to, "cto");
    enum { N = 300000 };
    char *data = malloc(N), *back = malloc(N + 1);
    for (int i = 0; i < N; i++)
        data[i] = (char)('a' + i % 26);
    write_file(from, data, N, 0600);
    write_file(to, "old", 3, 0644);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_copyfile(loop, from, to, 0, &f_)), 0);
    CHECK_EQ_INT(read_file(to, back, N + 1), N);
    CHECK(memcmp(back, data, N) == 0);
    struct stat st;
    CHECK_EQ_INT(stat(to, &st), 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0600);
    CHECK_EQ_INT(FS_FAILS(loop, ll_fs_copyfile(loop, from, to, LL_FS_COPYFILE_EXCL, &f_)), -EEXIST);
    unlink(to);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_copyfile(loop, from, to, LL_FS_COPYFILE_FICLONE, &f_)), 0);
    CHECK_EQ_INT(read_file(to, back, N + 1), N);
    CHECK(memcmp(back, data, N) == 0);

    /* sendfile between two files: from an offset, then from the position. */
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_TRUNC);
    CHECK(in >= 0 && out >= 0);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_sendfile(loop, out, in, 1000, 5000, &f_)), 5000);
    CHECK_EQ_INT(lseek(in, 0, SEEK_CUR), 0); /* an offset leaves the position alone */
    CHECK_EQ_INT(lseek(in, N - 10, SEEK_SET), N - 10);
    CHECK_EQ_INT(FS_OK(loop, ll_fs_sendfile(loop, out, in, -1, 100, &f_)), 10);
    close(in);
    close(out);
    CHECK_EQ_INT(read_file(to, back, N + 1), 5010);
    CHECK(memcmp(back, data + 1000, 5000) == 0 && memcmp(back + 5000, data + N - 10, 10) == 0);
    unlink(from);
    unlink(to);
    free(data);
    free(back);
    ll_release(loop);
}

/* Reads chained from done callbacks, each into the caller's buffer: the
 * way a host drives a file without a task. */
struct chain {
    ll_loop loop;
    int fd, left, done, bad;
    char *buf;
    size_t len;
    int64_t off;
};

static void chain_next(ll_future f, void *arg) {
    struct chain *c = arg;
    uintptr_t v = 0;
    if (ll_future_result(f, &v) != 0 || v != c->len || c->buf[0] != (char)('a' + c->off % 26))
        c->bad++;
    ll_release(f);
    if (--c->left == 0) {
        c->done = 1;
        return;
    }
    c->off += (int64_t)c->len;
    ll_future g = 0;
    if (ll_fs_read(c->loop, c->fd, c->buf, c->len, c->off, &g) != 0 || ll_future_add_done_callback(g, chain_next, c) != 0)
        c->bad++;
}

static void test_read_chain(void) {
    ll_loop loop = new_loop();
    char path[128];
    path_in(path, sizeof path, "chain");
    enum { N = 64 * 1024 };
    char *data = malloc(N);
    for (int i = 0; i < N; i++)
        data[i] = (char)('a' + i % 26);
    write_file(path, data, N, 0600);
    struct chain c = {.loop = loop, .fd = open(path, O_RDONLY), .left = N / 512, .len = 512};
    c.buf = malloc(c.len);
    ll_future f = 0;
    CHECK_EQ_INT(ll_fs_read(loop, c.fd, c.buf, c.len, 0, &f), 0);
    CHECK_EQ_INT(ll_future_add_done_callback(f, chain_next, &c), 0);
    RUN_UNTIL(loop, c.done, 10.0);
    CHECK_EQ_INT(c.bad, 0);
    close(c.fd);
    unlink(path);
    free(c.buf);
    free(data);
    ll_release(loop);
}

/* One worker, busy with a read of an empty pipe: a call queued behind it
 * is withdrawn by cancelling it (it never runs); the started read cannot
 * be cancelled and completes with its bytes once they come. */
static void test_cancel(void) {
    ll_loop loop = new_loop();
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 1), 0);
    int p[2];
    CHECK_EQ_INT(pipe(p), 0);
    char buf[8] = {0};
    ll_future busy = 0, queued = 0;
    CHECK_EQ_INT(ll_fs_read(loop, p[0], buf, sizeof buf, -1, &busy), 0);
    double dl = now_s() + 5;
    while (!thread_in_read(p[0]) && now_s() < dl)
        usleep(1000);
    CHECK(thread_in_read(p[0]));
    char sub[128];
    path_in(sub, sizeof sub, "never");
    CHECK_EQ_INT(ll_fs_mkdir(loop, sub, 0700, &queued), 0);
    CHECK_EQ_INT(ll_future_cancel(queued, "withdrawn"), 1);
    CHECK_EQ_INT(ll_future_state(queued), LL_CANCELLED);
    CHECK_EQ_INT(ll_future_cancel(busy, NULL), 0);
    CHECK_EQ_INT(ll_future_state(busy), LL_PENDING);
    CHECK_EQ_INT(write(p[1], "bytes", 5), 5);
    uintptr_t v = 0;
    CHECK_EQ_INT(wait_fs(loop, busy, &v), 0);
    CHECK_EQ_INT(v, 5);
    CHECK(memcmp(buf, "bytes", 5) == 0);
    /* The worker went past the withdrawn call: a later one runs. */
    struct stat st;
    CHECK_EQ_INT(FS_OK(loop, ll_fs_stat(loop, dir, &st, &f_)), 0);
    CHECK(access(sub, F_OK) != 0);
    CHECK_EQ_INT(ll_future_result(queued, NULL), LL_ECANCELLED);
    ll_release(busy);
    ll_release(queued);
    close(p[0]);
    close(p[1]);
    ll_release(loop);
}

struct other_thread {
    ll_loop loop;
    int rc;
};

static void *fs_from_other_thread(void *arg) {
    struct other_thread *o = arg;
    ll_future f = 0;
    o->rc = ll_fs_unlink(o->loop, "/nonexistent-ll", &f);
    return NULL;
}

static void call_from_thread_cb(ll_loop loop, void *arg) {
    (void)loop;
    pthread_t th;
    if (pthread_create(&th, NULL, fs_from_other_thread, arg) == 0)
        pthread_join(th, NULL);
}

static void test_bad_input(void) {
    ll_loop loop = new_loop();
    ll_future f = 0;
    char buf[8];
    struct stat st;
    CHECK_EQ_INT(ll_fs_open(loop, NULL, O_RDONLY, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_open(loop, dir, O_RDONLY, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read(loop, 0, NULL, 8, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read(loop, 0, buf, 8, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read(loop, 0, buf, (size_t)-1, 0, &f), LL_EINVAL); /* a negative length */
    CHECK_EQ_INT(ll_fs_read(loop, 0, buf, (size_t)LL_FS_MAX_IO + 1, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_read(loop, 0, buf, 8, -2, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_write(loop, 1, NULL, 8, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_write(loop, 1, buf, (size_t)-8, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_write(loop, 1, buf, 8, -5, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_stat(loop, NULL, &st, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_stat(loop, dir, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_lstat(loop, dir, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_fstat(loop, 0, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_rename(loop, NULL, dir, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_rename(loop, dir, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_unlink(loop, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_mkdir(loop, NULL, 0700, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_rmdir(loop, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_scandir(loop, NULL, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_scandir(loop, dir, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_close(loop, -1, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_fsync(loop, 0, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_ftruncate(loop, 0, -1, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_copyfile(loop, NULL, dir, 0, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_copyfile(loop, dir, dir, 64, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_sendfile(loop, 1, 0, -2, 8, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_sendfile(loop, 1, 0, 0, (size_t)-1, &f), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 0), LL_EINVAL);
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 1025), LL_EINVAL);
    CHECK_EQ_INT(ll_fs_unlink(0, dir, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_fs_read(0, 0, buf, 8, 0, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_fs_write(12345, 1, buf, 8, 0, &f), LL_EBADHANDLE);
    CHECK_EQ_INT(f, 0); /* no refused call gave a future */
    STILL_RUNS(loop);

    /* Debug mode: another thread's call is refused while the loop runs. */
    struct other_thread o = {.loop = loop};
    CHECK_EQ_INT(ll_loop_set_debug(loop, 1), 0);
    CHECK_EQ_INT(ll_call_soon(loop, call_from_thread_cb, &o, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(o.rc, LL_EWRONGTHREAD);

    CHECK_EQ_INT(ll_loop_close(loop), 0);
    CHECK_EQ_INT(ll_fs_unlink(loop, dir, &f), LL_ECLOSED);
    CHECK_EQ_INT(ll_fs_read(loop, 0, buf, 8, 0, &f), LL_ECLOSED);
    CHECK_EQ_INT(ll_fs_write(loop, 1, buf, 8, -1, &f), LL_ECLOSED);
    CHECK_EQ_INT(f, 0);
    CHECK_EQ_INT(ll_loop_set_fs_workers(loop, 2), LL_ECLOSED);
    ll_release(loop);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/ll_fs_XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    RUN_TEST(test_file_round_trip);
    RUN_TEST(test_failures);
    RUN_TEST(test_directories);
    RUN_TEST(test_copyfile_sendfile);
    RUN_TEST(test_read_chain);
    RUN_TEST(test_cancel);
    RUN_TEST(test_bad_input);
    rmdir(dir);
    return CHECK_REPORT();
}
