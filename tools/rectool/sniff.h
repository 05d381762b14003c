/* Recognises a recording or text file by its content, never by its name. */
#ifndef RECTOOL_SNIFF_H
#define RECTOOL_SNIFF_H

#include <stddef.h>
#include <stdint.h>

#include "recd/samp_rec.h"

typedef enum rt_format {
    RT_FMT_UNKNOWN = 0,
    RT_FMT_EMPTY,        /* zero bytes */
    RT_FMT_SAMP_REC,     /* SA-MP .rec with a standard layout (vehicle, on-foot, header only) */
    RT_FMT_LEGACY_REC,   /* pre-0.3d SA-MP layouts: 1000/2 + 56-byte blocks, headerless 75 */
    RT_FMT_VCMP_REC,     /* VC:MP NPC plugin .rec: same 1000 signature, different blocks */
    RT_FMT_MANGLED_REC,  /* a .rec that went through a text conversion; unrecoverable */
    RT_FMT_RECAP,        /* "RCAP" magic */
    RT_FMT_JSONL,        /* text whose first non-blank byte is '{' */
    RT_FMT_CSV           /* other text with a comma-separated first line */
} rt_format;

/* rec_layout (may be NULL) receives the .rec layout for the *_REC formats, else UNKNOWN. */
rt_format rt_sniff(const uint8_t *buf, size_t len, recd_rec_layout *rec_layout);

/* Stable short name: "samp-rec", "legacy-rec", "vcmp-rec", "text-mangled-rec", "recap", ... */
const char *rt_format_name(rt_format f);
/* One sentence for people, e.g. why a legacy file is not a valid SA-MP file. */
const char *rt_format_describe(rt_format f);

#endif
