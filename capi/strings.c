/* SPDX-License-Identifier: MIT */
/* The const-returning string functions of the header. cgo cannot export a
 * function returning const char *, so these wrap Go exports that return the
 * same static, never-freed strings. */
#include "forkguard.h"
#include "hotpath.h"
#include "_cgo_export.h"

/* LL_EFORKED as libloop/errors.go names and describes it. A fork child
 * gets these from here, without entering Go (the point of the code);
 * tests/c/test_fork_child.c checks that child and parent agree. */
#define FORKED_NAME "LL_EFORKED"
#define FORKED_MESSAGE "this process is a fork() child of the process that loaded libloop; exec, or load libloop after fork"

const char *ll_version_string(void) { return ll__version_string(); }

const char *ll_strerror(int code) {
    if (code == LL_EFORKED && ll__forked_child())
        return FORKED_MESSAGE;
    return ll__strerror(code);
}

const char *ll_err_name(int code) {
    if (code == LL_EFORKED && ll__forked_child())
        return FORKED_NAME;
    return ll__err_name(code);
}
