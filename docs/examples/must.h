/* SPDX-License-Identifier: MIT */
/* must.h — two helpers shared by the docs' examples, so each example stays
 * about the concept it shows. MUST(call) exits with the library's name for
 * a failing code; EXPECT(cond) exits when what the page promises is false,
 * which is how `make test-docs` knows an example still tells the truth. */
#ifndef DOCS_MUST_H
#define DOCS_MUST_H
#include <stdio.h>
#include <stdlib.h>

#include "libloop.h"

#define MUST(call)                                                                          \
    do {                                                                                    \
        int must_rc_ = (call);                                                              \
        if (must_rc_ < 0) {                                                                 \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, ll_err_name(must_rc_)); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

#define EXPECT(cond)                                                                        \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);             \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)
#endif
