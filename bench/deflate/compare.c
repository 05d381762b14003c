/* SPDX-License-Identifier: MIT */
/* Compresses the members of a Recap file again through librecd's member writer, with zlib and with
 * libdeflate at the same levels, and prints the bytes and the best-of-N CPU time of each. It
 * measured whether libdeflate should write Recap members (issue 26); now it shows what
 * recap.compressor buys on a host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recd/gzip_members.h"
#include "recd/recap.h"

typedef struct members {
    uint8_t **data;
    size_t *len, n, cap, total;
} members;

static int keep_member(void *ctx, uint64_t off, uint64_t end, const uint8_t *data, size_t len)
{
    (void)off;
    (void)end;
    members *m = ctx;
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->data = realloc(m->data, m->cap * sizeof *m->data);
        m->len = realloc(m->len, m->cap * sizeof *m->len);
        if (!m->data || !m->len)
            return -1;
    }
    m->data[m->n] = malloc(len ? len : 1);
    if (!m->data[m->n])
        return -1;
    memcpy(m->data[m->n], data, len);
    m->len[m->n++] = len;
    m->total += len;
    return 0;
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One pass over every member through librecd's member writer (what recd runs); returns the
 * output bytes and lowers *best to this pass's CPU seconds when it was faster. */
static size_t pass(const members *m, recd_gzip_compressor compressor, int level,
                   recd_gzip_deflater *d, recd_buf *out, double *best)
{
    size_t bytes = 0;
    double t0 = cpu_now();
    for (size_t i = 0; i < m->n; i++) {
        out->len = 0;
        if (recd_gzip_member_write_with(d, compressor, level, m->data[i], m->len[i], out) != 0) {
            fprintf(stderr, "compare: %s failed\n", recd_gzip_compressor_name(compressor));
            exit(1);
        }
        bytes += out->len;
    }
    double t = cpu_now() - t0;
    if (t < *best)
        *best = t;
    return bytes;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: compare FILE.recap PASSES\n");
        return 2;
    }
    int passes = atoi(argv[2]);
    FILE *f = fopen(argv[1], "rb");
    if (!f || fseek(f, 0, SEEK_END) != 0) {
        perror(argv[1]);
        return 1;
    }
    long size = ftell(f);
    rewind(f);
    uint8_t *file = malloc((size_t)size);
    if (!file || fread(file, 1, (size_t)size, f) != (size_t)size) {
        perror(argv[1]);
        return 1;
    }
    fclose(f);
    recd_recap_header h;
    int at = recd_recap_header_decode(file, (size_t)size, &h, NULL);
    if (at < 0) {
        fprintf(stderr, "compare: %s is not a Recap file\n", argv[1]);
        return 1;
    }
    members m = {0};
    recd_gzip_scan scan;
    if (recd_gzip_members_read(file + at, (size_t)size - (size_t)at, 0, keep_member, &m, &scan) != 0 ||
        m.n == 0) {
        fprintf(stderr, "compare: cannot read the members of %s\n", argv[1]);
        return 1;
    }
    printf("%zu members, %zu bytes inflated, best of %d passes\n", m.n, m.total, passes);
    printf("%-12s %5s %12s %12s %14s\n", "compressor", "level", "bytes", "CPU ms", "vs zlib (CPU)");
    recd_buf out = {0};
    recd_gzip_deflater *d = recd_gzip_deflater_new();
    if (!d) {
        fprintf(stderr, "compare: out of memory\n");
        return 1;
    }
    const int levels[] = {1, 2, 6};
    for (size_t k = 0; k < sizeof levels / sizeof *levels; k++) {
        int level = levels[k];
        double zbest = 1e9, lbest = 1e9;
        size_t zbytes = 0, lbytes = 0;
        for (int p = 0; p < passes; p++) { /* alternated, so drift hits both alike */
            zbytes = pass(&m, RECD_GZIP_ZLIB, level, d, &out, &zbest);
            lbytes = pass(&m, RECD_GZIP_LIBDEFLATE, level, d, &out, &lbest);
        }
        printf("%-12s %5d %12zu %12.2f %14s\n", "zlib", level, zbytes, zbest * 1e3, "1");
        printf("%-12s %5d %12zu %12.2f %13.2fx\n", "libdeflate", level, lbytes, lbest * 1e3,
               lbest / zbest);
    }
    recd_gzip_deflater_free(d);
    recd_buf_free(&out);
    return 0;
}
