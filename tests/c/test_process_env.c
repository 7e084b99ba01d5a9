/* SPDX-License-Identifier: MIT */
/* What a child starts with besides its stdio: SIGPIPE and SIGXFSZ at their
 * defaults even when the host ignores them (as Python's restore_signals),
 * no blocked signal, and no fd of the host however high its number. */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>

#include "proc_helpers.h"

/* The hex mask after "name:\t" in /proc/<child>/status (as printed by cat). */
static unsigned long long status_mask(const char *status, const char *name) {
    const char *p = strstr(status, name);
    if (p == NULL)
        return ~0ULL;
    return strtoull(p + strlen(name) + 2, NULL, 16);
}

static void test_ignored_signals_are_default_in_child(void) {
    struct sigaction old_pipe, old_xfsz, ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);
    sigaction(SIGXFSZ, &ign, &old_xfsz);
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &block, &old_mask);

    ll_loop loop = new_loop();
    struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"cat", "/proc/self/status", NULL};
    CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l));
    unsigned long long ign_mask = status_mask(l.out[1], "SigIgn");
    unsigned long long blk_mask = status_mask(l.out[1], "SigBlk");
    CHECK((ign_mask & (1ULL << (SIGPIPE - 1))) == 0);
    CHECK((ign_mask & (1ULL << (SIGXFSZ - 1))) == 0);
    CHECK((blk_mask & (1ULL << (SIGUSR2 - 1))) == 0);
    CHECK_EQ_INT(l.code, 0);
    ll_release(loop);

    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    sigaction(SIGPIPE, &old_pipe, NULL);
    sigaction(SIGXFSZ, &old_xfsz, NULL);
}

static void test_high_fd_not_inherited(void) {
    int fd = open("/dev/null", O_RDONLY); /* no O_CLOEXEC, as a careless host */
    CHECK(fd >= 0);
    int high = dup2(fd, 3000);
    CHECK_EQ_INT(high, 3000);
    ll_loop loop = new_loop();
    struct plog l;
    memset(&l, 0, sizeof l);
    const char *const argv[] = {"sh", "-c", "test -e /proc/self/fd/3000 && echo inherited || echo closed", NULL};
    CHECK(run_child(loop, argv, LL_STDIO_DEVNULL, LL_STDIO_PIPE, LL_STDIO_DEVNULL, &l));
    CHECK_EQ_STR(l.out[1], "closed\n");
    ll_release(loop);
    close(high);
    close(fd);
}

int main(void) {
    alarm(60);
    RUN_TEST(test_ignored_signals_are_default_in_child);
    RUN_TEST(test_high_fd_not_inherited);
    return CHECK_REPORT();
}
