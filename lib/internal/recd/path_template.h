/* SPDX-License-Identifier: MIT */
/* Output path templates: validate a template such as
 * "{format}/{session}/{start:%Y%m%dT%H%M%SZ}.{ext}" at config time and render it into a confined
 * relative path (no "..", no absolute path, no empty or dot-leading components) for one part.
 *
 * Placeholders: {format} (samp-onfoot | samp-vehicle | recap), {session} (session key), {ext}
 * (rec | recap), {part} (decimal part number), {start} (= {start:%Y%m%dT%H%M%SZ}), {start:FMT}
 * (UTC strftime of the part start), {date} (= {start:%Y-%m-%d}), {time} (= {start:%H%M%S}).
 * Literal text may use [A-Za-z0-9._+=@,-] and '/' between components. */
#ifndef RECD_PATH_TEMPLATE_H
#define RECD_PATH_TEMPLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_PATH_TEMPLATE_DEFAULT "{format}/{session}/{start:%Y%m%dT%H%M%SZ}.{ext}"
#define RECD_PATH_TEMPLATE_MAX 512   /* template text, bytes including the NUL */
/* RECD_PATH_MAX, a rendered relative path, is in recd/common.h (public reports use it). */
#define RECD_PATH_COMPONENT_MAX 200  /* rendered; leaves room for ".part" and a "-N" suffix */
#define RECD_PATH_NAME_MAX 255       /* any component on disk (NAME_MAX) */
#define RECD_SESSION_KEY_MAX 64

/* A validated template. Plain storage: no free needed, safe to copy. */
typedef struct recd_path_template {
    char text[RECD_PATH_TEMPLATE_MAX];
    /* True when the directory part contains {session} and no time or part placeholder, so every
     * part of one session lands in one directory that no other session shares (per-session
     * retention relies on this; see retention.h). */
    bool session_dir;
} recd_path_template;

/* The values of one part. */
typedef struct recd_path_vars {
    const char *format;  /* "samp-onfoot", "samp-vehicle" or "recap" */
    const char *ext;     /* "rec" for the samp formats, "recap" for recap */
    const char *session; /* 1..64 bytes of [A-Za-z0-9._-], no leading dot */
    int64_t start_ms;    /* UTC start time of the part, Unix milliseconds */
    uint32_t part;       /* part number within the session */
    const char *instance; /* {instance}: the recording recd's name, same rule as session; may be
                           * NULL when the template does not use it */
} recd_path_vars;

/* Validates text and fills t. On failure returns -EINVAL (or -ENAMETOOLONG) and writes why the
 * template is rejected into why (may be NULL). */
int recd_path_template_parse(recd_path_template *t, const char *text, char *why,
                             size_t why_cap);

/* Renders t for v into out. Returns the path length, or -EINVAL when a value is invalid (hostile
 * session key, unknown format, ext not matching format), -ERANGE when the time cannot be
 * represented, -ENAMETOOLONG when the result does not fit. */
int recd_path_render(const recd_path_template *t, const recd_path_vars *v, char *out,
                     size_t out_cap);

/* Session key rule of the protocol, re-checked here defensively. */
bool recd_path_session_key_ok(const char *key);

/* True when rel is a confined relative path: components of 1..RECD_PATH_NAME_MAX bytes of
 * [A-Za-z0-9._+=@,-], none starting with '.', separated by single '/', shorter than RECD_PATH_MAX.
 * (Rendered paths are stricter: components of at most RECD_PATH_COMPONENT_MAX bytes.) */
bool recd_path_relative_ok(const char *rel);

/* Writes rel with "-N" inserted before the extension of its last component ("a/x.rec" ->
 * "a/x-2.rec"; no extension: appended). Returns the length or -ENAMETOOLONG / -EINVAL. */
int recd_path_with_suffix(const char *rel, unsigned n, char *out, size_t out_cap);

#ifdef __cplusplus
}
#endif
#endif
