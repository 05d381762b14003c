#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes seed inputs for fuzz_jsonl_import into $1: small hand-written JSONL documents, plus
# exports of short generated recordings when $RECTOOL is available.
set -eu
dir=$1
mkdir -p "$dir"
state='{"type":"state","t":100,"left_right":0,"up_down":-128,"keys":8,"position":[1.5,2.0,-0.0],"rotation":[1.0,0.0,0.0,0.0],"health":100,"armour":0,"weapon":22,"additional_key":0,"special_action":0,"velocity":[0.0,0.0,1e-45],"surf_offset":[0.0,0.0,0.0],"surf_id":0,"anim_id":1189,"anim_flags":{"frame_delta":4,"loop":false,"lock_x":false,"lock_y":false,"freeze":false,"time":8}}'
printf '%s\n%s\n%s\n' '{"type":"open","session":"s-1","seq":1,"format":"samp-onfoot","auth":"tok"}' "$state" '{"type":"close"}' >"$dir/onfoot.jsonl"
printf '%s\n%s\n' '{"type":"open","format":"samp-vehicle"}' '{"type":"state","t":31,"vehicle_id":1,"left_right":0,"up_down":0,"keys":0,"rotation":[0.7,0.0,0.0,-0.7],"position":[1697.0,-1953.6,14.8],"velocity":[0.0,0.0,0.0],"vehicle_health":1000.0,"driver_health":100,"driver_armour":0,"weapon":0,"additional_key":0,"siren":0,"landing_gear":0,"trailer_id":0,"train_speed":-0.17}' >"$dir/vehicle.jsonl"
printf '%s\n%s\n%s\n%s\n%s\n' '{"type":"open","format":"recap","recap":{"name":"n","player":"p","encoder":{"keyframe_interval":20,"gzip_level":1,"member_limit":512}}}' \
    '{"type":"state","tick":0,"pos":[0.5,64.0,0.5],"rot":[90.0,0.0,90.0],"vel":[0.0,0.0,0.0],"flags":512,"pose":0,"game_mode":0,"hand_state":0,"health":20.0,"absorption":0.0,"equipment":[{"slot":0,"key":"minecraft:torch","count":3,"data":"AQID"}],"inventory":[]}' \
    '{"type":"event","tick":0,"action":"EXPLOSION","x":1.0,"y":2.0,"z":3.0,"power":4.0,"blocks":[{"x":1,"y":2,"z":3}]}' \
    '{"type":"flush","end_tick":30}' '{"type":"close","end_time":99}' >"$dir/recap.jsonl"
if [ -n "${RECTOOL:-}" ] && [ -x "$RECTOOL" ]; then
    tmp=$(mktemp -d)
    for f in samp-onfoot:walk samp-vehicle:drive recap:mixed; do
        fmt=${f%%:*} scen=${f##*:}
        if "$RECTOOL" generate --format "$fmt" --scenario "$scen" --duration 3s --seed 1 -o "$tmp/g.$fmt" >/dev/null 2>&1; then
            "$RECTOOL" export "$tmp/g.$fmt" --to jsonl -o "$dir/gen-$fmt.jsonl" >/dev/null 2>&1 || true
        fi
    done
    rm -rf "$tmp"
fi
