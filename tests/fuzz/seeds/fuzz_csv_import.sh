#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes seed inputs for fuzz_csv_import into $1: small hand-written CSV documents (on foot,
# vehicle, Recap with quoted JSON cells), plus exports of short generated recordings when
# $RECTOOL is available.
set -eu
dir=$1
mkdir -p "$dir"
{
    echo 't,left_right,up_down,keys,position_x,position_y,position_z,rotation_w,rotation_x,rotation_y,rotation_z,health,armour,weapon,additional_key,special_action,velocity_x,velocity_y,velocity_z,surf_offset_x,surf_offset_y,surf_offset_z,surf_id,anim_id,anim_frame_delta,anim_loop,anim_lock_x,anim_lock_y,anim_freeze,anim_time'
    echo '100,0,-128,8,1.5,2.0,-0.0,1.0,0.0,0.0,0.0,100,0,22,0,0,0.0,0.0,1e-45,0.0,0.0,0.0,0,1189,4,0,0,0,0,8'
    printf '%s\r\n' '"200",0,0,0,1.5,2.0,3.0,1.0,0.0,0.0,0.0,100,0,22,0,0,0.0,0.0,0.0,0.0,0.0,0.0,0,0,0,0,0,0,0,0'
} >"$dir/onfoot.csv"
{
    echo 't,vehicle_id,left_right,up_down,keys,rotation_w,rotation_x,rotation_y,rotation_z,position_x,position_y,position_z,velocity_x,velocity_y,velocity_z,vehicle_health,driver_health,driver_armour,weapon,additional_key,siren,landing_gear,trailer_id,hydra_thrust_0,hydra_thrust_1,train_speed'
    echo '31,1,0,0,0,0.7,0.0,0.0,-0.7,1697.0,-1953.6,14.8,0.0,0.0,0.0,1000.0,100,0,0,0,0,0,0,,,-0.17'
    echo '40,1,0,0,0,0.7,0.0,0.0,-0.7,1697.0,-1953.6,14.8,0.0,0.0,0.0,1000.0,100,0,0,0,0,0,0,5000,5000,'
} >"$dir/vehicle.csv"
{
    echo 'kind,tick,pos_x,pos_y,pos_z,yaw,pitch,head_yaw,vel_x,vel_y,vel_z,flags,pose,game_mode,hand_state,health,absorption,equipment,inventory,data'
    echo 'open,,,,,,,,,,,,,,,,,,,"{""format"":""recap"",""recap"":{""name"":""n""}}"'
    echo 'state,0,0.5,64.0,0.5,90.0,0.0,90.0,0.0,0.0,0.0,512,0,0,0,20.0,0.0,"[{""slot"":0,""key"":""minecraft:torch"",""count"":3}]",[],'
    echo 'event,0,,,,,,,,,,,,,,,,,,"{""action"":""CHAT_MESSAGE"",""message"":""a,\""b""}"'
    echo 'flush,,,,,,,,,,,,,,,,,,,"{""end_tick"":5}"'
    echo 'close,,,,,,,,,,,,,,,,,,,'
} >"$dir/recap.csv"
if [ -n "${RECTOOL:-}" ] && [ -x "$RECTOOL" ]; then
    tmp=$(mktemp -d)
    for f in samp-onfoot:walk samp-vehicle:drive recap:mixed; do
        fmt=${f%%:*} scen=${f##*:}
        if "$RECTOOL" generate --format "$fmt" --scenario "$scen" --duration 3s --seed 2 -o "$tmp/g.$fmt" >/dev/null 2>&1; then
            "$RECTOOL" export "$tmp/g.$fmt" --to csv -o "$dir/gen-$fmt.csv" >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$tmp"
fi
