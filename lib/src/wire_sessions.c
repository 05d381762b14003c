/* Session bookkeeping of a wire decoder: the formats of sessions opened on this connection (or in
 * this datagram), which session a key-less message continues, and the format lookup order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire_internal.h"

static long find(const wire_sessions *s, const char *key)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->items[i].key, key) == 0)
            return (long)i;
    return -1;
}

recd_msg_format wire_sessions_get(const wire_sessions *s, const char *key)
{
    long i = find(s, key);
    return i < 0 ? RECD_MSG_FMT_NONE : s->items[i].format;
}

int wire_sessions_set(wire_sessions *s, const char *key, recd_msg_format f)
{
    long i = find(s, key);
    if (i >= 0) {
        s->items[i].format = f;
        return 0;
    }
    if (s->count >= RECD_WIRE_LOCAL_SESSIONS_MAX)
        return -ENOSPC;
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        void *p = realloc(s->items, cap * sizeof *s->items);
        if (!p)
            return -ENOMEM;
        s->items = p;
        s->cap = cap;
    }
    size_t klen = strnlen(key, RECD_SESSION_KEY_MAX);
    memcpy(s->items[s->count].key, key, klen);
    s->items[s->count].key[klen] = 0;
    s->items[s->count].format = f;
    s->count++;
    return 0;
}

void wire_sessions_remove(wire_sessions *s, const char *key)
{
    long i = find(s, key);
    if (i >= 0)
        s->items[i] = s->items[--s->count];
}

void wire_sessions_clear(wire_sessions *s) { s->count = 0; }

void wire_sessions_free(wire_sessions *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

recd_msg_format wire_env_format(const wire_env *env, const char *session)
{
    /* On a stream every earlier message has already been handed to the receiver, whose registry
     * is the authority; inside a datagram nothing has been handed over yet. */
    if (env->format_of && !env->datagram)
        return env->format_of(env->ctx, session);
    recd_msg_format f = wire_sessions_get(&env->local, session);
    if (f == RECD_MSG_FMT_NONE && env->format_of)
        f = env->format_of(env->ctx, session);
    return f;
}

void wire_env_note_session(wire_env *env, const char *session)
{
    /* Every caller's key is a whole RECD_SESSION_KEY_MAX + 1 buffer: a fixed-size copy. */
    memcpy(env->prev, session, RECD_SESSION_KEY_MAX + 1);
    env->prev[RECD_SESSION_KEY_MAX] = 0;
}

int wire_env_after(wire_env *env, const recd_msg *m, char *why, size_t whylen)
{
    wire_env_note_session(env, m->session);
    if (env->format_of && !env->datagram)
        return 0; /* the receiver keeps track */
    if (m->type == RECD_MSG_CLOSE) {
        wire_sessions_remove(&env->local, m->session);
        return 0;
    }
    if (m->type != RECD_MSG_OPEN)
        return 0;
    int rc = wire_sessions_set(&env->local, m->session, m->format);
    if (rc == -ENOSPC)
        wire_why(why, whylen, "more than %u sessions open at once on one %s",
                 RECD_WIRE_LOCAL_SESSIONS_MAX, env->datagram ? "datagram" : "connection");
    else if (rc == -ENOMEM)
        wire_why(why, whylen, "out of memory");
    return rc == -ENOSPC ? -EBADMSG : rc;
}
