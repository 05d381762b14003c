/* SPDX-License-Identifier: MIT */
/* librecd common types: error convention, byte sinks, growable buffers and problem reports.
 *
 * Every function that can fail returns 0 (or a count) on success and a negative errno on failure,
 * as libuv does. recd_strerror() names the error. */
#ifndef RECD_COMMON_H
#define RECD_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A path relative to an output root (a rendered path template, a recovered part's name), bytes
 * including the NUL. */
#define RECD_PATH_MAX 1024

/* The library's version text, the same as recd_version_string() in recd/version.h. */
RECD_API const char *recd_version(void);

/* Human-readable text for a negative errno returned by librecd. */
RECD_API const char *recd_strerror(int err);

/* A byte sink: where encoders put their output. write() returns 0 or a negative errno. */
typedef int (*recd_write_fn)(void *ctx, const void *data, size_t len);
typedef struct recd_sink {
    recd_write_fn write;
    void *ctx;
} recd_sink;

/* Growable byte buffer. Zero-initialise before first use. */
typedef struct recd_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} recd_buf;

RECD_API int recd_buf_reserve(recd_buf *b, size_t extra);
RECD_API int recd_buf_append(recd_buf *b, const void *data, size_t len);
RECD_API void recd_buf_reset(recd_buf *b); /* len = 0, keeps the memory */
RECD_API void recd_buf_free(recd_buf *b);
RECD_API recd_sink recd_buf_sink(recd_buf *b); /* a sink that appends to b */

/* Problems found while reading or validating a recording. */
typedef enum recd_severity {
    RECD_SEV_ERROR = 0,   /* the file is invalid for its format or a real reader rejects it */
    RECD_SEV_WARNING = 1, /* accepted by readers, but suspicious */
    RECD_SEV_INFO = 2     /* anomaly worth showing (equal timestamps, gaps, teleports) */
} recd_severity;

typedef struct recd_problem {
    recd_severity severity;
    uint64_t offset;   /* byte offset in the input the problem refers to */
    char code[32];     /* stable machine-readable identifier, e.g. "bad-signature" */
    char message[200]; /* what is wrong, in words */
} recd_problem;

/* Optional progress of a long whole-file job: done out of total (for verify and repair, bytes of
 * the input). Called from inside the job, so it must be cheap; a NULL fn means nobody watches. */
typedef void (*recd_progress_fn)(void *data, uint64_t done, uint64_t total);
typedef struct recd_progress {
    recd_progress_fn fn;
    void *data;
} recd_progress;

typedef struct recd_report {
    recd_problem *items;
    size_t count;
    size_t cap;
    size_t limit; /* 0 = unlimited; otherwise further problems only increment dropped */
    size_t dropped;
    recd_progress progress; /* optional: formats that can report finer progress do;
                             * recd_format_verify always ends with done == total */
} recd_report;

/* Adds a problem; silently counts it in dropped when the report is full or out of memory. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
RECD_API void recd_report_add(recd_report *r, recd_severity sev, uint64_t offset, const char *code,
                              const char *fmt, ...);
/* Tells r's progress watcher (if any) that done of total units are checked. r may be NULL. */
RECD_API void recd_report_progress(const recd_report *r, uint64_t done, uint64_t total);
RECD_API size_t recd_report_errors(const recd_report *r); /* number of RECD_SEV_ERROR items */
RECD_API void recd_report_free(recd_report *r);

#ifdef __cplusplus
}
#endif
#endif
