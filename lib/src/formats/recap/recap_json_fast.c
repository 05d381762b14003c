/* SPDX-License-Identifier: MIT */
/* The tree-free reader for Recap state lines, the bulk of a Recap session's JSON lines: one pass
 * over the bytes, keys in the order rectool writes them predicted, numbers converted in place
 * (message/json/json_scan.h). It only ever accepts what the jansson reader accepts, with the same
 * values; whatever it is unsure of it declines, and the jansson reader gives the error message. */
#include "formats/recap/recap_json_fast.h"

#include <math.h>
#include <string.h>

#include "base/text.h"
#include "formats/recap/recap_msg.h"
#include "message/json/json_scan.h"

/* The keys of a state line, in the order recd_msg_to_json writes them. */
enum {
    K_TYPE,
    K_SESSION,
    K_SEQ,
    K_TICK,
    K_POS,
    K_ROT,
    K_VEL,
    K_FLAGS,
    K_POSE,
    K_GAME_MODE,
    K_HAND_STATE,
    K_HEALTH,
    K_ABSORPTION,
    K_EQUIPMENT,
    K_INVENTORY,
    K_STATE_KEYS
};

typedef struct key_name {
    const char *name;
    size_t len;
} key_name;

#define KEY(s) {s, sizeof s - 1}
static const key_name state_keys[K_STATE_KEYS] = {
    KEY("type"),  KEY("session"),   KEY("seq"),        KEY("tick"),   KEY("pos"),
    KEY("rot"),   KEY("vel"),       KEY("flags"),      KEY("pose"),   KEY("game_mode"),
    KEY("hand_state"), KEY("health"), KEY("absorption"), KEY("equipment"), KEY("inventory"),
};

/* Keys a state needs (equipment and inventory may be left out: all their slots empty). */
#define REQUIRED_KEYS                                                                      \
    ((1u << K_TYPE) | (1u << K_TICK) | (1u << K_POS) | (1u << K_ROT) | (1u << K_VEL) |      \
     (1u << K_FLAGS) | (1u << K_POSE) | (1u << K_GAME_MODE) | (1u << K_HAND_STATE) |        \
     (1u << K_HEALTH) | (1u << K_ABSORPTION))

/* The keys of a state list's item, in the order they are written. */
enum { I_SLOT, I_KEY, I_COUNT, I_FLAGS, I_DATA, I_ITEM_KEYS };
static const key_name item_keys[I_ITEM_KEYS] = {KEY("slot"), KEY("key"), KEY("count"),
                                                KEY("flags"), KEY("data")};
#undef KEY

#define ITEM_KEY_MAX 255u  /* a key string's bytes (the jansson reader's STR_MAX) */
#define ITEM_DATA_MAX 65535u

/* Decoded item data: the bytes of all items in one buffer, placed once the line is read (the
 * buffer may move while it grows). */
typedef struct item_data {
    recd_buf bytes;
    struct {
        recd_recap_item *item;
        size_t at, len;
    } place[RECD_RECAP_EQUIPMENT_SLOTS + RECD_RECAP_INVENTORY_SLOTS];
    size_t n;
} item_data;

/* The next key: the predicted one without a scan, else any of the table's; its index, or -1. */
static int read_key(reader *r, const key_name *keys, int nkeys, int expect)
{
    skip_ws(r);
    if (expect < nkeys && eat_expected_key(r, keys[expect].name, keys[expect].len))
        return eat(r, ':') ? expect : -1;
    const char *k;
    size_t kn;
    if (!read_plain_string(r, &k, &kn))
        return -1;
    for (int i = 0; i < nkeys; i++)
        if (keys[i].len == kn && memcmp(keys[i].name, k, kn) == 0)
            return eat(r, ':') ? i : -1;
    return -1;
}

static bool read_int(reader *r, int64_t min, int64_t max, int64_t *v)
{
    bool is_int;
    double d;
    return read_number(r, &is_int, v, &d) && is_int && *v >= min && *v <= max;
}

static bool read_f32(reader *r, float *v)
{
    double d;
    return read_finite(r, &d) && text_double_to_f32(d, v);
}

static bool read_vec3(reader *r, double v[3])
{
    return eat(r, '[') && read_finite(r, &v[0]) && eat(r, ',') && read_finite(r, &v[1]) &&
           eat(r, ',') && read_finite(r, &v[2]) && eat(r, ']');
}

/* A list item {"slot":..,"key":..,"count":..[,"flags":..][,"data":..]} into items[slot]. */
static bool read_item(reader *r, recd_recap_item *items, int nslots, bool *used, item_data *data)
{
    if (!eat(r, '{'))
        return false;
    unsigned seen = 0;
    int expect = I_SLOT;
    int64_t slot = 0, count = 0, flags = 0;
    const char *key = NULL, *b64 = NULL;
    size_t key_len = 0, b64_len = 0;
    do {
        int k = read_key(r, item_keys, I_ITEM_KEYS, expect);
        if (k < 0 || (seen >> k & 1u))
            return false;
        seen |= 1u << k;
        expect = k + 1;
        bool ok;
        switch (k) {
        case I_SLOT: ok = read_int(r, 0, nslots - 1, &slot); break;
        case I_KEY: ok = read_plain_string(r, &key, &key_len); break;
        case I_COUNT: ok = read_int(r, 0, UINT8_MAX, &count); break;
        case I_FLAGS: ok = read_int(r, 0, UINT8_MAX, &flags); break;
        default: ok = read_plain_string(r, &b64, &b64_len); break;
        }
        if (!ok)
            return false;
    } while (eat(r, ','));
    /* Its '}' is not the line's last byte (which closes the line). */
    if (!eat(r, '}') || r->p == r->end)
        return false;
    const unsigned needed = 1u << I_SLOT | 1u << I_KEY | 1u << I_COUNT;
    if ((seen & needed) != needed || key_len == 0 || key_len > ITEM_KEY_MAX || used[slot])
        return false;
    used[slot] = true;
    recd_recap_item *it = &items[slot];
    memset(it, 0, sizeof *it);
    it->key.data = (const uint8_t *)key;
    it->key.len = key_len;
    it->count = (uint8_t)count;
    it->flags = (uint8_t)flags;
    if (b64) {
        size_t at = data->bytes.len;
        if (b64_len / 4 * 3 > ITEM_DATA_MAX + 2 ||
            !text_base64_decode(b64, b64_len, &data->bytes) ||
            data->bytes.len - at > ITEM_DATA_MAX)
            return false;
        data->place[data->n].item = it;
        data->place[data->n].at = at;
        data->place[data->n].len = data->bytes.len - at;
        data->n++;
    }
    return true;
}

/* An equipment or inventory list: at most nslots items, each slot at most once. */
static bool read_items(reader *r, recd_recap_item *items, int nslots, item_data *data)
{
    bool used[RECD_RECAP_INVENTORY_SLOTS] = {false};
    if (!eat(r, '['))
        return false;
    if (eat(r, ']'))
        return true;
    int n = 0;
    do {
        if (++n > nslots || !read_item(r, items, nslots, used, data))
            return false;
    } while (eat(r, ','));
    return eat(r, ']');
}

typedef struct state_line {
    recd_recap_state st;
    int64_t tick, seq;
    const char *session;
    size_t session_len;
} state_line;

static bool read_value(reader *r, int k, state_line *s, item_data *data)
{
    int64_t v;
    switch (k) {
    case K_TYPE: skip_ws(r); return eat_expected_key(r, "state", 5); /* the plain "state" */
    case K_SESSION:
        return read_plain_string(r, &s->session, &s->session_len) &&
               recd_session_key_valid(s->session, s->session_len);
    case K_SEQ: return read_int(r, 0, INT64_MAX, &s->seq);
    case K_TICK: return read_int(r, 0, INT64_MAX, &s->tick);
    case K_POS: return read_vec3(r, s->st.pos);
    case K_ROT: return read_vec3(r, s->st.rot);
    case K_VEL: return read_vec3(r, s->st.vel);
    case K_FLAGS:
        if (!read_int(r, 0, UINT16_MAX, &v))
            return false;
        s->st.flags = (uint16_t)v;
        return true;
    case K_POSE:
    case K_GAME_MODE:
    case K_HAND_STATE:
        if (!read_int(r, 0, UINT8_MAX, &v))
            return false;
        *(k == K_POSE ? &s->st.pose : k == K_GAME_MODE ? &s->st.game_mode : &s->st.hand_state) =
            (uint8_t)v;
        return true;
    case K_HEALTH: return read_f32(r, &s->st.health);
    case K_ABSORPTION: return read_f32(r, &s->st.absorption);
    case K_EQUIPMENT: return read_items(r, s->st.equipment, RECD_RECAP_EQUIPMENT_SLOTS, data);
    default: return read_items(r, s->st.inventory, RECD_RECAP_INVENTORY_SLOTS, data);
    }
}

static bool read_state(const char *line, size_t len, state_line *s, item_data *data)
{
    while (len && is_space(line[len - 1]))
        len--;
    if (!len || line[len - 1] != '}') /* the final byte that bounds the scans (json_scan.h) */
        return false;
    reader r = {line, line + len};
    unsigned seen = 0;
    int expect = K_TYPE;
    if (!eat(&r, '{'))
        return false;
    do {
        int k = read_key(&r, state_keys, K_STATE_KEYS, expect);
        if (k < 0 || (seen >> k & 1u) || !read_value(&r, k, s, data))
            return false; /* unknown (or "save"), repeated, or a value not plainly valid */
        seen |= 1u << k;
        expect = k + 1;
    } while (eat(&r, ','));
    if (!eat(&r, '}') || r.p != r.end || (seen & REQUIRED_KEYS) != REQUIRED_KEYS)
        return false;
    s->seq = seen >> K_SEQ & 1u ? s->seq : -1;
    if (!(seen >> K_SESSION & 1u))
        s->session = NULL;
    return true;
}

int recap_json_fast_state(const char *line, size_t len, recd_msg_format session_format,
                          recd_msg *out)
{
    if (session_format != RECD_MSG_FMT_RECAP)
        return 0; /* without a session format the jansson reader tells the format by the keys */
    state_line s;
    memset(&s, 0, sizeof s);
    item_data data;
    data.bytes = (recd_buf){0};
    data.n = 0;
    bool ok = read_state(line, len, &s, &data);
    for (size_t i = 0; ok && i < data.n; i++) /* (no bytes at all: only empty data) */
        data.place[i].item->data = (recd_recap_blob){
            data.bytes.data ? data.bytes.data + data.place[i].at : NULL, data.place[i].len};
    recd_msg_recap_state *state = ok ? msg_recap_state_clone((uint64_t)s.tick, &s.st) : NULL;
    recd_buf_free(&data.bytes);
    if (!state)
        return 0; /* (out of memory too: the jansson reader then says so) */
    recd_msg_init(out, RECD_MSG_NONE, RECD_MSG_FMT_NONE);
    out->type = RECD_MSG_STATE;
    out->format = RECD_MSG_FMT_RECAP;
    if (s.session) {
        memcpy(out->session, s.session, s.session_len);
        out->session[s.session_len] = 0;
    }
    out->has_seq = s.seq >= 0;
    out->seq = s.seq >= 0 ? (uint64_t)s.seq : 0;
    out->recap_state = state;
    return 1;
}
