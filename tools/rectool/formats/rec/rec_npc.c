/* SPDX-License-Identifier: MIT */
/* `rectool npc script MANIFEST --dialect samp|openmp|fcnpc`: the PAWN script that plays the parts
 * of a samp-player session in order, putting the NPC into a vehicle before each vehicle part and
 * taking it out before an on-foot part that follows one. Where each vehicle part starts (position
 * and heading, for creating its vehicle) is read from the part's first block. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "rec_npc.h"
#include "file_io.h"
#include "recd/player_manifest.h"
#include "recd/samp_rec.h"

static const char npc_usage[] =
    "usage: rectool npc COMMAND [ARGS...]\n"
    "\n"
    "NPC playback of samp-player sessions (a player's on-foot and vehicle parts and their\n"
    "manifest, as recd writes them).\n"
    "\n"
    "  -h, --help   show this help\n"
    "\n"
    "Commands:\n"
    "  script   write the PAWN script that plays a session's parts in order\n";

static const char usage[] =
    "usage: rectool npc script MANIFEST --dialect samp|openmp|fcnpc [-o OUT] [--name NAME]\n"
    "\n"
    "Writes the PAWN script that plays the parts listed in MANIFEST (a samp-player session's\n"
    ".json) in order, putting the NPC into a vehicle of the part's model before each vehicle part\n"
    "and out of it before an on-foot part. Copy the parts into npcmodes/recordings/: the script\n"
    "names them without their .rec extension. Part paths are relative to the output root, found\n"
    "from the manifest's own place (it lies beside the first part).\n"
    "  samp    an NPC mode (a_npc): asks the gamemode for each vehicle with the command\n"
    "          \"/recd_enter MODEL SEAT X Y Z ANGLE\" and for leaving it with \"/recd_exit\"\n"
    "  openmp  a filterscript for open.mp's NPC component (NPC_Create, NPC_StartPlayback)\n"
    "  fcnpc   a filterscript for the FCNPC plugin (FCNPC_Create, FCNPC_StartPlayingPlayback)\n"
    "\n"
    "  -d, --dialect D   samp, openmp or fcnpc (required)\n"
    "  -o, --output OUT  write the script there (default: standard output)\n"
    "  -n, --name NAME   the NPC's name, openmp and fcnpc (default: the session key; a samp\n"
    "                    NPC mode is named by the gamemode's ConnectNPC)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit: 0 ok, 1 invalid manifest or part, 2 usage error, 3 I/O error.\n";

typedef enum dialect { D_SAMP, D_OPENMP, D_FCNPC } dialect;

/* Where a part starts: its first block's position and heading (degrees, GTA's: counter-clockwise
 * seen from above, 0 facing north). */
typedef struct part_start {
    float x, y, z, angle;
} part_start;

/* The output root: the manifest's directory without the directory part of the first part's
 * path (root + "/" + path names a part). */
static void find_root(const char *manifest, const recd_player_manifest *m, char *root, size_t cap)
{
    snprintf(root, cap, "%s", manifest);
    char *slash = strrchr(root, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(root, cap, ".");
    if (!m->nparts)
        return;
    const char *p = m->parts[0].path;
    const char *last = strrchr(p, '/');
    if (!last)
        return;
    size_t dl = (size_t)(last - p), rl = strlen(root);
    if (rl == dl && strncmp(root, p, dl) == 0) {
        snprintf(root, cap, ".");
    } else if (rl > dl && root[rl - dl - 1] == '/' && strncmp(root + rl - dl, p, dl) == 0) {
        root[rl - dl - 1] = 0;
    }
}

static int read_start(const char *root, const recd_player_part *p, part_start *out, char *why,
                      size_t whylen)
{
    char file[2 * RECD_PATH_MAX + 2];
    snprintf(file, sizeof file, "%s/%s", root, p->path);
    FILE *f = fopen(file, "rb");
    if (!f) {
        snprintf(why, whylen, "%.400s: %s", file, strerror(errno));
        return -EIO;
    }
    uint8_t buf[RECD_REC_HEADER_SIZE + RECD_REC_ONFOOT_BLOCK_SIZE];
    size_t want = RECD_REC_HEADER_SIZE + (p->type == RECD_REC_TYPE_VEHICLE
                                              ? RECD_REC_VEHICLE_BLOCK_SIZE
                                              : RECD_REC_ONFOOT_BLOCK_SIZE);
    size_t n = fread(buf, 1, want, f);
    fclose(f);
    if (n != want) {
        snprintf(why, whylen, "%.400s: no whole first block (%zu bytes)", file, n);
        return -EBADMSG;
    }
    float w, x, y, z;
    if (p->type == RECD_REC_TYPE_VEHICLE) {
        recd_rec_vehicle v;
        recd_rec_vehicle_decode(buf + RECD_REC_HEADER_SIZE, &v);
        out->x = v.position.x, out->y = v.position.y, out->z = v.position.z;
        w = v.rotation.w, x = v.rotation.x, y = v.rotation.y, z = v.rotation.z;
    } else {
        recd_rec_onfoot o;
        recd_rec_onfoot_decode(buf + RECD_REC_HEADER_SIZE, &o);
        out->x = o.position.x, out->y = o.position.y, out->z = o.position.z;
        w = o.rotation.w, x = o.rotation.x, y = o.rotation.y, z = o.rotation.z;
    }
    /* The rotation about z (yaw) of the quaternion, as a heading in [0, 360). */
    double yaw = atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)) * 180.0 / M_PI;
    if (!isfinite(yaw))
        yaw = 0;
    out->angle = (float)(yaw < 0 ? yaw + 360.0 : yaw);
    return 0;
}

/* The recording name a script uses: the part's file name without its directory and ".rec". */
static void record_name(const recd_player_part *p, char *out, size_t cap)
{
    const char *leaf = strrchr(p->path, '/');
    leaf = leaf ? leaf + 1 : p->path;
    snprintf(out, cap, "%s", leaf);
    size_t n = strlen(out);
    if (n > 4 && strcmp(out + n - 4, ".rec") == 0)
        out[n - 4] = 0;
}

/* A PAWN string literal's body: recd's names hold no quote or backslash, but a hand-made
 * manifest might. */
static void put_pawn_string(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', o);
        fputc(*s >= 0x20 && *s < 0x7F ? *s : '?', o);
    }
    fputc('"', o);
}

/* A float PAWN can read: a recording may hold NaN or infinity, which PAWN has no literal for
 * ("nan" is an undefined symbol to pawncc); the NPC starts at 0 on that axis instead. */
static double pawn_float(float v)
{
    return isfinite(v) ? (double)v : 0.0;
}

static void put_tables(FILE *o, const recd_player_manifest *m, const part_start *starts,
                       const char *onfoot, const char *vehicle)
{
    size_t n = m->nparts;
    fprintf(o, "#define RECD_PARTS %zu\n\n", n);
    fprintf(o, "// Part, type, vehicle model and seat, where it starts (x, y, z, heading); from %s\n",
            m->session);
    fprintf(o, "new const recd_part_name[RECD_PARTS][] = {\n");
    for (size_t i = 0; i < n; i++) {
        char name[RECD_PATH_MAX];
        record_name(&m->parts[i], name, sizeof name);
        fprintf(o, "    ");
        put_pawn_string(o, name);
        fprintf(o, "%s // start %llu ms, %llu ms long\n", i + 1 < n ? "," : "",
                (unsigned long long)m->parts[i].start_ms, (unsigned long long)m->parts[i].duration_ms);
    }
    fprintf(o, "};\nnew const recd_part_type[RECD_PARTS] = {");
    for (size_t i = 0; i < n; i++)
        fprintf(o, "%s%s", i ? ", " : "", m->parts[i].type == RECD_REC_TYPE_VEHICLE ? vehicle : onfoot);
    fprintf(o, "};\nnew const recd_part_model[RECD_PARTS] = {");
    for (size_t i = 0; i < n; i++) /* 400 (Landstalker) stands in for a model nobody sent */
        fprintf(o, "%s%u", i ? ", " : "",
                m->parts[i].type != RECD_REC_TYPE_VEHICLE ? 0u
                : m->parts[i].has_model                   ? m->parts[i].vehicle_model
                                                          : 400u);
    fprintf(o, "};\nnew const recd_part_seat[RECD_PARTS] = {");
    for (size_t i = 0; i < n; i++)
        fprintf(o, "%s%u", i ? ", " : "", m->parts[i].has_seat ? m->parts[i].seat : 0u);
    fprintf(o, "};\nnew const Float:recd_part_start[RECD_PARTS][4] = {\n");
    for (size_t i = 0; i < n; i++)
        fprintf(o, "    {%.4f, %.4f, %.4f, %.2f}%s\n", pawn_float(starts[i].x), pawn_float(starts[i].y),
                pawn_float(starts[i].z), pawn_float(starts[i].angle), i + 1 < n ? "," : "");
    fprintf(o, "};\n\n");
}

static void script_samp(FILE *o, const recd_player_manifest *m, const part_start *starts)
{
    fprintf(o, "// The gamemode puts the NPC into its vehicles: on \"/recd_enter MODEL SEAT X Y Z "
               "ANGLE\" from this NPC\n"
               "// it creates that vehicle there and calls PutPlayerInVehicle(playerid, vehicle, "
               "SEAT); on \"/recd_exit\"\n"
               "// it calls RemovePlayerFromVehicle(playerid) and may destroy the vehicle.\n"
               "#include <a_npc>\n\n");
    put_tables(o, m, starts, "PLAYER_RECORDING_TYPE_ONFOOT", "PLAYER_RECORDING_TYPE_DRIVER");
    fprintf(o,
            "new recd_part = -1;\n"
            "new bool:recd_in_vehicle = false;\n\n"
            "main() {}\n\n"
            "recd_next()\n"
            "{\n"
            "    if (++recd_part >= RECD_PARTS) {\n"
            "        recd_part = -1; // the session has been played\n"
            "        return;\n"
            "    }\n"
            "    if (recd_part_type[recd_part] == PLAYER_RECORDING_TYPE_DRIVER) {\n"
            "        new cmd[128];\n"
            "        format(cmd, sizeof cmd, \"/recd_enter %%d %%d %%f %%f %%f %%f\", "
            "recd_part_model[recd_part],\n"
            "               recd_part_seat[recd_part], recd_part_start[recd_part][0], "
            "recd_part_start[recd_part][1],\n"
            "               recd_part_start[recd_part][2], recd_part_start[recd_part][3]);\n"
            "        SendCommand(cmd); // OnNPCEnterVehicle starts the part\n"
            "    } else if (recd_in_vehicle) {\n"
            "        SendCommand(\"/recd_exit\"); // OnNPCExitVehicle starts the part\n"
            "    } else {\n"
            "        StartRecordingPlayback(PLAYER_RECORDING_TYPE_ONFOOT, recd_part_name[recd_part]);\n"
            "    }\n"
            "}\n\n"
            "public OnNPCSpawn()\n"
            "{\n"
            "    recd_part = -1;\n"
            "    recd_next();\n"
            "    return 1;\n"
            "}\n\n"
            "public OnRecordingPlaybackEnd()\n"
            "{\n"
            "    recd_next();\n"
            "    return 1;\n"
            "}\n\n"
            "public OnNPCEnterVehicle(vehicleid, seatid)\n"
            "{\n"
            "    recd_in_vehicle = true;\n"
            "    if (recd_part >= 0 && recd_part_type[recd_part] == PLAYER_RECORDING_TYPE_DRIVER)\n"
            "        StartRecordingPlayback(PLAYER_RECORDING_TYPE_DRIVER, recd_part_name[recd_part]);\n"
            "    return 1;\n"
            "}\n\n"
            "public OnNPCExitVehicle()\n"
            "{\n"
            "    recd_in_vehicle = false;\n"
            "    if (recd_part >= 0 && recd_part_type[recd_part] == PLAYER_RECORDING_TYPE_ONFOOT)\n"
            "        StartRecordingPlayback(PLAYER_RECORDING_TYPE_ONFOOT, recd_part_name[recd_part]);\n"
            "    return 1;\n"
            "}\n");
}

/* open.mp's NPC component and FCNPC share the shape: the filterscript owns the NPC and its
 * vehicles; only the natives' names differ. */
typedef struct server_api {
    const char *includes, *invalid_npc, *create, *spawn_fmt, *put_in, *remove, *play_fmt,
        *end_callback;
} server_api;

static const server_api openmp_api = {
    "#include <open.mp>\n", "INVALID_NPC_ID", "NPC_Create(RECD_NPC_NAME)",
    "NPC_Spawn(recd_npc);\n    NPC_SetPos(recd_npc, recd_part_start[0][0], recd_part_start[0][1], "
    "recd_part_start[0][2]);\n",
    "NPC_PutInVehicle(recd_npc, recd_vehicle, recd_part_seat[recd_part])", "NPC_RemoveFromVehicle(recd_npc)",
    "NPC_StartPlayback(recd_npc, recd_part_name[recd_part], true, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)",
    "public OnNPCPlaybackEnd(npcid, recordid)"};

static const server_api fcnpc_api = {
    "#include <a_samp>\n#include <FCNPC>\n", "INVALID_PLAYER_ID", "FCNPC_Create(RECD_NPC_NAME)",
    "FCNPC_Spawn(recd_npc, 0, recd_part_start[0][0], recd_part_start[0][1], recd_part_start[0][2]);\n",
    "FCNPC_PutInVehicle(recd_npc, recd_vehicle, recd_part_seat[recd_part])",
    "FCNPC_RemoveFromVehicle(recd_npc)",
    "FCNPC_StartPlayingPlayback(recd_npc, recd_part_name[recd_part])",
    "public FCNPC_OnFinishPlayback(npcid)"};

static void script_server(FILE *o, const server_api *api, const recd_player_manifest *m,
                          const part_start *starts, const char *name)
{
    fprintf(o, "%s\n#define RECD_NPC_NAME ", api->includes);
    put_pawn_string(o, name);
    fprintf(o, "\n\n");
    put_tables(o, m, starts, "0", "1"); /* 0 on foot, 1 vehicle */
    fprintf(o,
            "new recd_npc = %s;\n"
            "new recd_vehicle = INVALID_VEHICLE_ID;\n"
            "new recd_part = -1;\n\n"
            "recd_leave_vehicle()\n"
            "{\n"
            "    if (recd_vehicle == INVALID_VEHICLE_ID)\n"
            "        return;\n"
            "    %s;\n"
            "    DestroyVehicle(recd_vehicle);\n"
            "    recd_vehicle = INVALID_VEHICLE_ID;\n"
            "}\n\n"
            "recd_next()\n"
            "{\n"
            "    if (++recd_part >= RECD_PARTS) {\n"
            "        recd_part = -1; // the session has been played\n"
            "        recd_leave_vehicle();\n"
            "        return;\n"
            "    }\n"
            "    recd_leave_vehicle();\n"
            "    if (recd_part_type[recd_part] == 1) {\n"
            "        recd_vehicle = CreateVehicle(recd_part_model[recd_part], recd_part_start[recd_part][0],\n"
            "                                     recd_part_start[recd_part][1], recd_part_start[recd_part][2],\n"
            "                                     recd_part_start[recd_part][3], -1, -1, -1);\n"
            "        %s;\n"
            "    }\n"
            "    %s;\n"
            "}\n\n"
            "public OnFilterScriptInit()\n"
            "{\n"
            "    recd_npc = %s;\n"
            "    if (recd_npc == %s)\n"
            "        return 0;\n"
            "    %s"
            "    recd_next();\n"
            "    return 1;\n"
            "}\n\n"
            "public OnFilterScriptExit()\n"
            "{\n"
            "    recd_leave_vehicle();\n"
            "    return 1;\n"
            "}\n\n"
            "%s\n"
            "{\n"
            "    if (npcid == recd_npc && recd_part >= 0)\n"
            "        recd_next();\n"
            "    return 1;\n"
            "}\n",
            api->invalid_npc, api->remove, api->put_in, api->play_fmt, api->create, api->invalid_npc,
            api->spawn_fmt, api->end_callback);
}


/* The script's stream: a new OUT.part (rt_output: never through a link), or standard output. */
static FILE *open_script(rt_output *out, const char *out_path)
{
    int rc = rt_output_open(out, out_path);
    if (rc < 0) {
        rt_error("%s: %s", out_path, strerror(-rc));
        return NULL;
    }
    if (!out_path)
        return stdout;
    int fd = dup(out->fd); /* the FILE closes its own copy; commit closes the part's */
    FILE *o = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!o) {
        rt_error("%s: %s", out_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        rt_output_abort(out);
    }
    return o;
}

/* Flushes the script and renames the part onto OUT. 0, or -EIO after saying why. */
static int close_script(rt_output *out, FILE *o, const char *out_path)
{
    bool failed = ferror(o) != 0;
    if (out_path ? fclose(o) != 0 : fflush(o) != 0)
        failed = true;
    int rc = failed ? -EIO : rt_output_commit(out);
    if (failed)
        rt_output_abort(out);
    if (rc < 0)
        rt_error("%s: %s", out_path ? out_path : "standard output",
                 failed ? "write error" : strerror(-rc));
    return rc;
}

static int script(int argc, char **argv)
{
    static const struct option options[] = {{"dialect", required_argument, NULL, 'd'},
                                            {"output", required_argument, NULL, 'o'},
                                            {"name", required_argument, NULL, 'n'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *dialect_text = NULL, *out_path = NULL, *name = NULL;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":d:o:n:h", options, NULL)) != -1) {
        switch (c) {
        case 'd': dialect_text = optarg; break;
        case 'o': out_path = optarg; break;
        case 'n': name = optarg; break;
        case 'h': fputs(usage, stdout); return RT_EXIT_OK;
        default: return rt_bad_option("npc script", usage, argv, c);
        }
    }
    if (argc - optind != 1)
        return rt_usage_error("npc script", usage, argc - optind < 1 ? "no MANIFEST given" : "one MANIFEST only");
    dialect d;
    if (!dialect_text)
        return rt_usage_error("npc script", usage, "--dialect is required");
    if (strcmp(dialect_text, "samp") == 0)
        d = D_SAMP;
    else if (strcmp(dialect_text, "openmp") == 0)
        d = D_OPENMP;
    else if (strcmp(dialect_text, "fcnpc") == 0)
        d = D_FCNPC;
    else
        return rt_usage_error("npc script", usage, "--dialect: '%s' is not samp, openmp or fcnpc", dialect_text);
    if (name && (strlen(name) == 0 || strlen(name) > 24))
        return rt_usage_error("npc script", usage, "--name: 1 to 24 characters (SA-MP's name limit)");
    const char *manifest_path = argv[optind];
    recd_player_manifest m;
    char why[512];
    int rc = recd_player_manifest_load(manifest_path, &m, why, sizeof why);
    if (rc < 0) {
        rt_error("%s: %s", manifest_path, why);
        return rc == -EBADMSG ? RT_EXIT_INVALID : RT_EXIT_IO;
    }
    if (m.nparts == 0) {
        rt_error("%s: the manifest lists no part", manifest_path);
        recd_player_manifest_free(&m);
        return RT_EXIT_INVALID;
    }
    char root[RECD_PATH_MAX];
    find_root(manifest_path, &m, root, sizeof root);
    part_start *starts = calloc(m.nparts, sizeof *starts);
    int result = starts ? RT_EXIT_OK : RT_EXIT_IO;
    for (size_t i = 0; starts && i < m.nparts; i++) {
        if ((rc = read_start(root, &m.parts[i], &starts[i], why, sizeof why)) < 0) {
            rt_error("part %zu: %s", i + 1, why);
            result = rc == -EIO ? RT_EXIT_IO : RT_EXIT_INVALID;
            break;
        }
    }
    rt_output out;
    FILE *o = result == RT_EXIT_OK ? open_script(&out, out_path) : NULL;
    if (result == RT_EXIT_OK && !o)
        result = RT_EXIT_IO;
    if (o) {
        fprintf(o, "// Generated by rectool npc script (%s) from the samp-player session '%s':\n"
                   "// %zu parts played in order.\n",
                dialect_text, m.session, m.nparts);
        if (d == D_SAMP)
            script_samp(o, &m, starts);
        else
            script_server(o, d == D_OPENMP ? &openmp_api : &fcnpc_api, &m, starts,
                          name ? name : m.session);
        if (close_script(&out, o, out_path) < 0)
            result = RT_EXIT_IO;
    }
    free(starts);
    recd_player_manifest_free(&m);
    return result;
}

int rt_rec_npc(int argc, char **argv)
{
    if (argc < 2)
        return rt_usage_error("npc", npc_usage, "no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(npc_usage, stdout);
        return RT_EXIT_OK;
    }
    if (strcmp(argv[1], "script") == 0)
        return script(argc - 1, argv + 1);
    return rt_usage_error("npc", npc_usage, "unknown command '%s'", argv[1]);
}
