/* SPDX-License-Identifier: MIT */
/* `rectool npc`: PAWN scripts that play a samp-player session's .rec parts (rec_npc.c), a
 * command of the .rec formats' rectool entry (rec_info.c). */
#ifndef RECTOOL_REC_NPC_H
#define RECTOOL_REC_NPC_H

/* argv[0] is "npc"; an exit code (commands.h). */
int rt_rec_npc(int argc, char **argv);

#endif
