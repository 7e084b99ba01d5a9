/* SPDX-License-Identifier: MIT */
/*
 * soak_stats.h — what soak.c samples (RSS, fds, threads from /proc) and how
 * it writes and sums up the curve.
 */
#ifndef LIBLOOP_SOAK_STATS_H
#define LIBLOOP_SOAK_STATS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Work done since the start (cumulative). */
struct soak_counts {
    long long roundtrips, connects, accepted, closed, timers, futures, spawns, exits, errors;
};

struct soak_row {
    double elapsed;
    long rss_kb;
    int fds, threads, live_conns;
    struct soak_counts c;
};

#define SOAK_MAX_ROWS 10000
struct soak_series {
    int n;
    struct soak_row rows[SOAK_MAX_ROWS];
};

/* A field of /proc/self/status ("VmRSS:", "Threads:"), or -1. */
static inline long soak_status_field(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, name, strlen(name)) == 0) {
            v = atol(line + strlen(name));
            break;
        }
    fclose(f);
    return v;
}

static inline long soak_rss_kb(void) { return soak_status_field("VmRSS:"); }
static inline int soak_threads(void) { return (int)soak_status_field("Threads:"); }

static inline int soak_count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    struct dirent *e;
    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own fd */
}

static inline void soak_write_header(FILE *f) {
    fprintf(f, "elapsed_s,rss_kb,fds,threads,live_conns,roundtrips,connects,accepted,closed,"
               "timers,futures,spawns,exits,errors\n");
    fflush(f);
}

static inline void soak_write_row(FILE *f, const struct soak_row *r) {
    fprintf(f, "%.0f,%ld,%d,%d,%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", r->elapsed, r->rss_kb, r->fds,
            r->threads, r->live_conns, r->c.roundtrips, r->c.connects, r->c.accepted, r->c.closed, r->c.timers,
            r->c.futures, r->c.spawns, r->c.exits, r->c.errors);
    fflush(f);
}

static inline void soak_series_add(struct soak_series *s, const struct soak_row *r) {
    if (s->n < SOAK_MAX_ROWS)
        s->rows[s->n++] = *r;
}

/* Least-squares slope of RSS (KiB per minute) over rows [from, n). */
static inline double soak_rss_slope(const struct soak_series *s, int from) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = s->n - from;
    if (m < 2)
        return 0;
    for (int i = from; i < s->n; i++) {
        double x = s->rows[i].elapsed / 60, y = (double)s->rows[i].rss_kb;
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double den = m * sxx - sx * sx;
    return den == 0 ? 0 : (m * sxy - sx * sy) / den;
}

/*
 * Prints the curve's summary. The first quarter of the run is warm-up (the
 * Go heap and the loop's tables grow to their working size); after it the
 * run is "flat" when RSS at the end is within 10% of RSS at the end of
 * warm-up, the fd and thread counts stay within a band set by the churn,
 * every interval did work, and nothing failed. Returns 1 if flat.
 */
static inline int soak_summarize(const struct soak_series *s, FILE *out) {
    if (s->n < 3) {
        fprintf(out, "soak: too few samples (%d) for a curve\n", s->n);
        return 0;
    }
    int w = s->n / 4 > 0 ? s->n / 4 : 1;
    const struct soak_row *a = &s->rows[w], *z = &s->rows[s->n - 1];
    long rss_max = 0;
    int fd_min = 1 << 30, fd_max = 0, th_max = 0, stalled = 0;
    for (int i = w; i < s->n; i++) {
        const struct soak_row *r = &s->rows[i];
        rss_max = r->rss_kb > rss_max ? r->rss_kb : rss_max;
        fd_min = r->fds < fd_min ? r->fds : fd_min;
        fd_max = r->fds > fd_max ? r->fds : fd_max;
        th_max = r->threads > th_max ? r->threads : th_max;
        /* the final row can come right after the last periodic one */
        if (i > 0 && r->elapsed - s->rows[i - 1].elapsed >= 1 && r->c.roundtrips == s->rows[i - 1].c.roundtrips)
            stalled++;
    }
    double growth = a->rss_kb > 0 ? (double)(z->rss_kb - a->rss_kb) / (double)a->rss_kb : 0;
    double slope = soak_rss_slope(s, w);
    fprintf(out, "soak: %.1f min, %d samples; after warm-up (t=%.0f s):\n", z->elapsed / 60, s->n, a->elapsed);
    fprintf(out, "  RSS %ld -> %ld KiB (%+.1f%%, max %ld, slope %+.1f KiB/min)\n", a->rss_kb, z->rss_kb,
            100 * growth, rss_max, slope);
    fprintf(out, "  fds %d..%d (start %d), threads max %d (start %d)\n", fd_min, fd_max, s->rows[0].fds, th_max,
            s->rows[0].threads);
    fprintf(out, "  work: %lld round trips, %lld connects, %lld closes, %lld timers, %lld futures, %lld spawns, "
                 "%lld exits, %lld errors\n",
            z->c.roundtrips, z->c.connects, z->c.closed, z->c.timers, z->c.futures, z->c.spawns, z->c.exits,
            z->c.errors);
    int flat = growth < 0.10 && fd_max - fd_min < 200 && th_max - a->threads < 16 && stalled == 0 &&
               z->c.errors == 0 && z->c.spawns - z->c.exits < 100;
    fprintf(out, "soak: %s\n", flat ? "FLAT (no growth after warm-up, no error, no stall)" : "NOT FLAT");
    return flat;
}

#endif /* LIBLOOP_SOAK_STATS_H */
