/* SPDX-License-Identifier: MIT */
/*
 * thread_probe.h — what this process's threads are doing, from Linux's
 * /proc: the file-pool tests use it to know a worker is blocked in a call
 * before they queue another behind it.
 */
#ifndef LIBLOOP_TEST_THREAD_PROBE_H
#define LIBLOOP_TEST_THREAD_PROBE_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

/* How many threads of this process are blocked in read(fd) (Linux's
 * /proc/self/task/N/syscall: the call's number, then its arguments). */
static inline int threads_in_read(int fd) {
    DIR *d = opendir("/proc/self/task");
    int found = 0;
    struct dirent *e;
    char path[300], line[256], want[64];
    snprintf(want, sizeof want, "%d 0x%x ", (int)SYS_read, fd);
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
        FILE *fp = fopen(path, "r");
        if (fp == NULL)
            continue;
        if (fgets(line, sizeof line, fp) != NULL && strncmp(line, want, strlen(want)) == 0)
            found++;
        fclose(fp);
    }
    if (d != NULL)
        closedir(d);
    return found;
}

/* Whether a thread of this process is blocked in read(fd). */
static inline int thread_in_read(int fd) { return threads_in_read(fd) > 0; }

#endif
