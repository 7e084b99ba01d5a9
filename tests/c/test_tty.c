/* SPDX-License-Identifier: MIT */
/* Terminals from C on a pseudo-terminal: ll_tty_open reads and writes on
 * an open of its own (the caller's fd stays blocking), canonical and raw
 * input, LL_TTY_NORMAL and ll_tty_reset_mode restoring the terminal's
 * settings, the window size with SIGWINCH, and bad input. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "net_util.h"

static void open_pty(int *master, int *slave) {
    *master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    CHECK(*master >= 0);
    CHECK_EQ_INT(grantpt(*master), 0);
    CHECK_EQ_INT(unlockpt(*master), 0);
    *slave = open(ptsname(*master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    CHECK(*slave >= 0);
}

static void test_modes(void) {
    ll_loop loop = new_loop();
    int master, slave;
    open_pty(&master, &slave);
    struct termios orig, now;
    CHECK_EQ_INT(tcgetattr(slave, &orig), 0);
    struct conn c;
    conn_init(&c);
    ll_transport t = 0;
    CHECK_EQ_INT(ll_tty_open(loop, slave, conn_proto, &c, &t), 0);
    CHECK(ll_transport_fd(t) != slave);
    CHECK_EQ_INT(fcntl(slave, F_GETFL) & O_NONBLOCK, 0);
    RUN_UNTIL(loop, c.nmade == 1, 5.0);

    /* Canonical input comes a line at a time. */
    CHECK_EQ_INT(write(master, "hi\n", 3), 3);
    RUN_UNTIL(loop, c.nbytes == 3, 5.0);
    CHECK(memcmp(c.buf, "hi\n", 3) == 0);
    /* What the transport writes, the master reads after the echo of the
     * input (NL becomes CR NL in both). */
    CHECK_EQ_INT(ll_transport_write(t, "out\n", 4), 0);
    char back[32];
    ssize_t n = 0;
    for (int i = 0; i < 200 && n < 9; i++) {
        ll_loop_run_once(loop, LL_RUN_NOWAIT);
        ssize_t r = read(master, back + n, sizeof back - (size_t)n);
        if (r > 0)
            n += r;
        else
            usleep(1000);
    }
    CHECK_EQ_INT(n, 9);
    CHECK(memcmp(back, "hi\r\nout\r\n", 9) == 0);

    /* Raw: one byte arrives without a newline. */
    CHECK_EQ_INT(ll_tty_set_mode(t, LL_TTY_RAW), 0);
    CHECK_EQ_INT(tcgetattr(slave, &now), 0);
    CHECK_EQ_INT(now.c_lflag & (ICANON | ECHO | ISIG), 0);
    CHECK_EQ_INT(write(master, "k", 1), 1);
    RUN_UNTIL(loop, c.nbytes == 4, 5.0);
    CHECK_EQ_INT(c.buf[3], 'k');
    CHECK_EQ_INT(ll_tty_set_mode(t, LL_TTY_NORMAL), 0);
    CHECK_EQ_INT(tcgetattr(slave, &now), 0);
    CHECK_EQ_INT(now.c_lflag, orig.c_lflag);
    CHECK_EQ_INT(now.c_iflag, orig.c_iflag);

    /* Raw, then closed: ll_tty_reset_mode still restores. */
    CHECK_EQ_INT(ll_tty_set_mode(t, LL_TTY_RAW), 0);
    ll_transport_close(t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    CHECK_EQ_INT(ll_tty_reset_mode(), 0);
    CHECK_EQ_INT(tcgetattr(slave, &now), 0);
    CHECK_EQ_INT(now.c_lflag, orig.c_lflag);
    CHECK_EQ_INT(write(slave, "", 0), 0); /* still the caller's, still open */
    close(slave);
    close(master);
    STILL_RUNS(loop);
    ll_release(loop);
}

struct winch {
    ll_transport t;
    int calls, cols, rows;
};

static void on_winch(ll_loop loop, void *arg) {
    (void)loop;
    struct winch *w = arg;
    w->calls++;
    CHECK_EQ_INT(ll_tty_get_winsize(w->t, &w->cols, &w->rows), 0);
}

static void test_winsize(void) {
    ll_loop loop = new_loop();
    int master, slave;
    open_pty(&master, &slave);
    struct conn c;
    conn_init(&c);
    struct winch w = {0};
    CHECK_EQ_INT(ll_tty_open(loop, slave, conn_proto, &c, &w.t), 0);
    struct winsize ws = {.ws_col = 100, .ws_row = 30};
    CHECK_EQ_INT(ioctl(master, TIOCSWINSZ, &ws), 0);
    int cols = 0, rows = 0;
    CHECK_EQ_INT(ll_tty_get_winsize(w.t, &cols, &rows), 0);
    CHECK_EQ_INT(cols, 100);
    CHECK_EQ_INT(rows, 30);
    /* A resize: the terminal's size changes, SIGWINCH tells the program. */
    CHECK_EQ_INT(ll_add_signal_handler(loop, SIGWINCH, on_winch, &w), 0);
    ws.ws_col = 120;
    ws.ws_row = 50;
    CHECK_EQ_INT(ioctl(master, TIOCSWINSZ, &ws), 0);
    CHECK_EQ_INT(kill(getpid(), SIGWINCH), 0);
    RUN_UNTIL(loop, w.calls == 1, 5.0);
    CHECK_EQ_INT(w.cols, 120);
    CHECK_EQ_INT(w.rows, 50);
    CHECK_EQ_INT(ll_remove_signal_handler(loop, SIGWINCH), 1);
    ll_transport_close(w.t);
    RUN_UNTIL(loop, c.nlost == 1, 5.0);
    close(slave);
    close(master);
    ll_release(loop);
}

static void test_bad_input(void) {
    ll_loop loop = new_loop();
    int master, slave;
    open_pty(&master, &slave);
    struct conn c, p;
    conn_init(&c);
    conn_init(&p);
    ll_transport t = 0, pt = 0;
    int fds[2];
    CHECK_EQ_INT(pipe(fds), 0);
    CHECK_EQ_INT(ll_tty_open(loop, fds[0], conn_proto, &c, &t), LL_EINVAL); /* not a terminal */
    CHECK_EQ_INT(ll_tty_open(loop, -1, conn_proto, &c, &t), -EBADF);
    CHECK_EQ_INT(ll_tty_open(loop, slave, conn_proto, &c, NULL), LL_EINVAL);
    CHECK_EQ_INT(ll_tty_open(0, slave, conn_proto, &c, &t), LL_EBADHANDLE);
    CHECK_EQ_INT(ll_tty_open(loop, slave, conn_proto, &c, &t), 0);
    CHECK_EQ_INT(ll_tty_set_mode(t, 7), LL_EINVAL);
    int cols, rows;
    CHECK_EQ_INT(ll_tty_get_winsize(t, NULL, &rows), LL_EINVAL);
    CHECK_EQ_INT(ll_transport_open(loop, fds[0], LL_PIPE_READ, conn_proto, &p, &pt), 0);
    CHECK_EQ_INT(ll_tty_set_mode(pt, LL_TTY_RAW), LL_EINVAL); /* a pipe is no terminal */
    CHECK_EQ_INT(ll_tty_get_winsize(pt, &cols, &rows), LL_EINVAL);
    ll_transport_close(pt);
    close(fds[1]);
    ll_transport_close(t);
    CHECK_EQ_INT(ll_tty_set_mode(t, LL_TTY_RAW), LL_ECLOSED);
    RUN_UNTIL(loop, c.nlost == 1 && p.nlost == 1, 5.0);
    close(slave);
    close(master);
    STILL_RUNS(loop);
    ll_release(loop);
}

int main(void) {
    RUN_TEST(test_modes);
    RUN_TEST(test_winsize);
    RUN_TEST(test_bad_input);
    return CHECK_REPORT();
}
