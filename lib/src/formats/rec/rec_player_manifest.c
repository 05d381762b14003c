/* SPDX-License-Identifier: MIT */
/* samp-player manifests (recd/player_manifest.h): the part list, its JSON text and parser, and
 * the atomic store (temporary file, fsync, rename) the daemon and recovery use. */
#include "recd/player_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf_grow.h"
#include "formats/rec/rec_player_manifest_io.h"
#include "recd/fd_sink.h"
#include "recd/part_file.h"
#include "recd/samp_rec.h"

recd_player_part *recd_player_manifest_add(recd_player_manifest *m)
{
    if (m->nparts >= RECD_PLAYER_MANIFEST_MAX_PARTS)
        return NULL;
    if (m->nparts == m->cap) {
        recd_player_part *p = recd__array_room(m->parts, &m->cap, m->nparts, sizeof *p, 8);
        if (!p)
            return NULL;
        m->parts = p;
    }
    recd_player_part *p = &m->parts[m->nparts++];
    memset(p, 0, sizeof *p);
    return p;
}

void recd_player_manifest_free(recd_player_manifest *m)
{
    free(m->parts);
    m->parts = NULL;
    m->nparts = m->cap = 0;
}

static const char *type_name(recd_rec_type t)
{
    return t == RECD_REC_TYPE_VEHICLE ? "vehicle" : "onfoot";
}

int recd_player_manifest_header(const recd_player_manifest *m, char *out, size_t cap)
{
    /* "complete" takes as many bytes either way (a space after the comma when true), so recd can
     * mark a manifest it appends to complete by writing its first line again in place. */
    int n = snprintf(out, cap,
                     "{\"format\":\"samp-player\",\"version\":%d,\"session\":\"%s\",\"start_time\":%lld,"
                     "\"complete\":%s\"recovered\":%s,\"parts\":[\n",
                     RECD_PLAYER_MANIFEST_VERSION, m->session, (long long)m->start_time_ms,
                     m->complete ? "true, " : "false,", m->recovered ? "true" : "false");
    return n < 0 || (size_t)n >= cap ? -ENOSPC : n;
}

int recd_player_part_line(const recd_player_part *p, bool comma, char *out, size_t cap)
{
    json_t *js = json_string(p->path);
    char *path = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
    json_decref(js);
    if (!path)
        return -ENOMEM;
    size_t n = 0;
    int k = snprintf(out, cap, "  {\"path\":%s,\"type\":\"%s\",\"start_ms\":%llu,\"duration_ms\":%llu",
                     path, type_name(p->type), (unsigned long long)p->start_ms,
                     (unsigned long long)p->duration_ms);
    free(path);
    if (k < 0 || (size_t)k >= cap)
        return -ENOSPC;
    n = (size_t)k;
    if (p->has_model && (k = snprintf(out + n, cap - n, ",\"vehicle_model\":%u", p->vehicle_model)) > 0)
        n += (size_t)k;
    if (n < cap && p->has_seat && (k = snprintf(out + n, cap - n, ",\"seat\":%u", p->seat)) > 0)
        n += (size_t)k;
    if (n < cap)
        n += (size_t)snprintf(out + n, cap - n, ",\"complete\":%s}%s\n",
                              p->complete ? "true" : "false", comma ? "," : "");
    return n >= cap ? -ENOSPC : (int)n;
}

/* Printed by hand, one part a line, so that a person reading the file sees the sequence. The
 * strings are session keys and paths recd made: [A-Za-z0-9._-/] and the path template's literal
 * text, escaped through jansson all the same. */
char *recd_player_manifest_to_json(const recd_player_manifest *m)
{
    recd_buf b = {0};
    char line[RECD_PLAYER_LINE_MAX];
    int n = recd_player_manifest_header(m, line, sizeof line);
    int rc = n < 0 ? n : recd_buf_append(&b, line, (size_t)n);
    for (size_t i = 0; rc == 0 && i < m->nparts; i++) {
        n = recd_player_part_line(&m->parts[i], i + 1 < m->nparts, line, sizeof line);
        rc = n < 0 ? n : recd_buf_append(&b, line, (size_t)n);
    }
    if (rc == 0)
        rc = recd_buf_append(&b, "]}\n", 4); /* with its NUL */
    if (rc < 0) {
        free(b.data);
        return NULL;
    }
    return (char *)b.data;
}

static int bad(char *why, size_t whylen, const char *fmt, const char *a)
{
    snprintf(why, whylen, fmt, a);
    return -EBADMSG;
}

static int get_uint(json_t *o, const char *key, bool required, uint64_t max, uint64_t *v,
                    bool *has, char *why, size_t whylen)
{
    json_t *j = json_object_get(o, key);
    if (has)
        *has = j != NULL;
    if (!j)
        return required ? bad(why, whylen, "missing key \"%s\"", key) : 0;
    if (!json_is_integer(j) || json_integer_value(j) < 0 || (uint64_t)json_integer_value(j) > max)
        return bad(why, whylen, "\"%s\" is not an integer in range", key);
    *v = (uint64_t)json_integer_value(j);
    return 0;
}

static int parse_part(json_t *o, recd_player_part *p, char *why, size_t whylen)
{
    if (!json_is_object(o))
        return bad(why, whylen, "%s", "a part is not an object");
    json_t *path = json_object_get(o, "path"), *type = json_object_get(o, "type");
    json_t *complete = json_object_get(o, "complete");
    if (!json_is_string(path) || json_string_length(path) == 0 ||
        json_string_length(path) >= sizeof p->path || strlen(json_string_value(path)) != json_string_length(path))
        return bad(why, whylen, "%s", "\"path\" is not a string of 1..1023 bytes");
    strcpy(p->path, json_string_value(path));
    if (!json_is_string(type))
        return bad(why, whylen, "%s", "\"type\" is not a string");
    if (strcmp(json_string_value(type), "onfoot") == 0)
        p->type = RECD_REC_TYPE_ONFOOT;
    else if (strcmp(json_string_value(type), "vehicle") == 0)
        p->type = RECD_REC_TYPE_VEHICLE;
    else
        return bad(why, whylen, "\"type\" is \"%s\", not onfoot or vehicle", json_string_value(type));
    uint64_t v = 0; /* left alone for an optional key that is absent */
    int rc;
    if ((rc = get_uint(o, "start_ms", true, UINT32_MAX, &p->start_ms, NULL, why, whylen)) < 0 ||
        (rc = get_uint(o, "duration_ms", true, UINT32_MAX, &p->duration_ms, NULL, why, whylen)) < 0)
        return rc;
    if ((rc = get_uint(o, "vehicle_model", false, 611, &v, &p->has_model, why, whylen)) < 0)
        return rc;
    if (p->has_model && v < 400)
        return bad(why, whylen, "%s", "\"vehicle_model\" is below 400");
    p->vehicle_model = (uint16_t)v;
    if ((rc = get_uint(o, "seat", false, 3, &v, &p->has_seat, why, whylen)) < 0)
        return rc;
    p->seat = (uint8_t)v;
    if ((p->has_model || p->has_seat) && p->type != RECD_REC_TYPE_VEHICLE)
        return bad(why, whylen, "%s", "an onfoot part has \"vehicle_model\" or \"seat\"");
    p->complete = json_is_true(complete);
    return 0;
}

/* recd appends to a manifest while its session records (the part lines, then the last lines and
 * the closing brackets written again in place): after a crash in the middle of that, the text
 * is its first line, whole part lines, and a torn end. The whole lines, closed again, or NULL. */
static json_t *salvage(const char *text, size_t len)
{
    const char *nl = memchr(text, '\n', len);
    if (!nl || nl == text || nl[-1] != '[')
        return NULL;
    recd_buf b = {0};
    int rc = recd_buf_append(&b, text, (size_t)(nl + 1 - text));
    const char *line = nl + 1, *end = text + len;
    bool first = true;
    while (rc == 0 && line < end && (nl = memchr(line, '\n', (size_t)(end - line))) != NULL) {
        size_t n = (size_t)(nl - line);
        if (n && line[n - 1] == ',')
            n--;
        if (n < 4 || memcmp(line, "  {", 3) != 0 || line[n - 1] != '}')
            break;
        if (!first)
            rc = recd_buf_append(&b, ",\n", 2);
        if (rc == 0)
            rc = recd_buf_append(&b, line, n);
        first = false;
        line = nl + 1;
    }
    if (rc == 0)
        rc = recd_buf_append(&b, "\n]}\n", 4);
    json_t *root = rc == 0 ? json_loadb((const char *)b.data, b.len, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(b.data);
    return root;
}

int recd_player_manifest_parse(const char *text, size_t len, recd_player_manifest *out, char *why,
                               size_t whylen)
{
    memset(out, 0, sizeof *out);
    json_error_t err;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
    if (!root && !(root = salvage(text, len))) {
        snprintf(why, whylen, "not JSON: %s (byte %d)", err.text, err.position);
        return -EBADMSG;
    }
    int rc = 0;
    json_t *fmt = json_object_get(root, "format"), *ses = json_object_get(root, "session");
    json_t *parts = json_object_get(root, "parts"), *st = json_object_get(root, "start_time");
    if (!json_is_object(root) || !json_is_string(fmt) || strcmp(json_string_value(fmt), "samp-player")) {
        rc = bad(why, whylen, "%s", "not a samp-player manifest (\"format\" is not \"samp-player\")");
    } else if (!json_is_string(ses) ||
               !recd_session_key_valid(json_string_value(ses), json_string_length(ses))) {
        rc = bad(why, whylen, "%s", "\"session\" is not a valid session key");
    } else if (!json_is_array(parts)) {
        rc = bad(why, whylen, "%s", "\"parts\" is not an array");
    } else if (st && !json_is_integer(st)) {
        rc = bad(why, whylen, "%s", "\"start_time\" is not an integer");
    } else {
        strcpy(out->session, json_string_value(ses));
        out->start_time_ms = st ? (int64_t)json_integer_value(st) : 0;
        out->complete = json_is_true(json_object_get(root, "complete"));
        out->recovered = json_is_true(json_object_get(root, "recovered"));
        size_t i;
        json_t *o;
        json_array_foreach(parts, i, o)
        {
            recd_player_part *p = recd_player_manifest_add(out);
            if (!p) {
                rc = out->nparts >= RECD_PLAYER_MANIFEST_MAX_PARTS
                         ? bad(why, whylen, "%s", "too many parts")
                         : -ENOMEM;
                break;
            }
            char sub[200];
            if ((rc = parse_part(o, p, sub, sizeof sub)) < 0) {
                snprintf(why, whylen, "parts[%zu]: %s", i, sub);
                break;
            }
        }
    }
    json_decref(root);
    if (rc < 0)
        recd_player_manifest_free(out);
    return rc;
}

int player_manifest_load_fd(int fd, recd_player_manifest *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot stat: %s", strerror(e));
        return -e;
    }
    if (!S_ISREG(st.st_mode))
        return bad(why, whylen, "%s", "not a regular file");
    if ((uint64_t)st.st_size > RECD_PLAYER_MANIFEST_MAX_BYTES)
        return bad(why, whylen, "%s", "larger than 64 MiB");
    size_t size = (size_t)st.st_size, n = 0;
    char *text = malloc(size + 1);
    if (!text)
        return -ENOMEM;
    while (n < size) { /* a file that shrinks meanwhile is parsed as far as it goes */
        ssize_t got = pread(fd, text + n, size - n, (off_t)n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(text);
            return bad(why, whylen, "%s", "read error");
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    int rc = recd_player_manifest_parse(text, n, out, why, whylen);
    free(text);
    return rc;
}

int recd_player_manifest_load(const char *file, recd_player_manifest *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, whylen, "cannot open: %s", strerror(e));
        return -e;
    }
    int rc = player_manifest_load_fd(fd, out, why, whylen);
    close(fd);
    return rc;
}

int recd_player_manifest_store(int root_fd, const char *rel, const char *text)
{
    return recd_confined_store_text(root_fd, rel, text, true);
}
