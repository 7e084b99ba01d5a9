/* SPDX-License-Identifier: MIT */
/* The fork guard: a fork() child of the process that loaded libloop gets
 * LL_EFORKED from the guarded calls instead of a hang.
 *
 * The trap. A c-shared Go library starts its runtime when it is loaded:
 * threads (sysmon, the scheduler's Ms, the garbage collector's workers)
 * and signal handlers. fork() without exec copies only the calling
 * thread, so in the child the runtime's state still says those threads
 * exist and hold what they held (Ps, locks, parked goroutines) while they
 * are gone. The first call that needs one of them waits forever. Seen
 * here before this guard: a child making 3,000 loops (0.3 s in the
 * parent) hung 20 times out of 20, its thread parked in the scheduler
 * (runtime.stoplockedm) for a thread that no longer exists; a child's
 * first ll_loop_new, forked right after the library loaded, hung too.
 * Short calls often came back, by luck. Nothing on the Go side can notice,
 * since noticing would mean entering Go: the check is made here, in C,
 * before the call crosses.
 *
 * Two signs, both set up when the library is loaded (a constructor):
 *  - ll__forked, set by a pthread_atfork child handler: what the guarded
 *    calls read (a plain load; see forkguard.h). libc's fork() runs the
 *    handler, and so do Python's os.fork and multiprocessing. vfork(),
 *    posix_spawn and clone() run none, and must not: their children
 *    (libloop's own spawner, capi/spawn/vfork_linux.c and clone3.c, makes
 *    them with CLONE_VM | CLONE_VFORK) share this process's memory until
 *    they exec, so a flag set there would be set in the parent as well.
 *  - load_pid, the process id at load: ll__forked_child also compares
 *    getpid() with it, which catches a child forked without the handlers
 *    (_Fork, a raw clone). It only reads: in a CLONE_VM child getpid() is
 *    the child's own, and any write would land in the parent's memory.
 * A library loaded after the fork (dlopen in the child) records the
 * child's own pid and starts its own runtime there: it works.
 */
#include <pthread.h>
#include <unistd.h>

#include "cloop.h"

int ll__forked;
static pid_t load_pid;

static void forked_child(void) { ll__forked = 1; }

/* If pthread_atfork fails (ENOMEM at load), only the calls that compare
 * process ids (ll_loop_new, ll_run) still see a child. */
__attribute__((constructor)) static void fork_guard_init(void) {
    load_pid = getpid();
    pthread_atfork(NULL, NULL, forked_child);
}

int ll__forked_child(void) { return ll__forked || getpid() != load_pid; }

/* ll_loop_new (libloop.h) is C so that a fork child is refused before it
 * enters Go; ll__loop_new (loops.go) makes the loop. */
int ll_loop_new(ll_loop *out) {
    if (ll__forked_child())
        return LL_EFORKED;
    return ll__loop_new(out);
}
