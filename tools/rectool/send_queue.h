/* SPDX-License-Identifier: MIT */
/* A bounded queue of messages from one file's reader thread to rectool send's sending thread, so
 * that a recording is decoded while it is sent, in memory bounded by the queue, not the file. */
#ifndef RT_SEND_QUEUE_H
#define RT_SEND_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "recd/message.h"

#define RT_SEND_QUEUE_SLOTS 64

typedef struct rt_timed_msg {
    recd_msg m;
    uint64_t at_ms; /* since the session start, never decreasing within a file */
} rt_timed_msg;

typedef struct rt_send_queue {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    rt_timed_msg slots[RT_SEND_QUEUE_SLOTS];
    size_t head, count;
    bool closed;    /* the reader put its last message */
    bool cancelled; /* the sender stopped: the reader gives up */
} rt_send_queue;

int rt_send_queue_init(rt_send_queue *q);
/* Frees the messages still queued. Only once the reader thread has ended. */
void rt_send_queue_destroy(rt_send_queue *q);

/* Reader side. put takes tm->m over (tm is left empty); it waits while the queue is full and
 * returns -ECANCELED, freeing the message, once the sender cancelled. */
int rt_send_queue_put(rt_send_queue *q, rt_timed_msg *tm);
void rt_send_queue_close(rt_send_queue *q);
bool rt_send_queue_cancelled(rt_send_queue *q);

/* Sender side. peek waits for a message and returns the oldest, still queued; NULL when the
 * reader closed the queue and nothing is left. pop moves the oldest into out. */
const rt_timed_msg *rt_send_queue_peek(rt_send_queue *q);
void rt_send_queue_pop(rt_send_queue *q, rt_timed_msg *out);
void rt_send_queue_cancel(rt_send_queue *q);

#endif
