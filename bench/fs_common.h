/* SPDX-License-Identifier: MIT */
/*
 * bench/fs_common.h — shared parts of the file-read benchmark (fs_ll.c,
 * fs_uv.c; run by bench/run_fs.sh): arguments, the reads' offsets, the
 * check of each read and the result line.
 *
 *   fs_<impl> FILE SIZE DEPTH N
 *
 * N reads of SIZE bytes from FILE (a file already in the page cache), at
 * most DEPTH in flight: each completion checks its byte count and the first
 * byte of its buffer, then submits the next read. Read i is at offset
 * (i * SIZE) mod (file size rounded down to SIZE), with its own buffer per
 * slot of the DEPTH in flight. The file pool has 4 threads in both
 * libraries (libuv's default UV_THREADPOOL_SIZE, libloop's
 * LL_FS_DEFAULT_WORKERS).
 *
 * Result line (stdout), parsed by bench/run_fs.sh:
 *   RESULT impl=<name> size=<bytes> depth=<D> n=<N> per_s=<reads/s>
 *          us_per_op=<wall/N> cpu_s=<user+sys, all threads> wall_s=<x>
 */
#ifndef BENCH_FS_COMMON_H
#define BENCH_FS_COMMON_H

#include "common.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define FS_MAX_DEPTH 64

static long fs_size, fs_depth, fs_n;
static int64_t fs_span;   /* the file's size rounded down to fs_size */
static long fs_issued;    /* reads submitted */
static long fs_completed; /* reads checked */
static long fs_bad;       /* reads with a wrong count or content */
static int fs_fd;
static unsigned char fs_pattern0; /* byte 0 of the pattern: offset o holds (o / 4096) & 0xff */

static void fs_args(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s FILE SIZE DEPTH N\n", argv[0]);
        exit(2);
    }
    fs_size = atol(argv[2]);
    fs_depth = atol(argv[3]);
    fs_n = atol(argv[4]);
    fs_fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fs_fd < 0 || fstat(fs_fd, &st) != 0 || fs_size <= 0 || fs_depth < 1 || fs_depth > FS_MAX_DEPTH ||
        fs_n < fs_depth || st.st_size < fs_size) {
        fprintf(stderr, "%s: bad arguments or file\n", argv[0]);
        exit(2);
    }
    fs_span = st.st_size / fs_size * fs_size;
    (void)fs_pattern0;
}

/* The offset of read number i. */
static inline int64_t fs_offset(long i) { return (int64_t)i * fs_size % fs_span; }

/* Checks a completed read of buf at off that returned n. */
static inline void fs_check(const unsigned char *buf, int64_t off, long n) {
    if (n != fs_size || buf[0] != (unsigned char)((off / 4096) & 0xff))
        fs_bad++;
}

static inline int fs_report(const char *impl, bench_mark start, bench_mark end) {
    double wall = end.wall - start.wall;
    printf("RESULT impl=%s size=%ld depth=%ld n=%ld per_s=%.0f us_per_op=%.3f cpu_s=%.4f wall_s=%.4f\n",
           impl, fs_size, fs_depth, fs_n, (double)fs_n / wall, wall * 1e6 / (double)fs_n, end.cpu - start.cpu,
           wall);
    if (fs_bad != 0 || fs_completed != fs_n) {
        fprintf(stderr, "%s: %ld bad reads, %ld of %ld completed\n", impl, fs_bad, fs_completed, fs_n);
        return 1;
    }
    return 0;
}

#endif
