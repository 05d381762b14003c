/* SPDX-License-Identifier: MIT */
/* Shared helpers for the C tests (see testutil.h). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recd/part_file.h"

uint8_t *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    recd_buf b = {0};
    uint8_t chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (recd_buf_append(&b, chunk, n) < 0) {
            fclose(f);
            recd_buf_free(&b);
            return NULL;
        }
    }
    fclose(f);
    if (!b.data && recd_buf_reserve(&b, 1) < 0)
        return NULL;
    *len = b.len;
    return b.data;
}

int tu_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

const char *tu_corpus_dir(const char *sub)
{
    static char path[4096];
    const char *base = getenv("RECD_CORPUS_DIR");
    if (!base || !*base)
        base = "../shared/corpus";
    snprintf(path, sizeof path, "%s/%s", base, sub);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return NULL;
    return path;
}

void tu_require_corpus(const char *sub)
{
    if (!tu_corpus_dir(sub)) {
        printf("SKIP: corpus folder '%s' not found under $RECD_CORPUS_DIR (default ../shared/corpus); "
               "this test needs the third-party recordings, which are not part of the repository.\n",
               sub);
        exit(TEST_SKIP_EXIT);
    }
}

const char *tu_corpus_dir_or_skip(const char *sub)
{
    const char *dir = tu_corpus_dir(sub);
    if (!dir) {
        print_message("corpus %s not found (../shared/corpus): skipped\n", sub);
        skip();
    }
    return dir;
}

uint8_t *tu_corpus_file(const char *sub, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tu_corpus_dir_or_skip(sub), name);
    uint8_t *buf = tu_read_file(path, len);
    if (!buf) {
        print_message("%s not found: skipped\n", path);
        skip();
    }
    return buf;
}

const char *tu_tmpdir(void)
{
    static char path[4096];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/recd-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path))
        return NULL;
    return path;
}

unsigned tu_time_scale(void)
{
    const char *text = getenv("RECD_TEST_TIME_SCALE");
    if (text && *text) {
        char *end;
        unsigned long v = strtoul(text, &end, 10);
        if (*end == 0 && v >= 1 && v <= 100)
            return (unsigned)v;
        static bool warned;
        if (!warned)
            fprintf(stderr, "warning: RECD_TEST_TIME_SCALE=%s ignored (want 1..100)\n", text);
        warned = true;
    }
    return TU_TIME_SCALE;
}

unsigned tu_scaled_ms(unsigned base_ms)
{
    uint64_t ms = (uint64_t)base_ms * tu_time_scale();
    return ms > UINT32_MAX ? UINT32_MAX : (unsigned)ms;
}

uint64_t tu_rand(tu_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double tu_rand_double(tu_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(tu_rand(r) >> 11) / 9007199254740992.0);
}

uint32_t tu_rand_below(tu_rng *r, uint32_t n) { return n ? (uint32_t)(tu_rand(r) % n) : 0; }

int tu_root_setup(void **state)
{
    tu_root_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    snprintf(f->root, sizeof f->root, "%s", tu_tmpdir());
    snprintf(f->outside, sizeof f->outside, "%s", tu_tmpdir());
    f->root_fd = recd_out_root_open(f->root, false);
    assert_true(f->root_fd >= 0);
    *state = f;
    return 0;
}

int tu_root_teardown(void **state)
{
    tu_root_fixture *f = *state;
    close(f->root_fd);
    tu_rmtree(f->root);
    tu_rmtree(f->outside);
    free(f);
    return 0;
}

const char *tu_at(const char *dir, const char *rel)
{
    static char buf[4][8192];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, rel);
    return buf[i];
}

bool tu_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

void tu_rmtree(const char *path)
{
    chmod(path, 0700); /* tests may leave read-only directories behind */
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

recd_buf tu_synth(const char *format, recd_synth_scenario scenario, uint64_t ms, uint64_t seed)
{
    recd_synth_params p = {recd_synth_format_find(format), scenario, ms, seed};
    assert_non_null(p.format);
    recd_buf out = {0};
    uint64_t units;
    assert_int_equal(recd_synth_write(&p, recd_buf_sink(&out), &units), 0);
    return out;
}

void tu_recap_finish(recd_recap_encoder *e, recd_buf *file)
{
    recd_recap_finish_info info;
    assert_int_equal(recd_recap_encoder_finish(e, &info), 0);
    recd_recap_encoder_free(e);
    assert_int_equal(recd_recap_header_patch(file->data, file->len, (uint32_t)info.frame_count,
                                             info.end_ms),
                     0);
}
