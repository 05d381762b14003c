/* SPDX-License-Identifier: MIT */
/* The one list of the daemon's session formats. A format is a folder, formats/NAME/, whose
 * session_format descriptor (session.h) says which message formats it records, and one line
 * here. */
#include "session_formats.h"

#include "record/formats/carla/carla_session.h"
#include "record/formats/player/player_session.h"
#include "record/formats/rec/rec_session.h"
#include "record/formats/recap/recap_session.h"
#include "sessions.h"
#include "support/config_schema.h"
#include "support/log.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

static const session_format *const session_formats[] = {
    &rec_session_format,
    &recap_session_format,
    &carla_session_format,
    &player_session_format,
};

#define SESSION_FORMAT_COUNT (sizeof session_formats / sizeof session_formats[0])

/* Runs once per open, not per sample: a walk of a few entries. */
const session_format *session_format_for(recd_msg_format f)
{
    if (f == 0)
        return NULL;
    for (size_t i = 0; i < SESSION_FORMAT_COUNT; i++)
        for (size_t j = 0; j < SESSION_FORMAT_MSGS; j++)
            if (session_formats[i]->formats[j] == f)
                return session_formats[i];
    return NULL;
}

void sessions_recover_root(int root_fd)
{
    for (size_t i = 0; i < SESSION_FORMAT_COUNT; i++) {
        const session_format *ops = session_formats[i];
        if (!ops->recover_root)
            continue;
        const char *name = recd_msg_format_name(ops->formats[0]);
        int rc = ops->recover_root(root_fd);
        if (rc < 0)
            log_err("recovery: %s %s: %s", name, ops->recover_what, recd_strerror(rc));
        else if (rc > 0)
            log_notice("recovery: %d %s %s completed", rc, name, ops->recover_what);
    }
}

void session_formats_files_what(char *buf, size_t cap)
{
    size_t n = 0, said = 0, total = 0;
    for (size_t i = 0; i < SESSION_FORMAT_COUNT; i++)
        total += session_formats[i]->files_what != NULL;
    buf[0] = '\0';
    for (size_t i = 0; i < SESSION_FORMAT_COUNT && n < cap; i++) {
        const char *what = session_formats[i]->files_what;
        if (!what)
            continue;
        const char *sep = said == 0 ? "" : said + 1 == total ? " and " : ", ";
        int w = snprintf(buf + n, cap - n, "%s%s", sep, what);
        n += w > 0 ? (size_t)w : 0;
        said++;
    }
}

size_t session_formats_state_kinds(const recd_m_state_kind **kinds, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < SESSION_FORMAT_COUNT && n < cap; i++)
        if (session_formats[i]->state_kind)
            kinds[n++] = session_formats[i]->state_kind;
    return n;
}

/* A row that writes into format_options must write into its own format's range. */
static bool rows_in_own_options(const session_format *f)
{
    const size_t base = offsetof(recd_config, format_options);
    for (size_t r = 0; r < f->config_row_count; r++) {
        size_t off = f->config_rows[r].offset;
        if (!f->config_rows[r].key || off < base || off >= base + RECD_CONFIG_FORMAT_OPTIONS)
            continue; /* a documented core key, or outside the formats' bytes */
        if (off - base < f->options_offset || off - base >= f->options_offset + f->options_size)
            return false;
    }
    return true;
}

static bool options_overlap(const session_format *a, const session_format *b)
{
    return a->options_size && b->options_size &&
           a->options_offset < b->options_offset + b->options_size &&
           b->options_offset < a->options_offset + a->options_size;
}

int session_formats_options_check(const session_format *const *formats, size_t n, char *why,
                                  size_t whylen)
{
    for (size_t i = 0; i < n; i++) {
        const session_format *a = formats[i];
        const char *name = recd_msg_format_name(a->formats[0]);
        if (a->options_offset > RECD_CONFIG_FORMAT_OPTIONS ||
            a->options_size > RECD_CONFIG_FORMAT_OPTIONS - a->options_offset)
            return snprintf(why, whylen,
                            "%s's options [%zu, %zu) do not fit format_options (%d bytes)", name,
                            a->options_offset, a->options_offset + a->options_size,
                            RECD_CONFIG_FORMAT_OPTIONS),
                   -EINVAL;
        if (!rows_in_own_options(a))
            return snprintf(why, whylen, "%s has a config row outside its options", name), -EINVAL;
        for (size_t j = 0; j < i; j++)
            if (options_overlap(a, formats[j]))
                return snprintf(why, whylen, "%s's options overlap %s's", name,
                                recd_msg_format_name(formats[j]->formats[0])), -EINVAL;
    }
    return 0;
}

int session_formats_install_config(void)
{
    char why[160];
    if (session_formats_options_check(session_formats, SESSION_FORMAT_COUNT, why, sizeof why) < 0) {
        fprintf(stderr, "recd: %s\n", why);
        return -EINVAL;
    }
    for (size_t i = 0; i < SESSION_FORMAT_COUNT; i++) {
        const session_format *ops = session_formats[i];
        int rc = ops->config_row_count
                     ? recd_config_install_format_rows(ops->config_rows, ops->config_row_count)
                     : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}

const char *session_formats_store_what(void)
{
    for (size_t i = 0; i < SESSION_FORMAT_COUNT; i++)
        if (session_formats[i]->store_what)
            return session_formats[i]->store_what;
    return "store";
}
