/* SPDX-License-Identifier: MIT */
/* Session bookkeeping of a wire decoder: the formats of sessions opened on this connection (or in
 * this datagram), which session a key-less message continues, and the format lookup order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf_grow.h"
#include "wire/wire_internal.h"

static long find(const wire_sessions *s, const char *key, size_t len)
{
    for (size_t i = 0; i < s->count; i++)
        if (s->items[i].key_len == len && memcmp(s->items[i].key, key, len) == 0)
            return (long)i;
    return -1;
}

/* Keys are len bytes, not NUL-terminated. */
static recd_msg_format wire_sessions_get(const wire_sessions *s, const char *key, size_t len)
{
    long i = find(s, key, len);
    return i < 0 ? RECD_MSG_FMT_NONE : s->items[i].format;
}

static int wire_sessions_set(wire_sessions *s, const char *key, size_t len, recd_msg_format f)
{
    long i = find(s, key, len);
    if (i >= 0) {
        s->items[i].format = f;
        return 0;
    }
    if (s->count >= RECD_WIRE_LOCAL_SESSIONS_MAX)
        return -ENOSPC;
    if (s->count == s->cap) {
        void *p = recd__array_room(s->items, &s->cap, s->count, sizeof *s->items, 8);
        if (!p)
            return -ENOMEM;
        s->items = p;
    }
    if (len > RECD_SESSION_KEY_MAX)
        len = RECD_SESSION_KEY_MAX;
    memcpy(s->items[s->count].key, key, len);
    s->items[s->count].key[len] = 0;
    s->items[s->count].key_len = (uint8_t)len;
    s->items[s->count].format = f;
    s->count++;
    return 0;
}

static void wire_sessions_remove(wire_sessions *s, const char *key, size_t len)
{
    long i = find(s, key, len);
    if (i >= 0)
        s->items[i] = s->items[--s->count];
}

void wire_sessions_clear(wire_sessions *s) { s->count = 0; }

void wire_sessions_free(wire_sessions *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* Out of line: inlined, its registers were saved on every stream sample's lookup too. */
__attribute__((noinline)) static recd_msg_format local_then_receiver(const wire_env *env,
                                                                     const char *key, size_t len,
                                                                     void **handle)
{
    recd_msg_format f = wire_sessions_get(&env->local, key, len);
    if (f == RECD_MSG_FMT_NONE && env->format_of)
        f = env->format_of(env->ctx, key, len, handle);
    return f;
}

recd_msg_format wire_env_format(const wire_env *env, const char *key, size_t len, void **handle)
{
    *handle = NULL;
    /* On a stream every earlier message has already been handed to the receiver, whose registry
     * is the authority; inside a datagram nothing has been handed over yet. */
    if (env->format_of && !env->datagram)
        return env->format_of(env->ctx, key, len, handle);
    return local_then_receiver(env, key, len, handle);
}

void wire_key_copy(char out[RECD_SESSION_KEY_MAX + 1], const char *key, size_t len,
                   size_t readable)
{
    /* A fixed-size copy where the bytes are there (they always are for a state): gcc turns a
     * variable one of up to 64 bytes into `rep movs`, whose start-up cost was a tenth of the loop
     * thread's time. The bytes after the terminator are then frame bytes. */
    if (readable >= RECD_SESSION_KEY_MAX)
        memcpy(out, key, RECD_SESSION_KEY_MAX);
    else
        memcpy(out, key, len);
    out[len] = 0;
}

void wire_env_note_session(wire_env *env, const char *key, size_t len, size_t readable)
{
    if (key == env->prev)
        return; /* a key_len 0 frame continues the previous session */
    wire_key_copy(env->prev, key, len, readable);
    env->prev_len = (uint8_t)len;
}

int wire_env_after(wire_env *env, const recd_msg *m, char *why, size_t whylen)
{
    size_t len = strnlen(m->session, RECD_SESSION_KEY_MAX);
    wire_env_note_session(env, m->session, len, sizeof m->session);
    if (env->format_of && !env->datagram)
        return 0; /* the receiver keeps track */
    if (m->type == RECD_MSG_CLOSE) {
        wire_sessions_remove(&env->local, m->session, len);
        return 0;
    }
    if (m->type != RECD_MSG_OPEN)
        return 0;
    int rc = wire_sessions_set(&env->local, m->session, len, m->format);
    if (rc == -ENOSPC)
        recd_why(why, whylen, "more than %u sessions open at once on one %s",
                 RECD_WIRE_LOCAL_SESSIONS_MAX, env->datagram ? "datagram" : "connection");
    else if (rc == -ENOMEM)
        recd_why(why, whylen, "out of memory");
    return rc == -ENOSPC ? -EBADMSG : rc;
}
