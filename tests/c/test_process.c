/* SPDX-License-Identifier: MIT */
/* Processes: what ll_spawn gives the child (pipes, /dev/null, a host fd,
 * env and PATH, cwd, session and group) and what it refuses (a program
 * that cannot run is an error from ll_spawn, never a child exiting 127),
 * and that the child inherits nothing but its stdio. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc_helpers.h"

static char tmpdir[64];

static void write_file(const char *path, const char *text, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    CHECK(fd >= 0);
    CHECK_EQ_INT(write(fd, text, strlen(text)), (long long)strlen(text));
    close(fd);
    chmod(path, mode);
}

static void test_stdout_and_stderr_pipes(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    ll_process p = 0;
    CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_PIPE, &l, &p), 0);
    CHECK(p != 0);
    /* The pipes' ids, before their LL_CONNECTION_LOST; stdin is no pipe. */
    ll_transport t1 = 0, t2 = 0, t0 = 77;
    CHECK_EQ_INT(ll_process_pipe(p, 1, &t1), 0);
    CHECK_EQ_INT(ll_process_pipe(p, 2, &t2), 0);
    CHECK(t1 != 0 && t2 != 0 && t1 != t2 && t1 != p);
    CHECK_EQ_INT(ll_process_pipe(p, 0, &t0), LL_EINVAL);
    CHECK_EQ_INT(t0, 77);
    struct plog_done d = {&l, 6};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    CHECK_EQ_STR(l.out[1], "out\n");
    CHECK_EQ_STR(l.out[2], "err\n");
    for (int fd = 1; fd <= 2; fd++) {
        CHECK_EQ_INT(l.made[fd], 1);
        CHECK_EQ_INT(l.eof[fd], 1);
        CHECK_EQ_INT(l.lost[fd], 1);
        CHECK_EQ_INT(l.lost_code[fd], 0);
    }
    CHECK_EQ_INT(l.pipe_id[1], t1);
    CHECK_EQ_INT(l.pipe_id[2], t2);
    CHECK_EQ_INT(l.made[0] + l.lost[0], 0);
    CHECK_EQ_INT(l.bad_fd, 0);
    CHECK_EQ_INT(l.exited, 1);
    CHECK_EQ_INT(l.code, 3);
    CHECK_EQ_INT(l.exit_id, p);
    CHECK_EQ_INT(l.loop, loop);
    /* After its LL_CONNECTION_LOST a pipe is closed. */
    CHECK_EQ_INT(ll_process_pipe(p, 1, &t1), LL_ECLOSED);
    ll_release(p);
    check_still_runs(loop);
    ll_release(loop);
}

static void test_stderr_to_stdout(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "echo one; echo two >&2; echo three", NULL};
    run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_STDOUT, &l);
    CHECK_EQ_STR(l.out[1], "one\ntwo\nthree\n");
    CHECK_EQ_INT(l.made[2] + l.nout[2], 0);
    CHECK_EQ_INT(l.code, 0);
    ll_release(loop);
}

static void test_devnull(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    /* stdin at EOF (cat ends at once), stdout discarded. */
    const char *const argv[] = {"sh", "-c", "cat; echo lost; i=$(readlink /proc/$$/fd/0); o=$(readlink /proc/$$/fd/1); echo $i $o >&2", NULL};
    run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_PIPE, &l);
    CHECK_EQ_STR(l.out[2], "/dev/null /dev/null\n");
    CHECK_EQ_INT(l.made[1], 0);
    CHECK_EQ_INT(l.code, 0);
    ll_release(loop);
}

static void test_fd_as_stdin(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    char path[128];
    snprintf(path, sizeof path, "%s/input", tmpdir);
    write_file(path, "from a file\n", 0644);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    const char *const argv[] = {"cat", NULL};
    run_child(loop, argv, fd, LL_STDIO_PIPE, LL_STDIO_INHERIT, &l);
    CHECK_EQ_STR(l.out[1], "from a file\n");
    CHECK_EQ_INT(l.code, 0);
    /* The host's fd is the host's: still open. */
    CHECK(fcntl(fd, F_GETFD) >= 0);
    close(fd);
    ll_release(loop);
}

static void test_env_and_path(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    char prog[128], pathvar[128];
    snprintf(prog, sizeof prog, "%s/llprog", tmpdir);
    write_file(prog, "#!/bin/sh\necho \"FOO=$FOO HOME=${HOME-unset}\"\n", 0755);
    snprintf(pathvar, sizeof pathvar, "PATH=%s", tmpdir);

    /* The given env's PATH finds llprog; the child sees that env only. */
    memset(&l, 0, sizeof l);
    const char *const env[] = {pathvar, "FOO=bar", NULL};
    const char *const argv[] = {"llprog", NULL};
    ll_process_options o = {.file = "llprog", .argv = argv, .env = env,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT}};
    ll_process p = 0;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), 0);
    struct plog_done d = {&l, 2};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    CHECK_EQ_STR(l.out[1], "FOO=bar HOME=unset\n");
    ll_release(p);

    /* The given PATH is the only one searched: sh is not in it. */
    const char *const sh_argv[] = {"sh", "-c", "true", NULL};
    o.file = "sh";
    o.argv = sh_argv;
    p = 99;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), -ENOENT);
    CHECK_EQ_INT(p, 99);

    /* env NULL inherits the parent's environment as it is now. */
    memset(&l, 0, sizeof l);
    CHECK_EQ_INT(setenv("LL_TEST_INHERITED", "yes", 1), 0);
    const char *const echo_argv[] = {"sh", "-c", "echo \"$LL_TEST_INHERITED\"", NULL};
    run_child(loop, echo_argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT, &l);
    CHECK_EQ_STR(l.out[1], "yes\n");
    unsetenv("LL_TEST_INHERITED");

    /* An env without PATH: the parent's PATH still finds the program. */
    memset(&l, 0, sizeof l);
    const char *const env2[] = {"FOO=baz", NULL};
    const char *const foo_argv[] = {"sh", "-c", "echo \"$FOO\"", NULL};
    ll_process_options o2 = {.file = "sh", .argv = foo_argv, .env = env2,
                             .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT}};
    if (ll_spawn(loop, &o2, plog_fn, &l, &p) == 0)
        RUN_UNTIL(loop, plog_all_done, &d, 10);
    else
        CHECK(!"an env without PATH: the parent's PATH finds sh");
    CHECK_EQ_STR(l.out[1], "baz\n");
    ll_release(p);
    ll_release(loop);
}

static void test_cwd(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    char real[256];
    CHECK(realpath(tmpdir, real) != NULL);
    const char *const argv[] = {"pwd", NULL};
    ll_process_options o = {.file = "pwd", .argv = argv, .cwd = real,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT}};
    ll_process p = 0;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), 0);
    struct plog_done d = {&l, 2};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    char want[300];
    snprintf(want, sizeof want, "%s\n", real);
    CHECK_EQ_STR(l.out[1], want);
    ll_release(p);

    /* A cwd that does not exist, or is a file: an error, no child. */
    p = 99;
    o.cwd = "/no/such/dir";
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), -ENOENT);
    o.cwd = "/etc/passwd";
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), -ENOTDIR);
    CHECK_EQ_INT(p, 99);
    check_still_runs(loop);
    ll_release(loop);
}

/* Field n (1-based: 1 pid, 5 pgrp, 6 session) of a /proc/<pid>/stat line. */
static long stat_field(const char *line, int n) {
    const char *p = strrchr(line, ')');
    if (n == 1)
        return strtol(line, NULL, 10);
    if (p == NULL)
        return -1;
    p += 2; /* field 3, the state */
    for (int f = 3; f < n; f++) {
        p = strchr(p, ' ');
        if (p == NULL)
            return -1;
        p++;
    }
    return strtol(p, NULL, 10);
}

/* cat /proc/self/stat, exec'd directly: the pid it shows is the child's. */
static void child_ids(int flags, long *pid, long *pgid, long *sid) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"cat", "/proc/self/stat", NULL};
    ll_process_options o = {.file = "cat", .argv = argv, .flags = flags,
                            .stdio = {LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_INHERIT}};
    ll_process p = 0;
    int got = -1;
    CHECK_EQ_INT(ll_spawn(loop, &o, plog_fn, &l, &p), 0);
    CHECK_EQ_INT(ll_process_pid(p, &got), 0);
    struct plog_done d = {&l, 2};
    RUN_UNTIL(loop, plog_all_done, &d, 10);
    *pid = stat_field(l.out[1], 1);
    CHECK_EQ_INT(*pid, got);
    *pgid = stat_field(l.out[1], 5);
    *sid = stat_field(l.out[1], 6);
    ll_release(p);
    ll_release(loop);
}

static void test_session_and_group(void) {
    long pid, pgid, sid;
    child_ids(0, &pid, &pgid, &sid);
    CHECK_EQ_INT(pgid, getpgrp());
    CHECK_EQ_INT(sid, getsid(0));

    child_ids(LL_PROCESS_NEW_SESSION, &pid, &pgid, &sid);
    CHECK_EQ_INT(sid, pid);
    CHECK_EQ_INT(pgid, pid);

    child_ids(LL_PROCESS_NEW_GROUP, &pid, &pgid, &sid);
    CHECK_EQ_INT(pgid, pid);
    CHECK_EQ_INT(sid, getsid(0));

    child_ids(LL_PROCESS_NEW_SESSION | LL_PROCESS_NEW_GROUP, &pid, &pgid, &sid);
    CHECK_EQ_INT(sid, pid);
    CHECK_EQ_INT(pgid, pid);
}

static void test_cannot_run(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    char noexec[128];
    snprintf(noexec, sizeof noexec, "%s/noexec", tmpdir);
    write_file(noexec, "#!/bin/sh\nexit 0\n", 0644);
    struct { const char *file; int want; } cases[] = {
        {"/no/such/program", -ENOENT},
        {"no-such-program-in-path-xyz", -ENOENT},
        {noexec, -EACCES},
        {"/", -EACCES}, /* a directory */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const argv[] = {cases[i].file, NULL};
        ll_process p = 99;
        CHECK_EQ_INT(spawn3(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_PIPE, &l, &p), cases[i].want);
        CHECK_EQ_INT(p, 99);
    }
    /* No child and no pipe came of it. */
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), 0);
    CHECK_EQ_INT(l.exited + l.made[1] + l.made[2], 0);
    check_still_runs(loop);
    ll_release(loop);
}

/* The child gets fds 0..2 and nothing the host opened without CLOEXEC. */
static void test_inherits_only_stdio(void) {
    ll_loop loop = new_loop();
    static struct plog l;
    memset(&l, 0, sizeof l);
    int leak[2];
    CHECK_EQ_INT(pipe(leak), 0); /* no O_CLOEXEC, as a careless host does */
    int high = dup2(leak[0], 200);
    CHECK_EQ_INT(high, 200);
    const char *const argv[] = {"sh", "-c", "ls /proc/$$/fd", NULL};
    run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_STDOUT, &l);
    int seen[3] = {0, 0, 0}, others = 0;
    char *save = NULL;
    for (char *tok = strtok_r(l.out[1], "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
        int fd = atoi(tok);
        if (fd >= 0 && fd <= 2)
            seen[fd] = 1;
        if (fd == leak[0] || fd == leak[1] || fd == high) {
            others++;
            fprintf(stderr, "the child inherited fd %d\n", fd);
        }
    }
    CHECK_EQ_INT(seen[0] + seen[1] + seen[2], 3);
    CHECK_EQ_INT(others, 0);
    close(leak[0]);
    close(leak[1]);
    close(high);
    ll_release(loop);
}

int main(void) {
    alarm(60); /* a hang is a failure, never a stuck suite */
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ll_proc_XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    RUN_TEST(test_stdout_and_stderr_pipes);
    RUN_TEST(test_stderr_to_stdout);
    RUN_TEST(test_devnull);
    RUN_TEST(test_fd_as_stdin);
    RUN_TEST(test_env_and_path);
    RUN_TEST(test_cwd);
    RUN_TEST(test_session_and_group);
    RUN_TEST(test_cannot_run);
    RUN_TEST(test_inherits_only_stdio);
    const char *files[] = {"input", "llprog", "noexec"};
    for (size_t i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", tmpdir, files[i]);
        unlink(path);
    }
    rmdir(tmpdir);
    return CHECK_REPORT();
}
