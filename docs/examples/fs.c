/* SPDX-License-Identifier: MIT */
/* fs.c — file calls on the file pool: make a directory, write a file into
 * it, stat it, read it back into our own buffer, list the directory,
 * then remove both. Each call gives a future; the buffer passed to
 * ll_fs_write / ll_fs_read stays ours, untouched, until its future is done. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "must.h"

/* Runs the loop until f is done; returns its value (exits on a failure). */
static uintptr_t await_value(ll_loop loop, ll_future f) {
    while (ll_future_done(f) == 0)
        MUST(ll_loop_run_once(loop, LL_RUN_ONCE));
    uintptr_t v = 0;
    MUST(ll_future_result(f, &v)); /* a failed call: -errno, e.g. -ENOENT */
    MUST(ll_release(f));
    return v;
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    char dir[] = "/tmp/ll_docs_fs_XXXXXX", path[64];
    EXPECT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/hello.txt", dir);
    ll_future f;

    MUST(ll_fs_open(loop, path, O_CREAT | O_RDWR, 0644, &f));
    int fd = (int)await_value(loop, f);
    static const char text[] = "hello from the file pool\n";
    MUST(ll_fs_write(loop, fd, text, sizeof text - 1, 0, &f));
    EXPECT(await_value(loop, f) == sizeof text - 1);

    struct stat st; /* filled by a worker: ours again once the future is done */
    MUST(ll_fs_fstat(loop, fd, &st, &f));
    await_value(loop, f);
    EXPECT(st.st_size == (off_t)(sizeof text - 1));

    char buf[64] = {0};
    MUST(ll_fs_read(loop, fd, buf, sizeof buf, 0, &f));
    EXPECT(await_value(loop, f) == sizeof text - 1 && strcmp(buf, text) == 0);
    MUST(ll_fs_close(loop, fd, &f));
    await_value(loop, f);

    /* scandir's value: "name\0name\0...\0", the future's until released. */
    MUST(ll_fs_scandir(loop, dir, &f));
    while (ll_future_done(f) == 0)
        MUST(ll_loop_run_once(loop, LL_RUN_ONCE));
    uintptr_t v;
    MUST(ll_future_result(f, &v));
    const char *names = (const char *)v;
    EXPECT(strcmp(names, "hello.txt") == 0 && names[strlen(names) + 1] == 0);
    MUST(ll_release(f));

    /* A failure is the system call's -errno. */
    MUST(ll_fs_rmdir(loop, dir, &f));
    while (ll_future_done(f) == 0)
        MUST(ll_loop_run_once(loop, LL_RUN_ONCE));
    EXPECT(ll_future_result(f, NULL) == -ENOTEMPTY);
    MUST(ll_release(f));

    MUST(ll_fs_unlink(loop, path, &f));
    await_value(loop, f);
    MUST(ll_fs_rmdir(loop, dir, &f));
    await_value(loop, f);
    printf("%s", buf);
    MUST(ll_loop_close(loop));
    MUST(ll_release(loop));
    return 0;
}
