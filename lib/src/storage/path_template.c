/* SPDX-License-Identifier: MIT */
/* Output path templates: config-time validation and rendering into confined relative paths. */
#include "recd/path_template.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "recd/format.h"
#include "base/why.h"
#include "recd/message.h"

/* Room kept free in every rendered path for ".part" plus a "-N" collision suffix. */
#define PATH_SLACK 16
#define STRFTIME_FMT_MAX 64

typedef enum ph_kind { PH_FORMAT, PH_SESSION, PH_EXT, PH_PART, PH_INSTANCE, PH_TIME } ph_kind;

typedef struct placeholder {
    ph_kind kind;
    char fmt[STRFTIME_FMT_MAX + 1]; /* strftime format for PH_TIME */
} placeholder;

typedef struct out_buf {
    char *p;
    size_t cap, len;
    int err;
} out_buf;

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool key_char_ok(char c) { return is_alnum(c) || c == '.' || c == '_' || c == '-'; }

static bool literal_char_ok(char c) { return key_char_ok(c) || (c && strchr("+=@,", c)); }

bool recd_path_session_key_ok(const char *key)
{
    if (!key || !key[0] || key[0] == '.')
        return false;
    size_t n = 0;
    for (; key[n]; n++)
        if (n >= RECD_SESSION_KEY_MAX || !key_char_ok(key[n]))
            return false;
    return true;
}

/* 0, -EINVAL (bad shape) or -ENAMETOOLONG; why says which component is wrong. */
static int check_relative(const char *rel, size_t comp_max, char *why, size_t cap)
{
    size_t len = strnlen(rel, RECD_PATH_MAX);
    if (len == 0) {
        recd_why(why, cap, "path is empty");
        return -EINVAL;
    }
    if (len >= RECD_PATH_MAX) {
        recd_why(why, cap, "path is longer than %d bytes", RECD_PATH_MAX - 1);
        return -ENAMETOOLONG;
    }
    if (rel[0] == '/') {
        recd_why(why, cap, "path is absolute");
        return -EINVAL;
    }
    const char *c = rel;
    for (;;) {
        size_t n = strcspn(c, "/");
        if (n == 0) {
            recd_why(why, cap, "path has an empty component");
            return -EINVAL;
        }
        if (c[0] == '.') {
            recd_why(why, cap, "component '%.*s' starts with '.'", (int)n, c);
            return -EINVAL;
        }
        if (n > comp_max) {
            recd_why(why, cap, "a component is longer than %zu bytes", comp_max);
            return -ENAMETOOLONG;
        }
        for (size_t i = 0; i < n; i++) {
            if (!literal_char_ok(c[i])) {
                recd_why(why, cap, "component '%.*s' holds a character outside [A-Za-z0-9._+=@,-]",
                         (int)n, c);
                return -EINVAL;
            }
        }
        if (c[n] == '\0')
            return 0;
        c += n + 1;
    }
}

bool recd_path_relative_ok(const char *rel)
{
    return rel && check_relative(rel, RECD_PATH_NAME_MAX, NULL, 0) == 0;
}

/* strftime conversions that produce plain text without side effects; modifiers (E, O, widths)
 * are not accepted, so glibc never sees a conversion it would have to guess at. */
static bool strftime_conv_ok(char c) { return c && strchr("aAbBCdDeFgGhHIjmMpRsSTuUVwWyYzZ%", c); }

/* Parses the placeholder at text[*i] == '{' and advances *i past its '}'. */
static int parse_placeholder(const char *text, size_t *i, placeholder *ph, char *why, size_t cap)
{
    size_t start = *i + 1, j = start;
    while (text[j] && text[j] != '}' && text[j] != ':') {
        if (text[j] == '{' || text[j] == '/') {
            recd_why(why, cap, "unbalanced braces: '{' at offset %zu is not closed", *i);
            return -EINVAL;
        }
        j++;
    }
    if (!text[j]) {
        recd_why(why, cap, "unbalanced braces: '{' at offset %zu is not closed", *i);
        return -EINVAL;
    }
    size_t name_len = j - start;
    const char *name = text + start;
#define NAME_IS(s) (name_len == sizeof(s) - 1 && memcmp(name, s, name_len) == 0)
    ph->fmt[0] = '\0';
    if (text[j] == ':') {
        if (!NAME_IS("start")) {
            recd_why(why, cap, "placeholder '{%.*s:...}' takes no format (only {start:FMT} does)",
                     (int)name_len, name);
            return -EINVAL;
        }
        size_t f = j + 1, k = f;
        while (text[k] && text[k] != '}') {
            char c = text[k];
            if (c == '{') {
                recd_why(why, cap, "unbalanced braces: '{' inside {start:...}");
                return -EINVAL;
            }
            if (c == '/') {
                recd_why(why, cap, "'/' inside {start:...}: use one placeholder per directory, "
                                  "e.g. {start:%%Y}/{start:%%m}");
                return -EINVAL;
            }
            if ((unsigned char)c < 0x20 || (unsigned char)c > 0x7e || c == '\\') {
                recd_why(why, cap, "{start:...} holds a control, non-ASCII or '\\' character");
                return -EINVAL;
            }
            if (c == '%') {
                if (!strftime_conv_ok(text[k + 1])) {
                    recd_why(why, cap, "unsupported strftime conversion '%%%c' in {start:...}",
                             text[k + 1] && text[k + 1] != '}' ? text[k + 1] : '?');
                    return -EINVAL;
                }
                k++;
            }
            k++;
        }
        if (!text[k]) {
            recd_why(why, cap, "unbalanced braces: '{' at offset %zu is not closed", *i);
            return -EINVAL;
        }
        if (k == f || k - f > STRFTIME_FMT_MAX) {
            recd_why(why, cap, "{start:FMT} needs a format of 1..%d characters", STRFTIME_FMT_MAX);
            return -EINVAL;
        }
        ph->kind = PH_TIME;
        memcpy(ph->fmt, text + f, k - f);
        ph->fmt[k - f] = '\0';
        *i = k + 1;
        return 0;
    }
    if (NAME_IS("format"))
        ph->kind = PH_FORMAT;
    else if (NAME_IS("session"))
        ph->kind = PH_SESSION;
    else if (NAME_IS("ext"))
        ph->kind = PH_EXT;
    else if (NAME_IS("part"))
        ph->kind = PH_PART;
    else if (NAME_IS("instance"))
        ph->kind = PH_INSTANCE;
    else if (NAME_IS("start") || NAME_IS("date") || NAME_IS("time")) {
        ph->kind = PH_TIME;
        snprintf(ph->fmt, sizeof ph->fmt, "%s",
                 NAME_IS("start") ? "%Y%m%dT%H%M%SZ" : NAME_IS("date") ? "%Y-%m-%d" : "%H%M%S");
    } else {
        recd_why(why, cap, "unknown placeholder '{%.*s}' (known: format, session, ext, part, "
                          "instance, start, start:FMT, date, time)", (int)name_len, name);
        return -EINVAL;
    }
#undef NAME_IS
    *i = j + 1;
    return 0;
}

static void put(out_buf *o, const char *s, size_t n)
{
    if (o->err)
        return;
    if (n >= o->cap - o->len) {
        o->err = -ENAMETOOLONG;
        return;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
    o->p[o->len] = '\0';
}

static bool at_component_start(const out_buf *o) { return o->len == 0 || o->p[o->len - 1] == '/'; }

/* strftime in the C locale, whatever locale the daemon runs under. */
static size_t strftime_c(char *buf, size_t cap, const char *fmt, const struct tm *tm)
{
    locale_t c = newlocale(LC_TIME_MASK, "C", (locale_t)0);
    size_t n;
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
    if (c != (locale_t)0) {
        n = strftime_l(buf, cap, fmt, tm, c);
        freelocale(c);
    } else {
        n = strftime(buf, cap, fmt, tm);
    }
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    return n;
}

/* strftime output may contain '/' (%D), ':' (%T), spaces (%c): map those to '-', and a leading
 * '.' too, so the result is a plain name fragment. */
static void put_time(out_buf *o, const char *fmt, const struct tm *tm)
{
    char buf[512];
    size_t n = strftime_c(buf, sizeof buf, fmt, tm);
    if (n == 0) {
        if (!o->err)
            o->err = -ENAMETOOLONG;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (!is_alnum(c) && c != '_' && c != '-' && !(c == '.' && !at_component_start(o)))
            c = '-';
        put(o, &c, 1);
    }
}

static int vars_check(const recd_path_vars *v, char *why, size_t cap)
{
    if (!v->format || !v->ext || !v->session) {
        recd_why(why, cap, "format, ext and session are required");
        return -EINVAL;
    }
    recd_msg_format f = recd_msg_format_parse(v->format); /* the message model's formats */
    if (f == RECD_MSG_FMT_NONE) {
        recd_why(why, cap, "unknown format");
        return -EINVAL;
    }
    if (strcmp(v->ext, recd_msg_format_ext(f)) != 0) {
        recd_why(why, cap, "extension does not match the format");
        return -EINVAL;
    }
    if (!recd_path_session_key_ok(v->session)) {
        recd_why(why, cap, "session key is not 1..64 bytes of [A-Za-z0-9._-] without a leading dot");
        return -EINVAL;
    }
    if (v->instance && !recd_path_session_key_ok(v->instance)) {
        recd_why(why, cap, "instance name is not 1..64 bytes of [A-Za-z0-9._-] without a leading dot");
        return -EINVAL;
    }
    return 0;
}

static int render(const char *text, const recd_path_vars *v, char *out, size_t out_cap, char *why,
                  size_t why_cap)
{
    int rc = vars_check(v, why, why_cap);
    if (rc < 0)
        return rc;
    int64_t secs = v->start_ms / 1000 - (v->start_ms % 1000 < 0);
    time_t t = (time_t)secs;
    struct tm tm;
    /* Four-digit years only: a hostile clock must not produce odd names. */
    if ((int64_t)t != secs || !gmtime_r(&t, &tm) || tm.tm_year < -1900 ||
        tm.tm_year > 9999 - 1900) {
        recd_why(why, why_cap, "start time out of range");
        return -ERANGE;
    }
    if (out_cap == 0)
        return -ENAMETOOLONG;
    out_buf o = {out, out_cap, 0, 0};
    out[0] = '\0';
    for (size_t i = 0; text[i] && !o.err;) {
        if (text[i] != '{') {
            put(&o, &text[i], 1);
            i++;
            continue;
        }
        placeholder ph;
        rc = parse_placeholder(text, &i, &ph, why, why_cap);
        if (rc < 0)
            return rc;
        char num[16];
        switch (ph.kind) {
        case PH_FORMAT: put(&o, v->format, strlen(v->format)); break;
        case PH_SESSION: put(&o, v->session, strlen(v->session)); break;
        case PH_EXT: put(&o, v->ext, strlen(v->ext)); break;
        case PH_PART:
            snprintf(num, sizeof num, "%u", (unsigned)v->part);
            put(&o, num, strlen(num));
            break;
        case PH_INSTANCE:
            if (!v->instance) {
                recd_why(why, why_cap, "the template uses {instance} and no instance name is given");
                return -EINVAL;
            }
            put(&o, v->instance, strlen(v->instance));
            break;
        case PH_TIME: put_time(&o, ph.fmt, &tm); break;
        }
    }
    if (o.err || o.len > RECD_PATH_MAX - 1 - PATH_SLACK) {
        recd_why(why, why_cap, "rendered path is longer than %d bytes",
                 RECD_PATH_MAX - 1 - PATH_SLACK);
        return -ENAMETOOLONG;
    }
    rc = check_relative(out, RECD_PATH_COMPONENT_MAX, why, why_cap);
    return rc < 0 ? rc : (int)o.len;
}

int recd_path_render(const recd_path_template *t, const recd_path_vars *v, char *out,
                     size_t out_cap)
{
    if (!t || !v || !out)
        return -EINVAL;
    return render(t->text, v, out, out_cap, NULL, 0);
}

/* Structural checks on the template text itself; sets t->session_dir. */
static int check_structure(recd_path_template *t, const char *text, char *why, size_t cap)
{
    bool has_session = false, dir_session = false, dir_varies = false, ends_with_ext = false;
    size_t comp_start = 0;
    for (size_t i = 0;;) {
        char c = text[i];
        if (c == '/' || c == '\0') {
            size_t n = i - comp_start;
            const char *comp = text + comp_start;
            if (n == 0) {
                recd_why(why, cap, c == '\0' && i > 0 ? "template ends with '/' (empty file name)"
                                                     : "template has an empty component ('//')");
                return -EINVAL;
            }
            if (comp[0] == '.') {
                if ((n == 2 && comp[1] == '.') || n == 1)
                    recd_why(why, cap, "'%.*s' components are not allowed", (int)n, comp);
                else
                    recd_why(why, cap, "component '%.*s' starts with '.' (hidden file)", (int)n,
                             comp);
                return -EINVAL;
            }
            if (c == '\0') {
                ends_with_ext = n >= 6 && memcmp(text + i - 6, ".{ext}", 6) == 0;
                break;
            }
            i++;
            comp_start = i;
            continue;
        }
        if (c == '}') {
            recd_why(why, cap, "unbalanced braces: '}' at offset %zu has no '{'", i);
            return -EINVAL;
        }
        if (c != '{') {
            if (!literal_char_ok(c)) {
                recd_why(why, cap, "character '%c' (0x%02x) at offset %zu is not allowed; use "
                                  "[A-Za-z0-9._+=@,-] and '/'",
                         (unsigned char)c >= 0x20 && (unsigned char)c < 0x7f ? c : '?',
                         (unsigned char)c, i);
                return -EINVAL;
            }
            i++;
            continue;
        }
        placeholder ph;
        int rc = parse_placeholder(text, &i, &ph, why, cap);
        if (rc < 0)
            return rc;
        bool in_dir = strchr(text + i, '/') != NULL;
        if (ph.kind == PH_SESSION) {
            has_session = true;
            dir_session |= in_dir;
        }
        if ((ph.kind == PH_TIME || ph.kind == PH_PART) && in_dir)
            dir_varies = true;
    }
    if (!has_session) {
        recd_why(why, cap, "template has no {session}: sessions would overwrite each other");
        return -EINVAL;
    }
    if (!ends_with_ext) {
        recd_why(why, cap, "the file name must end with '.{ext}'");
        return -EINVAL;
    }
    t->session_dir = dir_session && !dir_varies;
    return 0;
}

/* A recorded format of the format table for trial renders: the one whose name and extension are
 * the longest together, or the first one. */
static const recd_format *trial_format(bool longest)
{
    const recd_format *best = NULL, *f;
    for (size_t i = 0; (f = recd_format_at(i)) != NULL; i++) {
        if (!recd_format_is_recorded(f))
            continue;
        if (!longest)
            return f;
        if (!best || strlen(f->name) + strlen(f->extension) > strlen(best->name) + strlen(best->extension))
            best = f;
    }
    return best;
}

int recd_path_template_parse(recd_path_template *t, const char *text, char *why, size_t why_cap)
{
    if (!t || !text) {
        recd_why(why, why_cap, "no template");
        return -EINVAL;
    }
    memset(t, 0, sizeof *t);
    size_t len = strnlen(text, RECD_PATH_TEMPLATE_MAX);
    if (len == 0) {
        recd_why(why, why_cap, "template is empty");
        return -EINVAL;
    }
    if (len >= RECD_PATH_TEMPLATE_MAX) {
        recd_why(why, why_cap, "template is longer than %d bytes", RECD_PATH_TEMPLATE_MAX - 1);
        return -ENAMETOOLONG;
    }
    if (text[0] == '/') {
        recd_why(why, why_cap,
                 "template is an absolute path; it must be relative to the output root");
        return -EINVAL;
    }
    int rc = check_structure(t, text, why, why_cap);
    if (rc < 0)
        return rc;
    /* Trial renders with the longest values and two extreme times catch overlong names and
     * strftime formats that expand to nothing. */
    static const char long_key[] = "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
                                   "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk";
    const recd_format *longest = trial_format(true), *first = trial_format(false);
    const recd_path_vars trials[] = {
        /* 9999-12-31, the longest format, key and instance name */
        {longest->name, longest->extension, long_key, INT64_C(253402300799000), UINT32_MAX, long_key},
        {first->name, first->extension, "a", 0, 0, "a"},
    };
    for (size_t i = 0; i < sizeof trials / sizeof trials[0]; i++) {
        char out[RECD_PATH_MAX], inner[160];
        rc = render(text, &trials[i], out, sizeof out, inner, sizeof inner);
        if (rc < 0) {
            recd_why(why, why_cap, "template renders an invalid path for session '%.12s...': %s",
                     trials[i].session, inner);
            return rc;
        }
    }
    memcpy(t->text, text, len + 1);
    return 0;
}

int recd_path_with_suffix(const char *rel, unsigned n, char *out, size_t out_cap)
{
    if (!rel || !out)
        return -EINVAL;
    size_t len = strlen(rel);
    const char *slash = strrchr(rel, '/');
    size_t leaf = slash ? (size_t)(slash - rel) + 1 : 0;
    const char *dot = strrchr(rel + leaf, '.');
    size_t cut = (dot && dot > rel + leaf) ? (size_t)(dot - rel) : len;
    int w = snprintf(out, out_cap, "%.*s-%u%s", (int)cut, rel, n, rel + cut);
    if (w < 0)
        return -EINVAL;
    if ((size_t)w >= out_cap)
        return -ENAMETOOLONG;
    return w;
}
