/* SPDX-License-Identifier: MIT */
/* A test file of blocks, block i filled with the byte i (i mod 256), that
 * the file pool's tests read back and check block by block
 * (test_fs_pool.c, test_fs_spin.c). */
#ifndef LL_TEST_BLOCK_FILE_H
#define LL_TEST_BLOCK_FILE_H
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* Make it at path, a mkstemp template that becomes the file's name. */
static void make_block_file(char *path, int block, int blocks) {
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    char *b = malloc((size_t)block);
    CHECK(b != NULL);
    for (int i = 0; i < blocks && b != NULL; i++) {
        memset(b, i, (size_t)block);
        CHECK_EQ_INT((int)write(fd, b, (size_t)block), block);
    }
    free(b);
    close(fd);
}
#endif
