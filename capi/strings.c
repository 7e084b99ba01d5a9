/* SPDX-License-Identifier: MIT */
/* The version and error-string calls of the header. The version and the
 * library's own codes come straight from the headers (LL_VERSION_*,
 * libloop/errno.h's LL_ERRNO_MAP), so these answer without entering Go: also in a fork()
 * child, whose Go runtime is dead, which is where LL_EFORKED must still be
 * described (tests/c/test_fork_child.c). Only -errno and unknown codes go
 * on to Go (libloop/errors_unix.go names every errno of the platform). */
#include "capi.h"
#include "_cgo_export.h"

/* Each #define of libloop/errno.h equals its LL_ERRNO_MAP entry, or the library
 * does not build; a value listed twice breaks the switches below. */
#define LL__SAME(name, value, message) \
    _Static_assert(LL_##name == (value), "LL_" #name " differs from its LL_ERRNO_MAP entry");
LL_ERRNO_MAP(LL__SAME)
#undef LL__SAME

#define LL__STR_(x) #x
#define LL__STR(x) LL__STR_(x)

int ll_version(void) { return LL_VERSION; }

const char *ll_version_string(void) {
    return LL__STR(LL_VERSION_MAJOR) "." LL__STR(LL_VERSION_MINOR) "." LL__STR(LL_VERSION_PATCH);
}

const char *ll_strerror(int code) {
    switch (code) {
#define LL__MESSAGE(name, value, message) \
    case value:                           \
        return message;
        LL_ERRNO_MAP(LL__MESSAGE)
#undef LL__MESSAGE
    }
    return ll__strerror(code);
}

const char *ll_err_name(int code) {
    switch (code) {
#define LL__NAME(name, value, message) \
    case value:                        \
        return "LL_" #name;
        LL_ERRNO_MAP(LL__NAME)
#undef LL__NAME
    }
    return ll__err_name(code);
}
