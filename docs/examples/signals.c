/* SPDX-License-Identifier: MIT */
/* signals.c — a SIGUSR1 handler that runs on the loop's thread, in an
 * iteration after the delivery, not inside the signal handler. */
#include <signal.h>
#include <unistd.h>

#include "must.h"

static int deliveries;

static void on_usr1(ll_loop loop, void *arg) {
    (void)arg;
    deliveries++;                 /* any ll_* call is fine here: this is a normal callback */
    MUST(ll_loop_stop(loop));
}

static void send_usr1(ll_loop loop, void *arg) {
    (void)loop;
    (void)arg;
    EXPECT(kill(getpid(), SIGUSR1) == 0);
}

int main(void) {
    ll_loop loop;
    MUST(ll_loop_new(&loop));
    MUST(ll_add_signal_handler(loop, SIGUSR1, on_usr1, NULL));
    MUST(ll_call_later(loop, 0.01, send_usr1, NULL, NULL));
    MUST(ll_loop_run_forever(loop));
    EXPECT(deliveries == 1);
    EXPECT(ll_add_signal_handler(loop, SIGKILL, on_usr1, NULL) == LL_EINVAL);
    EXPECT(ll_add_signal_handler(loop, SIGSEGV, on_usr1, NULL) == LL_EINVAL); /* the Go runtime's */
    EXPECT(ll_remove_signal_handler(loop, SIGUSR1) == 1); /* the old disposition is back */
    MUST(ll_release(loop));
    printf("signals: SIGUSR1 handled %d time(s) on the loop thread\n", deliveries);
    return 0;
}
