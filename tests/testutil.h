/* SPDX-License-Identifier: MIT */
/* Helpers shared by the C tests: cmocka includes, file I/O, corpus lookup, seeded RNG. */
#ifndef RECD_TESTUTIL_H
#define RECD_TESTUTIL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "recd/common.h"
#include "recd/recap.h"
#include "recd/synth.h"

#define TEST_SKIP_EXIT 77 /* ctest SKIP_RETURN_CODE */

/* TU_SANITIZED: built with AddressSanitizer (gcc or clang), whose allocator replaces the C
 * library's heap, so heap statistics and trimming mean nothing there. */
#if defined(__SANITIZE_ADDRESS__)
#define TU_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TU_SANITIZED 1
#endif
#endif

/* How much longer waits and deadlines may take: sanitizer builds run several times slower, and
 * `make test` runs them beside other builds on a busy machine. tu_scaled_ms() is the one place
 * that applies it; $RECD_TEST_TIME_SCALE (1..100) overrides it (valgrind, a slow CI runner). */
#ifdef TU_SANITIZED
#define TU_TIME_SCALE 4u
#else
#define TU_TIME_SCALE 1u
#endif
unsigned tu_time_scale(void);
unsigned tu_scaled_ms(unsigned base_ms); /* base_ms x tu_time_scale(), saturating */

/* Reads a whole file into a malloc'd buffer; NULL on error. */
uint8_t *tu_read_file(const char *path, size_t *len);
int tu_write_file(const char *path, const void *data, size_t len);

/* Directory of the third-party corpus subfolder (e.g. "samp-rec"), or NULL when absent. Tests that
 * need it print why and exit TEST_SKIP_EXIT. */
const char *tu_corpus_dir(const char *sub);
void tu_require_corpus(const char *sub); /* exits 77 with a message when missing */
/* The corpus folder sub, or when it is missing a message and cmocka's skip() of the running test. */
const char *tu_corpus_dir_or_skip(const char *sub);
/* A whole corpus file sub/name (malloc'd, *len set), or a message and skip() when it is missing. */
uint8_t *tu_corpus_file(const char *sub, const char *name, size_t *len);

/* A fresh temporary directory, removed by the OS eventually; path is static storage per call. */
const char *tu_tmpdir(void);

/* An output root in a fresh temporary directory, plus a second directory outside it that a
 * confined write must never reach. For cmocka setup/teardown; teardown removes both trees. */
typedef struct tu_root_fixture {
    char root[4096];
    char outside[4096];
    int root_fd;
} tu_root_fixture;
int tu_root_setup(void **state);
int tu_root_teardown(void **state);

/* "dir/rel" in one of a few rotating static buffers (valid for the next three calls too). */
const char *tu_at(const char *dir, const char *rel);
bool tu_exists(const char *path); /* lstat() succeeds: symlinks count, even dangling ones */
void tu_rmtree(const char *path); /* best effort, never follows symlinks */

/* A synthetic recording of FORMAT (a recd_synth_format_find name), as `rectool generate` writes
 * it, in a malloc'd buffer; fails the test when it cannot be made. */
recd_buf tu_synth(const char *format, recd_synth_scenario scenario, uint64_t ms, uint64_t seed);
/* Finishes and frees a Recap encoder writing into file, then patches file's header with the
 * finish's frame count and end time, as a recording's writer does; asserts each step. */
void tu_recap_finish(recd_recap_encoder *e, recd_buf *file);

/* Deterministic RNG (splitmix64) for property tests with fixed seeds. */
typedef struct tu_rng {
    uint64_t s;
} tu_rng;
uint64_t tu_rand(tu_rng *r);
double tu_rand_double(tu_rng *r, double lo, double hi);
uint32_t tu_rand_below(tu_rng *r, uint32_t n);

#endif
