/* SPDX-License-Identifier: MIT */
/* tty.c — a terminal as a transport. A real program passes STDIN_FILENO;
 * this example makes a pseudo-terminal so it runs anywhere: it opens the
 * terminal side with ll_tty_open, switches it to raw mode, "types" a key
 * on the other side, and gets it at once (no Enter needed), reads the
 * window size, and puts the terminal back with ll_tty_reset_mode. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "must.h"

static int on_key(ll_loop loop, const ll_event *ev, void *arg) {
    if (ev->kind == LL_DATA_RECEIVED) {
        *(char *)arg = ((const char *)ev->data)[0];
        MUST(ll_loop_stop(loop));
    }
    return 0;
}

int main(void) {
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    EXPECT(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
    int term = open(ptsname(master), O_RDWR | O_NOCTTY); /* stands for STDIN_FILENO */
    EXPECT(term >= 0);
    struct winsize size = {.ws_col = 80, .ws_row = 24};
    EXPECT(ioctl(master, TIOCSWINSZ, &size) == 0);

    ll_loop loop;
    MUST(ll_loop_new(&loop));
    char key = 0;
    ll_transport tty;
    MUST(ll_tty_open(loop, term, on_key, &key, &tty));
    MUST(ll_tty_set_mode(tty, LL_TTY_RAW));
    int cols, rows;
    MUST(ll_tty_get_winsize(tty, &cols, &rows));
    EXPECT(cols == 80 && rows == 24);

    EXPECT(write(master, "y", 1) == 1); /* one key, no Enter */
    MUST(ll_loop_run_forever(loop));
    EXPECT(key == 'y');
    printf("got key '%c' at once; window %dx%d\n", key, cols, rows);

    MUST(ll_tty_reset_mode()); /* what a program does on its way out */
    struct termios now;
    EXPECT(tcgetattr(term, &now) == 0 && (now.c_lflag & ICANON));
    MUST(ll_transport_close(tty));
    MUST(ll_loop_close(loop));
    close(term); /* ours: the transport has its own open */
    close(master);
    return 0;
}
