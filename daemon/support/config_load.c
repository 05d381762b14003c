/* SPDX-License-Identifier: MIT */
/* recd.yaml loading (one part of the config module declared in config.h, with config_schema.c
 * and config_compare.c): the libyaml document walk against the schema, errors with file:line:column
 * and a hint, and the checks that span several options. See config.h and docs/configuration.md. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "config_schema.h"
#include "recd/units.h"

/* ---- loading ---- */

typedef struct loader {
    const char *name;
    yaml_document_t *doc;
    recd_config *cfg;
    recd_config_error *err;
    unsigned char *visited; /* per node: seen once already (a second visit is an alias) */
    size_t nnodes;
    yaml_mark_t row_mark[RECD_CFG_ROW_MAX];
    bool row_set[RECD_CFG_ROW_MAX];
} loader;

static void set_error(recd_config_error *err, const char *name, unsigned line, unsigned column, const char *fmt,
                      va_list ap)
{
    if (!err)
        return;
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", name);
    err->line = line;
    err->column = column;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    if (line)
        snprintf(err->text, sizeof err->text, "%s:%u:%u: %s", err->file, line, column, err->message);
    else
        snprintf(err->text, sizeof err->text, "%s: %s", err->file, err->message);
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int error_at(recd_config_error *err, const char *name, unsigned line, unsigned column, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(err, name, line, column, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail(loader *L, yaml_mark_t mark, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(L->err, L->name, (unsigned)mark.line + 1, (unsigned)mark.column + 1, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

static const char *node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "single value";
    case YAML_SEQUENCE_NODE: return "list";
    case YAML_MAPPING_NODE: return "mapping";
    default: return "nothing";
    }
}

static int is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *v = (const char *)n->data.scalar.value;
    return n->data.scalar.length == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
           strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

/* Resolves a node index, rejecting the second use of a node (a YAML alias). */
static yaml_node_t *visit(loader *L, int index, yaml_mark_t where, int *rc)
{
    yaml_node_t *n = yaml_document_get_node(L->doc, index);
    if (!n || index < 1 || (size_t)index > L->nnodes) {
        *rc = fail(L, where, "internal YAML error");
        return NULL;
    }
    if (L->visited[index - 1]) {
        *rc = fail(L, where, "YAML anchors and aliases (*name) are not supported here; write the value out");
        return NULL;
    }
    L->visited[index - 1] = 1;
    *rc = 0;
    return n;
}

/* A mapping key must be a plain string without NUL bytes. */
static int key_text(loader *L, yaml_node_t *key, const char **out)
{
    if (key->type != YAML_SCALAR_NODE)
        return fail(L, key->start_mark, "a key must be a single word, not a %s", node_kind(key));
    if (strlen((const char *)key->data.scalar.value) != key->data.scalar.length)
        return fail(L, key->start_mark, "key contains a NUL byte");
    *out = (const char *)key->data.scalar.value;
    return 0;
}

/* Scalar text for a value, rejecting embedded NUL bytes. */
static int scalar_text(loader *L, yaml_node_t *val, const char *what, const char **out)
{
    if (val->type != YAML_SCALAR_NODE)
        return fail(L, val->start_mark, "%s must be a single value, not a %s", what, node_kind(val));
    if (strlen((const char *)val->data.scalar.value) != val->data.scalar.length)
        return fail(L, val->start_mark, "%s contains a NUL byte", what);
    *out = (const char *)val->data.scalar.value;
    return 0;
}

/* Rejects a key seen earlier in the same mapping. */
static int check_duplicate(loader *L, yaml_node_t *map, yaml_node_pair_t *upto, yaml_node_t *key, const char *where)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < upto; p++) {
        yaml_node_t *k = yaml_document_get_node(L->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value,
                                                       (const char *)key->data.scalar.value) == 0)
            return fail(L, key->start_mark, "duplicate key '%s'%s%s (first set at line %u)",
                        (const char *)key->data.scalar.value, where ? " in " : "", where ? where : "",
                        (unsigned)k->start_mark.line + 1);
    }
    return 0;
}

static const row *find_row(const char *section, const char *key)
{
    for (size_t i = 0; i < recd_cfg_row_count(); i++)
        if (recd_cfg_row_in_section(&recd_cfg_rows[i], section) && strcmp(recd_cfg_row_name(&recd_cfg_rows[i]), key) == 0)
            return &recd_cfg_rows[i];
    return NULL;
}

static int unknown_key(loader *L, yaml_node_t *key, const char *section, const char *text)
{
    char b[80];
    recd_cfg_shown(text, b, sizeof b);
    /* The same key in another section is the likeliest mistake. */
    for (size_t i = 0; i < recd_cfg_row_count(); i++)
        if (strcmp(recd_cfg_row_name(&recd_cfg_rows[i]), text) == 0)
            return fail(L, key->start_mark, "unknown key '%s' in '%s' (did you mean '%s'?)", b, section, recd_cfg_rows[i].key);
    /* A typo, possibly with the section name repeated ("flush_intervall" in flush). */
    const char *bare = text;
    size_t sl = strlen(section);
    if (strncmp(text, section, sl) == 0 && (text[sl] == '_' || text[sl] == '.' || text[sl] == '-'))
        bare = text + sl + 1;
    recd_cfg_suggestion s = {0};
    char keys[400] = "";
    size_t used = 0;
    for (size_t i = 0; i < recd_cfg_row_count(); i++) {
        if (!recd_cfg_row_in_section(&recd_cfg_rows[i], section))
            continue;
        recd_cfg_consider(&s, text, recd_cfg_row_name(&recd_cfg_rows[i]));
        recd_cfg_consider(&s, bare, recd_cfg_row_name(&recd_cfg_rows[i]));
        int w = snprintf(keys + used, sizeof keys - used, "%s%s", used ? ", " : "", recd_cfg_row_name(&recd_cfg_rows[i]));
        if (w > 0 && (size_t)w < sizeof keys - used)
            used += (size_t)w;
    }
    if (s.best)
        return fail(L, key->start_mark, "unknown key '%s' in '%s' (did you mean '%s'?)", b, section, s.best);
    return fail(L, key->start_mark, "unknown key '%s' in '%s'; known keys: %s", b, section, keys);
}

static int unknown_section(loader *L, yaml_node_t *key, const char *text)
{
    char b[80];
    recd_cfg_shown(text, b, sizeof b);
    for (size_t i = 0; i < recd_cfg_row_count(); i++)
        if (strcmp(recd_cfg_row_name(&recd_cfg_rows[i]), text) == 0)
            return fail(L, key->start_mark, "unknown section '%s' (did you mean '%s'? keys go inside their section)",
                        b, recd_cfg_rows[i].key);
    recd_cfg_suggestion s = {0};
    char list[200] = "";
    size_t used = 0;
    for (size_t i = 0; i < recd_cfg_section_count(); i++) {
        recd_cfg_consider(&s, text, recd_cfg_sections[i]);
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", recd_cfg_sections[i]);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    if (s.best)
        return fail(L, key->start_mark, "unknown section '%s' (did you mean '%s'?)", b, s.best);
    return fail(L, key->start_mark, "unknown section '%s'; sections are: %s", b, list);
}

static int load_value(loader *L, const row *r, yaml_node_t *val)
{
    size_t idx = (size_t)(r - recd_cfg_rows);
    if (is_null(val)) {
        if (r->flags & F_NULLABLE) {
            char why[RECD_CFG_WHY_MAX];
            recd_cfg_parse_value(L->cfg, r, "", why, sizeof why);
        } else {
            return fail(L, val->start_mark, "%s has no value (the default is %s)", r->key,
                        *r->def ? r->def : "empty");
        }
    } else {
        const char *text = NULL;
        int rc = scalar_text(L, val, r->key, &text);
        if (rc < 0)
            return rc;
        char why[RECD_CFG_WHY_MAX];
        if (recd_cfg_parse_value(L->cfg, r, text, why, sizeof why) < 0)
            return fail(L, val->start_mark, "%s: %s", r->key, why);
    }
    L->row_mark[idx] = val->start_mark;
    L->row_set[idx] = true;
    return 0;
}

static int load_section(loader *L, const char *section, yaml_node_t *map)
{
    if (is_null(map))
        return 0; /* "flush:" alone: keep the defaults */
    if (map->type != YAML_MAPPING_NODE)
        return fail(L, map->start_mark, "'%s' must be a mapping of keys (e.g. %s:\\n  key: value), not a %s", section,
                    section, node_kind(map));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        int rc;
        yaml_node_t *key = visit(L, p->key, map->start_mark, &rc);
        if (!key)
            return rc;
        const char *text = NULL;
        if ((rc = key_text(L, key, &text)) < 0 || (rc = check_duplicate(L, map, p, key, section)) < 0)
            return rc;
        const row *r = find_row(section, text);
        if (!r)
            return unknown_key(L, key, section, text);
        yaml_node_t *val = visit(L, p->value, key->start_mark, &rc);
        if (!val)
            return rc;
        if ((rc = load_value(L, r, val)) < 0)
            return rc;
    }
    return 0;
}

/* One listen entry: a URL, or a mapping {url: URL, encoding: auto|binary|ndjson}. */
static int load_listen_entry(loader *L, yaml_node_t *item, recd_listen_config *out)
{
    char why[RECD_CFG_WHY_MAX];
    const char *text = NULL;
    int rc;
    if (item->type == YAML_SCALAR_NODE) {
        if ((rc = scalar_text(L, item, "a listen entry", &text)) < 0)
            return rc;
        if (recd_cfg_parse_listen_url(text, out, why, sizeof why) < 0)
            return fail(L, item->start_mark, "listen: %s", why);
        return 0;
    }
    if (item->type != YAML_MAPPING_NODE)
        return fail(L, item->start_mark, "a listen entry must be a URL or a mapping with 'url' and 'encoding'");
    yaml_node_t *url = NULL, *encoding = NULL;
    for (yaml_node_pair_t *p = item->data.mapping.pairs.start; p < item->data.mapping.pairs.top; p++) {
        yaml_node_t *key = visit(L, p->key, item->start_mark, &rc);
        if (!key)
            return rc;
        if ((rc = key_text(L, key, &text)) < 0 || (rc = check_duplicate(L, item, p, key, "a listen entry")) < 0)
            return rc;
        yaml_node_t *val = visit(L, p->value, key->start_mark, &rc);
        if (!val)
            return rc;
        if (strcmp(text, "url") == 0) {
            url = val;
        } else if (strcmp(text, "encoding") == 0) {
            encoding = val;
        } else if (strstr(text, "://")) {
            char b[80];
            return fail(L, key->start_mark,
                        "listen entry '%s:' is read as a mapping key because it ends in ':'; give the port "
                        "(e.g. tcp://127.0.0.1:7070)",
                        recd_cfg_shown(text, b, sizeof b));
        } else {
            recd_cfg_suggestion s = {0};
            recd_cfg_consider(&s, text, "url");
            recd_cfg_consider(&s, text, "encoding");
            char b[80];
            if (s.best)
                return fail(L, key->start_mark, "unknown key '%s' in a listen entry (did you mean '%s'?)",
                            recd_cfg_shown(text, b, sizeof b), s.best);
            return fail(L, key->start_mark, "unknown key '%s' in a listen entry; known keys: url, encoding",
                        recd_cfg_shown(text, b, sizeof b));
        }
    }
    if (!url)
        return fail(L, item->start_mark, "a listen entry needs a 'url' (e.g. url: tcp://127.0.0.1:7070)");
    if ((rc = scalar_text(L, url, "listen url", &text)) < 0)
        return rc;
    if (recd_cfg_parse_listen_url(text, out, why, sizeof why) < 0)
        return fail(L, url->start_mark, "listen: %s", why);
    if (encoding) {
        int value;
        if ((rc = scalar_text(L, encoding, "listen encoding", &text)) < 0)
            return rc;
        if (recd_cfg_parse_enum(recd_cfg_encodings, text, &value, why, sizeof why) < 0)
            return fail(L, encoding->start_mark, "listen encoding: %s", why);
        out->encoding = (recd_wire_encoding)value;
    }
    return 0;
}

static int load_listen(loader *L, yaml_node_t *seq)
{
    if (is_null(seq))
        return fail(L, seq->start_mark,
                    "'listen' is empty; list URLs, or write 'listen: []' to use only socket-activated sockets");
    if (seq->type != YAML_SEQUENCE_NODE)
        return fail(L, seq->start_mark, "'listen' must be a list of URLs (e.g. - tcp://127.0.0.1:7070), not a %s",
                    node_kind(seq));
    size_t n = (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
    if (n > RECD_CONFIG_MAX_LISTEN) {
        yaml_node_t *extra = yaml_document_get_node(L->doc, seq->data.sequence.items.start[RECD_CONFIG_MAX_LISTEN]);
        return fail(L, extra ? extra->start_mark : seq->start_mark, "more than %d listen entries",
                    RECD_CONFIG_MAX_LISTEN);
    }
    recd_listen_config *list = n ? calloc(n, sizeof *list) : NULL;
    if (n && !list)
        return fail(L, seq->start_mark, "out of memory");
    free(L->cfg->listen);
    L->cfg->listen = list;
    L->cfg->listen_count = 0;
    for (size_t i = 0; i < n; i++) {
        int rc;
        yaml_node_t *item = visit(L, seq->data.sequence.items.start[i], seq->start_mark, &rc);
        if (!item)
            return rc;
        if ((rc = load_listen_entry(L, item, &list[i])) < 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (recd_cfg_same_listener(&list[j], &list[i]))
                return fail(L, item->start_mark, "listen: '%s' is the same socket as '%s' above", list[i].url,
                            list[j].url);
        L->cfg->listen_count = i + 1;
    }
    L->cfg->written.listen = true;
    return 0;
}

static long row_index(const char *key);

/* One identities entry: "PATTERN": {sessions: "KEY-PATTERN"}. */
static int load_identity(loader *L, yaml_node_t *key, yaml_node_t *val, recd_identity_rule *out)
{
    const char *text = NULL, *sessions = NULL;
    int rc;
    if ((rc = key_text(L, key, &text)) < 0)
        return rc;
    if (!text[0] || strlen(text) > RECD_IDENTITY_PATTERN_MAX)
        return fail(L, key->start_mark, "identities: a pattern has 1 to %d characters",
                    RECD_IDENTITY_PATTERN_MAX);
    snprintf(out->pattern, sizeof out->pattern, "%s", text);
    if (val->type != YAML_MAPPING_NODE)
        return fail(L, val->start_mark, "identities: '%s' needs a mapping {sessions: PATTERN}",
                    out->pattern);
    for (yaml_node_pair_t *p = val->data.mapping.pairs.start; p < val->data.mapping.pairs.top; p++) {
        yaml_node_t *k = visit(L, p->key, val->start_mark, &rc), *v;
        if (!k || (rc = key_text(L, k, &text)) < 0)
            return rc;
        if (strcmp(text, "sessions") != 0)
            return fail(L, k->start_mark, "unknown key '%.40s' in identities; known keys: sessions", text);
        if (!(v = visit(L, p->value, k->start_mark, &rc)) ||
            (rc = scalar_text(L, v, "identities sessions", &sessions)) < 0)
            return rc;
        if (!sessions[0] || strlen(sessions) > RECD_SESSION_KEY_MAX)
            return fail(L, v->start_mark, "identities sessions: a pattern has 1 to %d characters",
                        RECD_SESSION_KEY_MAX);
        snprintf(out->sessions, sizeof out->sessions, "%s", sessions);
    }
    if (!sessions)
        return fail(L, val->start_mark, "identities: '%s' needs sessions: PATTERN", out->pattern);
    return 0;
}

/* identities: {"gs-eu-*": {sessions: "eu-*"}, ...}: which session keys a client certificate's
 * names may open, first matching pattern wins. */
static int load_identities(loader *L, yaml_node_t *map)
{
    if (is_null(map))
        return 0;
    if (map->type != YAML_MAPPING_NODE)
        return fail(L, map->start_mark, "'identities' must be a mapping of name patterns");
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    if (n > RECD_CONFIG_MAX_IDENTITIES)
        return fail(L, map->start_mark, "more than %d identities", RECD_CONFIG_MAX_IDENTITIES);
    recd_identity_rule *rules = n ? calloc(n, sizeof *rules) : NULL;
    if (n && !rules)
        return fail(L, map->start_mark, "out of memory");
    free(L->cfg->identities);
    L->cfg->identities = rules;
    L->cfg->identity_count = 0;
    for (size_t i = 0; i < n; i++) {
        int rc;
        yaml_node_pair_t *p = &map->data.mapping.pairs.start[i];
        yaml_node_t *key = visit(L, p->key, map->start_mark, &rc), *val;
        if (!key || (rc = check_duplicate(L, map, p, key, "identities")) < 0)
            return rc;
        if (!(val = visit(L, p->value, key->start_mark, &rc)))
            return rc;
        if ((rc = load_identity(L, key, val, &rules[i])) < 0)
            return rc;
        L->cfg->identity_count = i + 1;
    }
    return 0;
}

/* auth.token_file: the token, read now (at start and at every reload). */
static int read_token_file(loader *L)
{
    recd_config *c = L->cfg;
    const char *path = c->auth.token_file;
    long at = row_index("auth.token_file");
    yaml_mark_t mark = at >= 0 && L->row_set[at] ? L->row_mark[at] : (yaml_mark_t){0, 0, 0};
    if (!path)
        return 0;
    if (c->auth.token || c->auth.off)
        return fail(L, mark, "auth.token and auth.token_file: give one of them");
    char text[RECD_AUTH_TOKEN_MAX + 3], why[RECD_CFG_WHY_MAX];
    FILE *f = fopen(path, "re");
    if (!f)
        return fail(L, mark, "auth.token_file '%.200s': %s", path, strerror(errno));
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    if (n && text[n - 1] == '\n')
        text[--n] = 0;
    long tok = row_index("auth.token");
    if (tok < 0 || recd_cfg_parse_value(c, &recd_cfg_rows[tok], n ? text : "-", why, sizeof why) < 0)
        return fail(L, mark, "auth.token_file '%.200s': %s", path, n ? why : "the file is empty");
    return 0;
}

static int load_root(loader *L, yaml_node_t *root)
{
    if (is_null(root))
        return 0;
    if (root->type != YAML_MAPPING_NODE)
        return fail(L, root->start_mark, "the top level must be a mapping of sections (listen, output, flush, ...), "
                                         "not a %s",
                    node_kind(root));
    L->cfg->written.anything = true; /* `{}` too: all defaults, said on purpose */
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        int rc;
        yaml_node_t *key = visit(L, p->key, root->start_mark, &rc);
        if (!key)
            return rc;
        const char *text = NULL;
        if ((rc = key_text(L, key, &text)) < 0 || (rc = check_duplicate(L, root, p, key, NULL)) < 0)
            return rc;
        if (strcmp(text, "identities") == 0) {
            yaml_node_t *ids = visit(L, p->value, key->start_mark, &rc);
            if (!ids || (rc = load_identities(L, ids)) < 0)
                return rc;
            continue;
        }
        size_t s = 0;
        while (s < recd_cfg_section_count() && strcmp(recd_cfg_sections[s], text) != 0)
            s++;
        if (s == recd_cfg_section_count())
            return unknown_section(L, key, text);
        yaml_node_t *val = visit(L, p->value, key->start_mark, &rc);
        if (!val)
            return rc;
        rc = (s == 0) ? load_listen(L, val) : load_section(L, recd_cfg_sections[s], val);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* A problem that involves two options (or the listen list). */
typedef struct conflict_info {
    const char *key_a, *key_b;
    char message[512];
} conflict_info;

static int is_loopback(const recd_hostport *hp)
{
    unsigned char bin[16];
    if (hp->family == AF_INET && inet_pton(AF_INET, hp->host, bin) == 1)
        return bin[0] == 127;
    if (hp->family == AF_INET6 && inet_pton(AF_INET6, hp->host, bin) == 1) {
        static const unsigned char one[16] = {[15] = 1};
        static const unsigned char v4mapped[12] = {[10] = 0xff, [11] = 0xff};
        return memcmp(bin, one, 16) == 0 || (memcmp(bin, v4mapped, 12) == 0 && bin[12] == 127);
    }
    return 0;
}

static int is_wildcard(const recd_hostport *hp)
{
    return strcmp(hp->host, "0.0.0.0") == 0 || strcmp(hp->host, "::") == 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int report_conflict(conflict_info *out, const char *key_a, const char *key_b, const char *fmt, ...)
{
    out->key_a = key_a;
    out->key_b = key_b;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->message, sizeof out->message, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* The rules that span several options. 0, or -EINVAL with *out describing the first violation. */
static int find_conflict(const recd_config *c, conflict_info *out)
{
    char x[32], y[32];
    if (c->flush.buffer_size > c->limits.session_buffer) {
        recd_format_size(c->flush.buffer_size, x, sizeof x);
        recd_format_size(c->limits.session_buffer, y, sizeof y);
        return report_conflict(out, "flush.buffer_size", "limits.session_buffer",
                               "flush.buffer_size (%s) is larger than limits.session_buffer (%s): sessions would "
                               "hit backpressure before they ever flush",
                               x, y);
    }
    if (c->limits.max_frame > c->limits.session_buffer) {
        recd_format_size(c->limits.max_frame, x, sizeof x);
        recd_format_size(c->limits.session_buffer, y, sizeof y);
        return report_conflict(out, "limits.max_frame", "limits.session_buffer",
                               "limits.max_frame (%s) is larger than limits.session_buffer (%s): one message "
                               "would not fit in a session's buffer",
                               x, y);
    }
    if (c->limits.session_buffer > c->limits.process_buffer) {
        recd_format_size(c->limits.session_buffer, x, sizeof x);
        recd_format_size(c->limits.process_buffer, y, sizeof y);
        return report_conflict(out, "limits.session_buffer", "limits.process_buffer",
                               "limits.session_buffer (%s) is larger than limits.process_buffer (%s)", x, y);
    }
    if (c->metrics.enabled && !c->metrics.allow_remote && !is_loopback(&c->metrics.listen))
        return report_conflict(out, "metrics.listen", "metrics.allow_remote",
                               "metrics.listen %s is not a loopback address; the endpoint has no authentication, "
                               "so set metrics.allow_remote: true to expose it beyond this host",
                               c->metrics.listen.host);
    if (c->identity_count && !c->tls.client_ca)
        return report_conflict(out, "tls.client_ca", "tls.client_ca",
                               "identities are names of client certificates: set tls.client_ca to "
                               "the CA that signs them");
    if ((c->tls.cert != NULL) != (c->tls.key != NULL))
        return report_conflict(out, "tls.cert", "tls.key", "tls.cert and tls.key go together");
    if (c->metrics.enabled && c->metrics.tls && !c->tls.cert)
        return report_conflict(out, "metrics.tls", "tls.cert",
                               "metrics.tls needs tls.cert and tls.key");
    for (size_t i = 0; i < c->listen_count; i++) {
        const recd_listen_config *l = &c->listen[i];
        if (l->tls && !c->tls.cert)
            return report_conflict(out, "listen", "tls.cert",
                                   "listener %s needs tls.cert and tls.key", l->url);
        for (size_t j = 0; j < i; j++)
            if (recd_cfg_same_listener(&c->listen[j], l))
                return report_conflict(out, "listen", "listen", "listen: '%s' is the same socket as '%s'", l->url,
                                       c->listen[j].url);
        if (c->metrics.enabled && l->transport == RECD_WIRE_TCP && l->addr.port != 0 &&
            l->addr.port == c->metrics.listen.port &&
            (strcmp(l->addr.host, c->metrics.listen.host) == 0 || is_wildcard(&l->addr) ||
             is_wildcard(&c->metrics.listen)))
            return report_conflict(out, "metrics.listen", "metrics.listen",
                                   "metrics.listen uses the same address as listener %s", l->url);
    }
    return 0;
}

int recd_config_check(const recd_config *cfg, char *why, size_t cap)
{
    conflict_info info;
    if (find_conflict(cfg, &info) == 0)
        return 0;
    if (why && cap)
        snprintf(why, cap, "%s", info.message);
    return -EINVAL;
}

/* Index of a row by key; -1 for keys outside the table ("listen"). */
static long row_index(const char *key)
{
    for (size_t i = 0; i < recd_cfg_row_count(); i++)
        if (strcmp(recd_cfg_rows[i].key, key) == 0)
            return (long)i;
    return -1;
}

/* Reports a conflict at whichever of its two options the file set later. */
static int check_consistency(loader *L)
{
    conflict_info info;
    if (find_conflict(L->cfg, &info) == 0)
        return 0;
    const char *keys[2] = {info.key_a, info.key_b};
    yaml_mark_t mark = {0, 0, 0};
    bool have = false;
    for (int k = 0; k < 2; k++) {
        long i = row_index(keys[k]);
        if (i >= 0 && L->row_set[i] && (!have || L->row_mark[i].index > mark.index)) {
            mark = L->row_mark[i];
            have = true;
        }
    }
    return error_at(L->err, L->name, have ? (unsigned)mark.line + 1 : 0, have ? (unsigned)mark.column + 1 : 0, "%s",
                    info.message);
}

/* Line and column (1-based) of a byte offset, for reader errors that have no mark. */
static void offset_position(const char *text, size_t len, size_t offset, unsigned *line, unsigned *column)
{
    *line = 1;
    *column = 1;
    for (size_t i = 0; i < offset && i < len; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *column = 1;
        } else {
            (*column)++;
        }
    }
}

static int yaml_failure(const yaml_parser_t *p, const char *name, const char *text, size_t len,
                        recd_config_error *err)
{
    unsigned line, column;
    if (p->error == YAML_READER_ERROR) {
        offset_position(text, len, p->problem_offset, &line, &column);
        return error_at(err, name, line, column, "cannot read the file as YAML: %s",
                        p->problem ? p->problem : "invalid input");
    }
    if (p->error == YAML_MEMORY_ERROR)
        return error_at(err, name, 0, 0, "out of memory while parsing");
    line = (unsigned)p->problem_mark.line + 1;
    column = (unsigned)p->problem_mark.column + 1;
    const char *hint = "";
    if (p->problem_mark.index < len && text[p->problem_mark.index] == '\t')
        hint = "; indent with spaces, YAML does not allow tabs";
    if (p->context)
        return error_at(err, name, line, column, "YAML syntax error: %s (%s started at line %u)%s",
                        p->problem ? p->problem : "invalid YAML", p->context, (unsigned)p->context_mark.line + 1,
                        hint);
    return error_at(err, name, line, column, "YAML syntax error: %s%s", p->problem ? p->problem : "invalid YAML",
                    hint);
}

/* libyaml's scanner does work proportional to the flow nesting depth for every token, so a file of
 * nothing but '[' takes minutes to reject. This first pass streams events and stops at a depth no
 * valid recd.yaml reaches, which keeps the real load linear in the file size. */
#define MAX_NESTING 16

static int check_nesting(const char *text, size_t len, const char *name, recd_config_error *err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return error_at(err, name, 0, 0, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int depth = 0, rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = yaml_failure(&parser, name, text, len, err);
            break;
        }
        yaml_event_type_t type = ev.type;
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > MAX_NESTING)
                rc = error_at(err, name, (unsigned)ev.start_mark.line + 1, (unsigned)ev.start_mark.column + 1,
                              "lists and mappings are nested more than %d levels deep", MAX_NESTING);
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        yaml_event_delete(&ev);
        if (rc < 0 || type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return rc;
}

int recd_config_load_string(const char *text, size_t len, const char *name, recd_config *cfg,
                            recd_config_error *err)
{
    if (!name)
        name = "<string>";
    if (!text && len)
        return error_at(err, name, 0, 0, "no input");
    if (len > RECD_CONFIG_MAX_FILE_SIZE)
        return error_at(err, name, 0, 0, "the file is larger than %u bytes", RECD_CONFIG_MAX_FILE_SIZE);

    if (!text)
        text = "";
    int rc = check_nesting(text, len, name, err);
    if (rc < 0)
        return rc;
    recd_config tmp;
    rc = recd_config_defaults(&tmp);
    if (rc < 0)
        return error_at(err, name, 0, 0, "out of memory");

    yaml_parser_t parser;
    yaml_document_t doc, extra;
    if (!yaml_parser_initialize(&parser)) {
        recd_config_free(&tmp);
        return error_at(err, name, 0, 0, "out of memory");
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        rc = yaml_failure(&parser, name, text, len, err);
        yaml_parser_delete(&parser);
        recd_config_free(&tmp);
        return rc;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root) {
        if (!yaml_parser_load(&parser, &extra)) {
            rc = yaml_failure(&parser, name, text, len, err);
        } else {
            yaml_node_t *second = yaml_document_get_root_node(&extra);
            if (second)
                rc = error_at(err, name, (unsigned)extra.start_mark.line + 1, (unsigned)extra.start_mark.column + 1,
                              "only one YAML document is allowed (remove the second '---')");
            yaml_document_delete(&extra);
        }
    }
    if (rc == 0 && root) {
        loader L = {.name = name, .doc = &doc, .cfg = &tmp, .err = err};
        L.nnodes = (size_t)(doc.nodes.top - doc.nodes.start);
        L.visited = calloc(L.nnodes ? L.nnodes : 1, 1);
        if (!L.visited) {
            rc = error_at(err, name, 0, 0, "out of memory");
        } else {
            L.visited[0] = 1; /* the root */
            rc = load_root(&L, root);
            if (rc == 0)
                rc = read_token_file(&L);
            if (rc == 0)
                rc = check_consistency(&L);
            free(L.visited);
        }
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    if (rc < 0) {
        recd_config_free(&tmp);
        return rc;
    }
    *cfg = tmp;
    return 0;
}

int recd_config_load_file(const char *path, recd_config *cfg, recd_config_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        error_at(err, path, 0, 0, "cannot open the config file: %s", strerror(e));
        return -e;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        error_at(err, path, 0, 0, "not a regular file");
        return -EINVAL;
    }
    if (st.st_size > RECD_CONFIG_MAX_FILE_SIZE) {
        close(fd);
        error_at(err, path, 0, 0, "the file is larger than %u bytes", RECD_CONFIG_MAX_FILE_SIZE);
        return -EFBIG;
    }
    size_t cap = (size_t)st.st_size + 1, len = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        error_at(err, path, 0, 0, "out of memory");
        return -ENOMEM;
    }
    for (;;) {
        if (len == cap) { /* the file grew while we read it */
            free(buf);
            close(fd);
            error_at(err, path, 0, 0, "the file changed while being read");
            return -EAGAIN;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            close(fd);
            error_at(err, path, 0, 0, "cannot read the config file: %s", strerror(e));
            return -e;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    int rc = recd_config_load_string(buf, len, path, cfg, err);
    free(buf);
    return rc;
}

