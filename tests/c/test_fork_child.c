/* SPDX-License-Identifier: MIT */
/* A fork() child of a process that loaded libloop: the Go runtime's
 * threads did not survive the fork, so entering the runtime there can hang
 * forever. The guarded calls (libloop.h, "Forking") answer LL_EFORKED at
 * once instead; the parent goes on as before, and children that exec
 * (fork + exec, vfork + exec, ll_spawn) leave it unaffected.
 * Every child runs under a deadline: one still alive after it is killed
 * and fails the test, so a hang shows as a failure, not a stuck suite. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libloop.h"
#include "check.h"
#include "proc_helpers.h"

/* A healthy child is done in well under a millisecond; 5 s leaves room
 * for a loaded machine and ASan. */
#define CHILD_DEADLINE_MS 5000

/* What the parent's library says of LL_EFORKED, for the children to
 * compare with what theirs says. */
static const char *parent_name, *parent_message;

/* The exit status of pid, waiting at most CHILD_DEADLINE_MS; -1 if it was
 * still running then (it is killed and reaped). */
static int wait_with_deadline(pid_t pid) {
    for (int waited = 0; waited < CHILD_DEADLINE_MS; waited++) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0)
            return -2;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

typedef void (*child_fn)(void *arg);

/* Run body in a child made by forker and check that it exited 0 in time.
 * The child's own checks print their failures and make it exit 1; it
 * leaves with _exit so as to flush nothing of the parent's stdio. */
static void in_child_at(const char *file, int line, pid_t (*forker)(void), child_fn body, void *arg) {
    fflush(stdout);
    fflush(stderr);
    int failed_before = check_failed;
    pid_t pid = forker();
    if (pid < 0) {
        CHECK_FAIL_AT(file, line, "fork failed: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        body(arg);
        _exit(check_failed == failed_before ? 0 : 1);
    }
    int st = wait_with_deadline(pid);
    if (st == -1)
        CHECK_FAIL_AT(file, line, "the child hung: killed after %d ms", CHILD_DEADLINE_MS);
    else if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        CHECK_FAIL_AT(file, line, "the child failed (wait status 0x%x)", (unsigned)st);
    else
        check_passed++;
}
#define IN_CHILD(forker, body, arg) in_child_at(__FILE__, __LINE__, (forker), (body), (arg))

static pid_t plain_fork(void) { return fork(); }

#ifdef __GLIBC__
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)
/* glibc's _Fork: a fork that runs no pthread_atfork handler. */
static pid_t fork_no_handlers(void) { return _Fork(); }
#define HAVE_FORK_NO_HANDLERS 1
#endif
#endif

/* In a child: a new loop is refused at once, the out id left alone, and
 * the error describes itself (as the parent's library does, once the
 * parent has asked it). */
static void child_new_refused(void *arg) {
    (void)arg;
    ll_loop l = 0;
    CHECK_EQ_INT(ll_loop_new(&l), LL_EFORKED);
    CHECK_EQ_INT(l, 0);
    CHECK_EQ_STR(ll_err_name(LL_EFORKED), "LL_EFORKED");
    CHECK(strstr(ll_strerror(LL_EFORKED), "fork") != NULL);
    if (parent_message != NULL) {
        CHECK_EQ_STR(ll_err_name(LL_EFORKED), parent_name);
        CHECK_EQ_STR(ll_strerror(LL_EFORKED), parent_message);
    }
}

static void step_never(ll_task task, void *arg) {
    (void)task;
    (void)arg;
}

/* In a child: every guarded call on the parent's loop is refused, the
 * first one after the fork as much as the last. */
static void child_parent_loop_refused(void *arg) {
    ll_loop loop = *(ll_loop *)arg;
    int ran = 0;
    ll_handle h = 0;
    uintptr_t result = 0;
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_NOWAIT), LL_EFORKED);
    CHECK_EQ_INT(ll_loop_run_once(loop, LL_RUN_ONCE), LL_EFORKED);
    CHECK_EQ_INT(ll_loop_run_forever(loop), LL_EFORKED);
    CHECK_EQ_INT(ll_loop_run_until_complete(loop, 0), LL_EFORKED);
    CHECK_EQ_INT(ll_run(step_never, NULL, &result), LL_EFORKED);
    CHECK_EQ_INT(ll_call_soon(loop, count_cb, &ran, &h), LL_EFORKED);
    CHECK_EQ_INT(h, 0);
    CHECK_EQ_INT(ll_loop_close(loop), LL_EFORKED);
    CHECK_EQ_INT(ll_release(loop), LL_EFORKED);
    CHECK_EQ_INT(ran, 0);
    child_new_refused(NULL);
}

/* (b) First, before this process makes any call: the runtime started when
 * the library was loaded, so a child is refused even so. */
static void test_child_of_untouched_parent(void) { IN_CHILD(plain_fork, child_new_refused, NULL); }

/* (c) The code's name and message, from the parent. */
static void test_error_strings(void) {
    parent_name = ll_err_name(LL_EFORKED);
    parent_message = ll_strerror(LL_EFORKED);
    CHECK_EQ_STR(parent_name, "LL_EFORKED");
    CHECK(strstr(parent_message, "fork") != NULL);
    CHECK(strcmp(parent_message, ll_strerror(-10000)) != 0);
}

static ll_loop shared_loop;

/* (a) A parent that has run a loop forks; the child is refused, and (d)
 * the parent's loop goes on running callbacks. */
static void test_child_after_run(void) {
    ll_loop loop = new_loop();
    check_still_runs(loop);
    IN_CHILD(plain_fork, child_new_refused, NULL);
    IN_CHILD(plain_fork, child_parent_loop_refused, &loop);
    check_still_runs(loop);
    ll_loop second = new_loop();
    check_still_runs(second);
    CHECK_EQ_INT(ll_release(second), 0);
    shared_loop = loop;
}

/* A child forked by a callback, while the loop runs on this thread. */
static void fork_in_callback(ll_loop loop, void *arg) {
    (void)arg;
    IN_CHILD(plain_fork, child_parent_loop_refused, &loop);
}

static void test_child_of_running_loop(void) {
    CHECK_EQ_INT(ll_call_soon(shared_loop, fork_in_callback, NULL, NULL), 0);
    CHECK_EQ_INT(ll_loop_run_once(shared_loop, LL_RUN_NOWAIT), 0);
    check_still_runs(shared_loop);
}

/* A child made without the atfork handlers (glibc's _Fork): ll_loop_new
 * compares process ids as well, so it is refused too. */
static void test_child_without_atfork(void) {
#ifdef HAVE_FORK_NO_HANDLERS
    IN_CHILD(fork_no_handlers, child_new_refused, NULL);
    check_still_runs(shared_loop);
#endif
}

/* (e) Children that exec, made by fork, by vfork and by ll_spawn (a
 * clone sharing our memory until its exec), run normally and leave the
 * parent able to make and run loops. */
static void test_exec_children(void) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    int st = pid > 0 ? wait_with_deadline(pid) : -2;
    CHECK(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    /* cppcheck-suppress vforkCalled ; vfork and exec from a process with libloop loaded is what this tests */
    pid = vfork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    st = pid > 0 ? wait_with_deadline(pid) : -2;
    CHECK(st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);

    ll_loop loop = new_loop();
    struct plog l;
    memset(&l, 0, sizeof l);
    const char *argv[] = {"/bin/true", NULL};
    if (run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, LL_STDIO_DEVNULL, &l))
        CHECK_EQ_INT(l.code, 0);
    check_still_runs(loop);
    ll_loop after = new_loop();
    check_still_runs(after);
    CHECK_EQ_INT(ll_release(after), 0);
    CHECK_EQ_INT(ll_release(loop), 0);
}

int main(void) {
    RUN_TEST(test_child_of_untouched_parent);
    RUN_TEST(test_error_strings);
    RUN_TEST(test_child_after_run);
    RUN_TEST(test_child_of_running_loop);
    RUN_TEST(test_child_without_atfork);
    RUN_TEST(test_exec_children);
    CHECK_EQ_INT(ll_release(shared_loop), 0);
    return CHECK_REPORT();
}
