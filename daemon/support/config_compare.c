/* SPDX-License-Identifier: MIT */
/* Config comparison for reload (which keys changed, which need a restart) and YAML dumping. */
#include "config_schema.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* ---- comparison ---- */

static int hostport_equal(const recd_hostport *a, const recd_hostport *b)
{
    return a->port == b->port && a->family == b->family && strcmp(a->host, b->host) == 0;
}

static int str_equal(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static int row_equal(const row *r, const recd_config *a, const recd_config *b)
{
    const void *x = recd_cfg_cfield(a, r), *y = recd_cfg_cfield(b, r);
    switch (r->type) {
    case T_BOOL: return *(const bool *)x == *(const bool *)y;
    case T_U32:
    case T_MODE: return *(const uint32_t *)x == *(const uint32_t *)y;
    case T_SIZE:
    case T_DURATION: return *(const uint64_t *)x == *(const uint64_t *)y;
    case T_ENUM: return *(const int *)x == *(const int *)y;
    case T_PATH:
    case T_NAME:
    case T_TOKEN: return str_equal(*(char *const *)x, *(char *const *)y);
    case T_HOSTPORT: return hostport_equal(x, y);
    case T_TEMPLATE:
        return strcmp(((const recd_path_template *)x)->text, ((const recd_path_template *)y)->text) == 0;
    }
    return 0;
}

static int listen_equal(const recd_config *a, const recd_config *b)
{
    if (a->listen_count != b->listen_count)
        return 0;
    for (size_t i = 0; i < a->listen_count; i++) {
        const recd_listen_config *x = &a->listen[i], *y = &b->listen[i];
        if (x->transport != y->transport || x->encoding != y->encoding || strcmp(x->url, y->url) != 0 ||
            strcmp(x->path, y->path) != 0 || !hostport_equal(&x->addr, &y->addr))
            return 0;
    }
    return 1;
}

static int identities_equal(const recd_config *a, const recd_config *b)
{
    return a->identity_count == b->identity_count &&
           (!a->identity_count ||
            memcmp(a->identities, b->identities, a->identity_count * sizeof *a->identities) == 0);
}

void recd_config_compare(const recd_config *old_cfg, const recd_config *new_cfg, recd_config_diff *diff)
{
    memset(diff, 0, sizeof *diff);
    if (!listen_equal(old_cfg, new_cfg))
        diff->changes[diff->count++] = (recd_config_change){"listen", true};
    if (!identities_equal(old_cfg, new_cfg))
        diff->changes[diff->count++] = (recd_config_change){"identities", true};
    for (size_t i = 0; i < recd_cfg_row_count(); i++) {
        if (row_equal(&recd_cfg_rows[i], old_cfg, new_cfg))
            continue;
        bool live = (recd_cfg_rows[i].flags & F_LIVE) != 0;
        diff->changes[diff->count++] = (recd_config_change){recd_cfg_rows[i].key, live};
        if (!live)
            diff->restart_needed++;
    }
}

/* ---- reload safety ---- */

static const char *const refusal_names[RECD_RELOAD_REFUSALS] = {"accepted", "empty_file", "auth_off",
                                                                "default_listeners", "listen_failed"};

const char *recd_reload_refusal_name(recd_reload_refusal r)
{
    return (unsigned)r < RECD_RELOAD_REFUSALS ? refusal_names[r] : "unknown";
}

/* A half-written file (cut anywhere) is valid YAML that leaves the rest to the defaults; these are
 * the defaults that would weaken the daemon. Only what the file says explicitly may do that. */
recd_reload_refusal recd_config_reload_check(const recd_config *old_cfg, const recd_config *new_cfg, char *why,
                                             size_t cap)
{
    recd_config_diff diff;
    recd_config_compare(old_cfg, new_cfg, &diff);
    if (!new_cfg->written.anything && diff.count > 0) {
        snprintf(why, cap, "the file is empty (is it being written?), and every option would fall back to its "
                           "default; write `{}` to mean that");
        return RECD_RELOAD_EMPTY_FILE;
    }
    if (old_cfg->auth.token && !new_cfg->auth.token && !new_cfg->auth.off) {
        snprintf(why, cap, "the file has no auth.token, so opens would need no token any more (is the file cut "
                           "short?); write `auth: {token: none}` to turn authentication off");
        return RECD_RELOAD_AUTH_OFF;
    }
    if (!new_cfg->written.listen && !listen_equal(old_cfg, new_cfg)) {
        snprintf(why, cap, "the file has no listen list, so the built-in listeners would replace the running ones "
                           "(is the file cut short?); list them, or write `listen: []` for none");
        return RECD_RELOAD_DEFAULT_LISTENERS;
    }
    return RECD_RELOAD_ACCEPTED;
}

/* ---- dumping ---- */

typedef struct writer {
    recd_buf *buf;
    int err;
} writer;

static void w_put(writer *w, const char *s)
{
    if (!w->err && recd_buf_append(w->buf, s, strlen(s)) < 0)
        w->err = -ENOMEM;
}

/* A double-quoted YAML scalar. */
static void w_quoted(writer *w, const char *s)
{
    w_put(w, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[8];
        if (*p == '"' || *p == '\\')
            snprintf(tmp, sizeof tmp, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            snprintf(tmp, sizeof tmp, "\\x%02x", *p);
        else
            snprintf(tmp, sizeof tmp, "%c", *p);
        w_put(w, tmp);
    }
    w_put(w, "\"");
}

static void format_hostport(const recd_hostport *hp, char *buf, size_t cap)
{
    if (hp->family == AF_INET6)
        snprintf(buf, cap, "[%.*s]:%u", (int)sizeof hp->host - 1, hp->host, (unsigned)hp->port);
    else
        snprintf(buf, cap, "%.*s:%u", (int)sizeof hp->host - 1, hp->host, (unsigned)hp->port);
}

static void dump_row(writer *w, const row *r, const recd_config *cfg)
{
    const void *f = recd_cfg_cfield(cfg, r);
    char tmp[128];
    switch (r->type) {
    case T_BOOL: w_put(w, *(const bool *)f ? "true" : "false"); break;
    case T_U32: snprintf(tmp, sizeof tmp, "%u", (unsigned)*(const uint32_t *)f); w_put(w, tmp); break;
    case T_MODE: snprintf(tmp, sizeof tmp, "\"%04o\"", (unsigned)*(const uint32_t *)f); w_put(w, tmp); break;
    case T_SIZE:
    case T_DURATION: recd_cfg_format_number(r, *(const uint64_t *)f, tmp, sizeof tmp); w_put(w, tmp); break;
    case T_ENUM: w_put(w, recd_cfg_enum_name(r->names, *(const int *)f)); break;
    case T_PATH:
    case T_NAME:
    case T_TOKEN: {
        const char *s = *(char *const *)f;
        if (r->type == T_TOKEN && cfg->auth.token_file)
            s = NULL; /* read from auth.token_file, which the dump names */
        if (s)
            w_quoted(w, s);
        else
            w_put(w, r->type == T_TOKEN && cfg->auth.off ? "none" : "null");
        break;
    }
    case T_HOSTPORT: format_hostport(f, tmp, sizeof tmp); w_quoted(w, tmp); break;
    case T_TEMPLATE: w_quoted(w, ((const recd_path_template *)f)->text); break;
    }
}

int recd_config_dump(const recd_config *cfg, recd_buf *out)
{
    writer w = {out, 0};
    if (cfg->listen_count == 0)
        w_put(&w, "listen: []\n");
    else
        w_put(&w, "listen:\n");
    for (size_t i = 0; i < cfg->listen_count; i++) {
        w_put(&w, "  - url: ");
        w_quoted(&w, cfg->listen[i].url);
        w_put(&w, "\n    encoding: ");
        w_put(&w, recd_cfg_enum_name(recd_cfg_encodings, (int)cfg->listen[i].encoding));
        w_put(&w, "\n");
    }
    if (cfg->identity_count)
        w_put(&w, "identities:\n");
    for (size_t i = 0; i < cfg->identity_count; i++) {
        w_put(&w, "  ");
        w_quoted(&w, cfg->identities[i].pattern);
        w_put(&w, ":\n    sessions: ");
        w_quoted(&w, cfg->identities[i].sessions);
        w_put(&w, "\n");
    }
    char section[32] = "";
    for (size_t i = 0; i < recd_cfg_row_count(); i++) {
        const row *r = &recd_cfg_rows[i];
        if (!recd_cfg_row_in_section(r, section)) {
            snprintf(section, sizeof section, "%.*s", (int)(strchr(r->key, '.') - r->key), r->key);
            w_put(&w, section);
            w_put(&w, ":\n");
        }
        w_put(&w, "  ");
        w_put(&w, recd_cfg_row_name(r));
        w_put(&w, ": ");
        dump_row(&w, r, cfg);
        w_put(&w, "\n");
    }
    return w.err;
}

