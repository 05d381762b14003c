/* SPDX-License-Identifier: MIT */
/* Message basics: names of types and formats, session key rules, init/free, encoding names. What
 * differs between formats comes from their descriptors' model hooks (msg_formats.h). */
#include "recd/message.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "message/msg_formats.h"
#include "recd/format_list.h"

const char *recd_msg_type_name(recd_msg_type t)
{
    switch (t) {
    case RECD_MSG_OPEN: return "open";
    case RECD_MSG_STATE: return "state";
    case RECD_MSG_EVENT: return "event";
    case RECD_MSG_FLUSH: return "flush";
    case RECD_MSG_CLOSE: return "close";
    case RECD_MSG_SAVE: return "save";
    default: return "";
    }
}

/* Names and extensions are the descriptors' (session-only formats included). */
const char *recd_msg_format_name(recd_msg_format f)
{
    const recd_format *e = msg_format_of(f);
    return e ? e->name : "";
}

recd_msg_format recd_msg_format_parse(const char *name)
{
    for (size_t i = 0; name && i < recd_format__all_count(); i++) {
        const recd_format *e = recd_format__all_at(i);
        if (e->msg_format != RECD_MSG_FMT_NONE && strcmp(name, e->name) == 0)
            return e->msg_format;
    }
    return RECD_MSG_FMT_NONE;
}

const char *recd_msg_format_ext(recd_msg_format f)
{
    const recd_format *e = msg_format_of(f);
    return e ? e->extension : "";
}

/* Bytes allowed in a session key: A-Z a-z 0-9 . _ - (a table: every frame's key is checked). */
static const bool key_byte_ok[256] = {
    ['-'] = true, ['.'] = true, ['_'] = true,
    ['0'] = true, ['1'] = true, ['2'] = true, ['3'] = true, ['4'] = true,
    ['5'] = true, ['6'] = true, ['7'] = true, ['8'] = true, ['9'] = true,
    ['A'] = true, ['B'] = true, ['C'] = true, ['D'] = true, ['E'] = true, ['F'] = true,
    ['G'] = true, ['H'] = true, ['I'] = true, ['J'] = true, ['K'] = true, ['L'] = true,
    ['M'] = true, ['N'] = true, ['O'] = true, ['P'] = true, ['Q'] = true, ['R'] = true,
    ['S'] = true, ['T'] = true, ['U'] = true, ['V'] = true, ['W'] = true, ['X'] = true,
    ['Y'] = true, ['Z'] = true,
    ['a'] = true, ['b'] = true, ['c'] = true, ['d'] = true, ['e'] = true, ['f'] = true,
    ['g'] = true, ['h'] = true, ['i'] = true, ['j'] = true, ['k'] = true, ['l'] = true,
    ['m'] = true, ['n'] = true, ['o'] = true, ['p'] = true, ['q'] = true, ['r'] = true,
    ['s'] = true, ['t'] = true, ['u'] = true, ['v'] = true, ['w'] = true, ['x'] = true,
    ['y'] = true, ['z'] = true,
};

bool recd_session_key_valid(const char *key, size_t len)
{
    if (!key || len == 0 || len > RECD_SESSION_KEY_MAX || key[0] == '.')
        return false;
    bool ok = true;
    for (size_t i = 0; i < len; i++) /* no early exit: the loop stays branch-free */
        ok &= key_byte_ok[(unsigned char)key[i]];
    return ok;
}

void recd_msg_init(recd_msg *m, recd_msg_type type, recd_msg_format format)
{
    memset(m, 0, sizeof *m);
    m->type = type;
    m->format = format;
}

/* An open may hold any format's member whatever its format says: every format frees its own. */
static void open_free(recd_msg *m)
{
    free(m->open.auth);
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const struct recd_format_model *h = recd_format__all_at(i)->model;
        if (h && h->open_free)
            h->open_free(m);
    }
}

void recd_msg_free(recd_msg *m)
{
    if (!m || m->type == RECD_MSG_NONE) /* owns nothing: a receiver took it, or it was never set */
        return;
    const recd_format *e;
    switch (m->type) {
    case RECD_MSG_OPEN: open_free(m); break;
    case RECD_MSG_STATE:
        if ((e = msg_format_of(m->format)) && e->model && e->model->state_free)
            e->model->state_free(m);
        break;
    case RECD_MSG_EVENT:
        if ((e = msg_format_of_msg(m)) && e->model && e->model->event_free)
            e->model->event_free(m);
        break;
    default: break;
    }
    memset(m, 0, sizeof *m);
}

void recd_msg_move(recd_msg *dst, recd_msg *src)
{
    *dst = *src;
    recd_msg_init(src, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
}

/* Every format's hook runs even after one failed, so that each member of dst is either its own
 * copy or NULL when dst is freed. */
static bool open_copy(recd_msg *dst, const recd_msg *src)
{
    bool ok = true;
    dst->open.auth = NULL;
    if (src->open.auth && !(dst->open.auth = strdup(src->open.auth)))
        ok = false;
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const struct recd_format_model *h = recd_format__all_at(i)->model;
        if (h && h->open_copy && h->open_copy(dst, src) != 0)
            ok = false;
    }
    return ok;
}

int recd_msg_copy(recd_msg *dst, const recd_msg *src)
{
    *dst = *src;
    bool ok = true;
    const recd_format *e = msg_format_of_msg(src);
    const struct recd_format_model *h = e ? e->model : NULL;
    switch (src->type) {
    case RECD_MSG_OPEN: ok = open_copy(dst, src); break;
    case RECD_MSG_STATE:
        if (h && h->state_copy)
            ok = h->state_copy(dst, src) == 0;
        break;
    case RECD_MSG_EVENT:
        if (h && h->event_copy)
            ok = h->event_copy(dst, src) == 0;
        break;
    default: break;
    }
    if (!ok) {
        recd_msg_free(dst);
        return -ENOMEM;
    }
    return 0;
}

recd_text_encoding recd_text_encoding_parse(const char *name)
{
    if (name && strcmp(name, "jsonl") == 0)
        return RECD_TEXT_JSONL;
    if (name && strcmp(name, "csv") == 0)
        return RECD_TEXT_CSV;
    return RECD_TEXT_NONE;
}

recd_text_encoding recd_text_encoding_sniff(const uint8_t *buf, size_t len)
{
    size_t i = 0;
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF)
        i = 3; /* a UTF-8 byte order mark from a spreadsheet or editor */
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    return (i < len && buf[i] == '{') ? RECD_TEXT_JSONL : RECD_TEXT_CSV;
}

