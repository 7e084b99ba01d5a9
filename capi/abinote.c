/* SPDX-License-Identifier: MIT */
/* The library's version, readable without loading it.
 *
 * Loading libloop.so starts its Go runtime (threads, signal handlers), and
 * that runtime does not survive fork(). The Python package checks that a
 * library is one it can use at `import libloop` but loads it only at the
 * first loop, so that a program may import it and then fork workers; it
 * reads this ELF section ("libloop ABI MAJOR.MINOR.PATCH") from the file
 * instead of calling ll_version(). */
#include "libloop.h"

#define LL_STR_(x) #x
#define LL_STR(x) LL_STR_(x)

__attribute__((section(".libloop_abi"), used))
static const char ll__abi_note[] = "libloop ABI " LL_STR(LL_VERSION_MAJOR) "." LL_STR(LL_VERSION_MINOR) "."
    LL_STR(LL_VERSION_PATCH);
