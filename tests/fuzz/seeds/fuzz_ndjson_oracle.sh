#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes seed inputs for fuzz_ndjson_oracle into $1: one JSON line each, after a first byte that
# picks the session format (0 inferred, 1 samp-onfoot, 2 samp-vehicle, 3 recap, 4 carla).
set -eu
dir=$1
mkdir -p "$dir"
onfoot='{"type":"state","session":"s-1","seq":7,"t":100,"left_right":0,"up_down":-128,"keys":8,"position":[1.5,2.0,-0.0],"rotation":[1.0,0.0,0.0,0.0],"health":100,"armour":0,"weapon":22,"additional_key":0,"special_action":0,"velocity":[0.0,0.0,1e-45],"surf_offset":[0.0,0.0,0.0],"surf_id":0,"anim_id":1189,"anim_flags":{"frame_delta":4,"loop":false,"lock_x":false,"lock_y":false,"freeze":false,"time":8}}'
vehicle='{"type":"state","t":31,"vehicle_id":1,"left_right":0,"up_down":0,"keys":0,"rotation":[0.7,0.0,0.0,-0.7],"position":[1697.0,-1953.6,14.8],"velocity":[0.0,0.0,0.0],"vehicle_health":1000.0,"driver_health":100,"driver_armour":0,"weapon":0,"additional_key":0,"siren":0,"landing_gear":0,"trailer_id":0,"train_speed":-0.17}'
hydra='{"type":"state","t":31,"vehicle_id":1,"left_right":0,"up_down":0,"keys":0,"rotation":[1,0,0,0],"position":[1e2,-1953.625,14.8E+1],"velocity":[0,0,0],"vehicle_health":1000,"driver_health":100,"driver_armour":0,"weapon":0,"additional_key":0,"siren":0,"landing_gear":0,"trailer_id":0,"hydra_thrust":[5000,0]}'
printf '\000%s\n' "$onfoot" >"$dir/onfoot-inferred"
printf '\001%s' "$onfoot" >"$dir/onfoot"
printf '\000%s\r\n' "$vehicle" >"$dir/vehicle-inferred"
printf '\002%s' "$hydra" >"$dir/hydra"
printf '\000%s' '{"type":"open","session":"a","format":"samp-onfoot","auth":"tok"}' >"$dir/open"
printf '\003%s' '{"type":"state","tick":0,"pos":[0.5,64.0,0.5],"rot":[90.0,0.0,90.0],"vel":[0.0,0.0,0.0],"flags":512,"pose":0,"game_mode":0,"hand_state":0,"health":20.0,"absorption":0.0,"equipment":[],"inventory":[]}' >"$dir/recap"
printf '\001%s' '{"type":"close","end_time":99}' >"$dir/close"
printf '\003%s' '{"type":"state","session":"mc-1","seq":3,"tick":40,"pos":[-34.5,69.0,-1816.5],"rot":[-157.04122877703463,4.264603896466564,-0.0],"vel":[0.0,-0.0784000015258789,0],"flags":512,"pose":0,"game_mode":1,"hand_state":2,"health":20.0,"absorption":0,"equipment":[{"slot":0,"key":"minecraft:diamond_sword","count":1,"flags":1},{"slot":5,"key":"minecraft:iron_helmet","count":1,"data":"AAEC/w=="}],"inventory":[{"slot":40,"key":"minecraft:shield","count":1},{"slot":6,"key":"minecraft:cobblestone","count":64}]}' >"$dir/recap-items"
printf '\004%s' '{"type":"state","session":"c-1","seq":2,"frame":7,"elapsed":0.35,"duration":0.05,"visual_time":0.35,"doors":[],"positions":[{"id":27,"location":[20175.0,28116.873,2.0],"rotation":[0.0,-0.0,90.0]}],"traffic_lights":[{"id":2,"frozen":0,"elapsed":4.95,"state":2}],"vehicle_animations":[{"id":27,"steering":-0.25,"throttle":0.55,"brake":0.0,"handbrake":0,"gear":3}],"walker_animations":[{"id":62,"speed":141.43434}],"platform_time":0.35}' >"$dir/carla"
printf '\004%s' '{"type":"state","frame":1,"elapsed":0,"add":[{"id":27,"actor_type":1,"location":[20175.0,28116.873,2.0],"rotation":[0.0,0.0,90.0],"uid":28,"blueprint":"vehicle.lincoln.mkz_2020","attributes":[{"type":3,"id":"role_name","value":"hero"}]}]}' >"$dir/carla-add"
printf '\003%s' '{"type":"state","tick":0,"pos":[0.5,64.0,0.5],"rot":[90.0,0.0,90.0],"vel":[0.0,0.0,0.0],"flags":512,"pose":0,"game_mode":0,"hand_state":0,"health":20.0,"absorption":0.0,"equipment":[{"slot":0,"key":"a","count":1,"data":""}],"inventory":[]}' >"$dir/recap-empty-data"
