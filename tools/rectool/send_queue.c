/* SPDX-License-Identifier: MIT */
/* rt_send_queue: a ring of RT_SEND_QUEUE_SLOTS messages under one mutex; one condition variable
 * wakes whichever side waits (the reader for room, the sender for a message). */
#include "send_queue.h"

#include <errno.h>
#include <string.h>

int rt_send_queue_init(rt_send_queue *q)
{
    memset(q, 0, sizeof *q);
    int rc = pthread_mutex_init(&q->lock, NULL);
    if (rc != 0)
        return -rc;
    if ((rc = pthread_cond_init(&q->changed, NULL)) != 0) {
        pthread_mutex_destroy(&q->lock);
        return -rc;
    }
    return 0;
}

void rt_send_queue_destroy(rt_send_queue *q)
{
    for (size_t i = 0; i < q->count; i++)
        recd_msg_free(&q->slots[(q->head + i) % RT_SEND_QUEUE_SLOTS].m);
    q->count = 0;
    pthread_cond_destroy(&q->changed);
    pthread_mutex_destroy(&q->lock);
}

int rt_send_queue_put(rt_send_queue *q, rt_timed_msg *tm)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == RT_SEND_QUEUE_SLOTS && !q->cancelled)
        pthread_cond_wait(&q->changed, &q->lock);
    if (q->cancelled) {
        pthread_mutex_unlock(&q->lock);
        recd_msg_free(&tm->m);
        return -ECANCELED;
    }
    rt_timed_msg *slot = &q->slots[(q->head + q->count) % RT_SEND_QUEUE_SLOTS];
    recd_msg_move(&slot->m, &tm->m);
    slot->at_ms = tm->at_ms;
    q->count++;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
    return 0;
}

void rt_send_queue_close(rt_send_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->closed = true;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

bool rt_send_queue_cancelled(rt_send_queue *q)
{
    pthread_mutex_lock(&q->lock);
    bool cancelled = q->cancelled;
    pthread_mutex_unlock(&q->lock);
    return cancelled;
}

const rt_timed_msg *rt_send_queue_peek(rt_send_queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->changed, &q->lock);
    /* The reader only writes free slots, so the head stays put until pop. */
    const rt_timed_msg *head = q->count ? &q->slots[q->head] : NULL;
    pthread_mutex_unlock(&q->lock);
    return head;
}

void rt_send_queue_pop(rt_send_queue *q, rt_timed_msg *out)
{
    pthread_mutex_lock(&q->lock);
    if (q->count == 0) { /* only after a peek that returned NULL */
        pthread_mutex_unlock(&q->lock);
        recd_msg_init(&out->m, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
        out->at_ms = 0;
        return;
    }
    rt_timed_msg *head = &q->slots[q->head];
    recd_msg_move(&out->m, &head->m);
    out->at_ms = head->at_ms;
    q->head = (q->head + 1) % RT_SEND_QUEUE_SLOTS;
    q->count--;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}

void rt_send_queue_cancel(rt_send_queue *q)
{
    pthread_mutex_lock(&q->lock);
    q->cancelled = true;
    pthread_cond_broadcast(&q->changed);
    pthread_mutex_unlock(&q->lock);
}
