/* SPDX-License-Identifier: MIT */
/* The const-returning string functions of the header. cgo cannot export a
 * function returning const char *, so these wrap Go exports that return the
 * same static, never-freed strings. */
#include "hotpath.h"
#include "_cgo_export.h"

const char *ll_version_string(void) { return ll__version_string(); }
const char *ll_strerror(int code) { return ll__strerror(code); }
const char *ll_err_name(int code) { return ll__err_name(code); }
