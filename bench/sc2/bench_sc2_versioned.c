/* SPDX-License-Identifier: MIT */
/* Throughput of the SC2 versioned decoder and the cost of a whole `info` summary, on a replay
 * given on the command line (default: the corpus's 24,908-loop 5.0 replay). Prints one line per
 * figure; not part of `make test` (timings belong in docs/performance.md, not in assertions). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/sc2/sc2_replay.h"
#include "recd/format.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *buf = malloc(1 << 24);
    *len = buf ? fread(buf, 1, 1 << 24, f) : 0;
    fclose(f);
    return buf;
}

static int count(void *data, int64_t loop, int64_t id, const sc2v_tree *t, const sc2v_node *ev)
{
    (void)loop, (void)id, (void)ev;
    *(uint64_t *)data += t->n;
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "../shared/corpus/sc2/lotv_5.0.0.80949_b80949.SC2Replay";
    size_t len;
    uint8_t *file = read_all(path, &len);
    if (!file) {
        fprintf(stderr, "bench_sc2_versioned: cannot read %s (give a replay)\n", path);
        return 1;
    }
    recd_buf tracker = {0};
    char err[256] = "";
    if (sc2_replay_member(file, len, "replay.tracker.events", &tracker, err, sizeof err) < 0) {
        fprintf(stderr, "bench_sc2_versioned: %s: no tracker events %s\n", path, err);
        return 1;
    }
    uint64_t nodes = 0;
    size_t rounds = 0;
    double start = now_s(), elapsed;
    do {
        sc2_tracker_walk(tracker.data, tracker.len, count, &nodes, err, sizeof err);
        rounds++;
    } while ((elapsed = now_s() - start) < 1.0);
    printf("sc2 versioned decoder: %.1f MB/s (%zu bytes of tracker events x %zu in %.2f s, %.1f M "
           "values/s)\n",
           tracker.len * (double)rounds / elapsed / 1e6, tracker.len, rounds, elapsed,
           nodes / elapsed / 1e6);

    const recd_format *f = recd_format_find("sc2replay");
    double runs[21];
    for (int i = 0; i < 21; i++) {
        recd_buf out = {0};
        double t0 = now_s();
        int rc = recd_format_describe(f, file, len, &out, err, sizeof err);
        runs[i] = (now_s() - t0) * 1e3;
        recd_buf_free(&out);
        if (rc < 0) {
            fprintf(stderr, "bench_sc2_versioned: describe: %s\n", err);
            return 1;
        }
    }
    qsort(runs, 21, sizeof runs[0], cmp);
    printf("sc2 describe (info summary, StormLib child included): median %.2f ms, max %.2f ms of 21 "
           "(%zu-byte replay)\n", runs[10], runs[20], len);
    recd_buf_free(&tracker);
    free(file);
    return 0;
}
