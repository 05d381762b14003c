# SPDX-License-Identifier: MIT
# The Python client against a real recd: every transport (TCP, UDP, Unix) in both encodings
# (binary frames, NDJSON) records samp-onfoot, samp-vehicle, recap, carla and samp-player
# sessions, the files recd writes export (rectool) to exactly the messages sent, and binary
# frames and NDJSON give byte-identical carla and samp-player files; plus the auth token, reconnect with
# resume, arrival-stamped binary states, samp-player sessions and instant-replay saves, and the
# encoder's refusals.
import json
import os
import socket
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
sys.path.insert(0, HERE)

import recd_client  # noqa: E402
from recd_client import Client, EncodeError, ServerError, encode_binary, encode_ndjson  # noqa: E402
from recd_harness import Recd, c_library_frames, carla_edge_messages  # noqa: E402

TOKEN = "0123456789abcdef-python-client"


def onfoot(i):
    return {"t": 100 + 50 * i, "left_right": -128 if i % 3 else 0, "up_down": 128, "keys": i % 7,
            "position": [1532.5 + i * 0.25, -1675.25, 13.546875], "rotation": [1.0, 0.0, 0.0, -0.5],
            "health": 100 - i % 50, "armour": 3, "weapon": 22 + i % 3, "additional_key": i % 4,
            "special_action": 0, "velocity": [0.125, -0.0, 0.0], "surf_offset": [0.0, 0.0, 0.0],
            "surf_id": 0, "anim_id": 1189, "anim_flags": {"frame_delta": 4, "loop": i % 2 == 0,
                                                          "lock_x": False, "lock_y": True,
                                                          "freeze": False, "time": 8}}


def vehicle(i):
    m = {"t": 31 + 40 * i, "vehicle_id": 7, "left_right": 0, "up_down": -3, "keys": 8,
         "rotation": [0.5, 0.0, 0.0, -0.75], "position": [1697.0, -1953.5 - i, 14.875],
         "velocity": [0.0625, 0.0, 0.0], "vehicle_health": 1000.0, "driver_health": 100,
         "driver_armour": 0, "weapon": 0, "additional_key": 0, "siren": i % 2,
         "landing_gear": 0, "trailer_id": 0}
    if i % 2:
        m["hydra_thrust"] = [5000, 4000 + i]
    else:
        m["train_speed"] = -0.171875
    return m


def recap_open():
    return {"recap": {"name": "client-test", "player": "Alex", "uuid": "069a79f4-44e9-4726-a5be-fca90e38aaf5",
                      "world": "world", "origin": [-134.5, 67.0, -1374.5], "weather": 1,
                      "time_of_day": 6000,
                      "encoder": {"keyframe_interval": 200, "gzip_level": 6, "member_limit": 65536}}}


def recap_state(tick):
    s = {"tick": tick, "pos": [-34.5 + tick * 0.25, 69.0, -1816.5], "rot": [-157.04122877703463, 4.25, 0.0],
         "vel": [0.0, -0.0784000015258789, 0.0], "flags": 512, "pose": 0, "game_mode": 0,
         "hand_state": 0, "health": 20.0, "absorption": 0.0,
         "equipment": [{"slot": 0, "key": "minecraft:diamond_sword", "count": 1, "flags": 1}],
         "inventory": [{"slot": 0, "key": "minecraft:diamond_sword", "count": 1, "flags": 1},
                       {"slot": 40, "key": "minecraft:written_book", "count": 1, "data": "CgAALA=="}]}
    return s


ITEM = {"key": "minecraft:torch", "count": 3, "flags": 1, "data": "AQID"}
AIR = {"key": ""}
# One event of every Recap action (recap.md section 6.4), so both clients' tag tables are checked
# field by field against recd's.
RECAP_EVENTS = [
    {"tick": 1, "action": "SWING_ARM", "hand": 1},
    {"tick": 1, "action": "USE_ITEM", "hand": 0},
    {"tick": 1, "action": "BLOCK_PLACE", "x": 1, "y": 64, "z": -3, "block": "minecraft:oak_stairs[facing=north]"},
    {"tick": 1, "action": "BLOCK_BREAK", "x": 1, "y": 64, "z": -3, "block": "minecraft:stone"},
    {"tick": 2, "action": "DAMAGE", "cause": 1, "amount": 2.5, "flags": 1, "attacker_id": -1},
    {"tick": 2, "action": "BLOCK_DAMAGE_ABORT", "x": 42, "y": 67, "z": -1863},
    {"tick": 2, "action": "SIGN_CHANGE", "x": 5, "y": 65, "z": 5, "side": 1, "line1": "a", "line2": "",
     "line3": "c, \"d\"", "line4": "\u00e9"},
    {"tick": 3, "action": "CHAT_MESSAGE", "message": "hello, world"},
    {"tick": 3, "action": "CONTAINER_OPEN", "x": 0, "y": 60, "z": 0, "container_type": "minecraft:chest", "open": 1},
    {"tick": 3, "action": "CONTAINER_UPDATE", "slot": 300, "item": ITEM},
    {"tick": 4, "action": "PROJECTILE", "entity_type": "minecraft:arrow", "x": 1.5, "y": 2.0, "z": 3.0,
     "vx": 0.25, "vy": -0.5, "vz": 1.0, "projectile_id": 77},
    {"tick": 4, "action": "DEATH", "message": ""},
    {"tick": 4, "action": "RIPTIDE", "level": 3},
    {"tick": 5, "action": "BLOCK_DAMAGE_START", "x": 42, "y": 67, "z": -1863, "stage": 0},
    {"tick": 5, "action": "EXPLOSION", "x": 40.5, "y": 66.0, "z": -1860.5, "power": 4.0,
     "blocks": [{"x": 40, "y": 66, "z": -1861}, {"x": 41, "y": 66, "z": -1861}]},
    {"tick": 5, "action": "BED_ENTER", "x": 1, "y": 2, "z": 3},
    {"tick": 5, "action": "BED_LEAVE", "x": 1, "y": 2, "z": 3},
    {"tick": 6, "action": "REDSTONE_INTERACTION", "x": 9, "y": 8, "z": 7, "block": "minecraft:lever[powered=true]"},
    {"tick": 6, "action": "CRITICAL_HIT", "target_id": 12},
    {"tick": 6, "action": "ENCHANT_CRIT", "target_id": 13},
    {"tick": 7, "action": "ENTITY_INTERACTION", "entity_id": 5, "entity_type": "minecraft:cow", "hand": 0, "item": AIR},
    {"tick": 7, "action": "VEHICLE_ENTER", "entity_id": 6, "entity_type": "minecraft:boat"},
    {"tick": 7, "action": "VEHICLE_LEAVE", "entity_id": 6, "entity_type": "minecraft:boat"},
    {"tick": 8, "action": "MOB_STATES", "mobs": [
        {"entity_id": 9, "entity_type": "minecraft:zombie", "x": 1.0, "y": 2.0, "z": 3.0, "yaw": 90.0,
         "pitch": 0.0, "head_yaw": 45.0, "health": 20.0, "flags": 1, "variant": -1, "main_hand": ITEM,
         "off_hand": AIR, "feet": AIR, "legs": AIR, "chest": AIR, "head": AIR}]},
    {"tick": 8, "action": "POTION_EFFECTS", "color": 123,
     "effects": [{"effect": "minecraft:speed", "amplifier": 1, "duration": 200, "flags": 6}]},
    {"tick": 8, "action": "TOTEM"},
    {"tick": 9, "action": "ARROWS_IN_BODY", "count": 2},
    {"tick": 9, "action": "PARTICLES", "particles": [
        {"particle": "minecraft:flame", "x": 0.5, "y": 1.5, "z": 2.5, "dx": 0.125, "dy": 0.0, "dz": 0.0,
         "speed": 0.5, "count": 4, "data": ""}]},
    {"tick": 9, "action": "SIGN_EXTRAS", "x": 5, "y": 65, "z": 5, "side": 0, "color": 14, "glowing": 1},
    {"tick": 10, "action": "ITEM_DROP", "item": ITEM, "x": 1.0, "y": 2.0, "z": 3.0, "vx": 0.0, "vy": 0.5, "vz": 0.0},
    {"tick": 10, "action": "CAPTURED_PACKETS", "packets": [{"type": "minecraft:brand", "data": "BXBhcGVy"}]},
    {"tick": 11, "action": "BLOCK_CHANGES", "changes": [{"x": 1, "y": 2, "z": 3, "block": "minecraft:air"}]},
    {"tick": 11, "action": "EXTENSION", "id": 7, "data": "AQID"},
]
RECAP_TICKS = 12


def carla_open():
    return {"start_time": 1763213398000,
            "carla": {"map": "Carla/Maps/Town10HD_Opt", "date": 1763213398, "width": "f32",
                      "ids": "0.9.16", "additional_data": True}}


def carla_state(i):
    """One CARLA frame holding every packet kind (docs/protocol.md section 2.8), with the
    non-finite numbers CARLA logs hold; values are exact in f32 so the export gives them back."""
    s = {"frame": 100 + i, "elapsed": 0.0625 * i,
         "positions": [{"id": 1, "location": [542.5 + i, 4236.75, 490.875], "rotation": [0.0, -0.5, -131.75]},
                       {"id": 2, "location": [1.0, 2.0, 3.0], "rotation": [0.0, 0.0, 90.0]}],
         "traffic_lights": [{"id": 7, "frozen": 0, "elapsed": 1.5 + i, "state": 2}],
         "vehicle_animations": [{"id": 2, "steering": -0.25, "throttle": 1.0, "brake": 0.0, "handbrake": 0,
                                 "gear": -1}],
         "walker_animations": [{"id": 3, "speed": 1.25}],
         "vehicle_lights": [{"id": 2, "state": 0x81}],
         "scene_lights": [{"id": -4, "intensity": 100.0, "r": 1.0, "g": 0.5, "b": 0.25, "a": 1.0, "on": 1,
                           "type": 2}],
         "kinematics": [{"id": 2, "linear_velocity": [0.5, -0.0, 0.0], "angular_velocity": [0.0, 0.0, 0.125]}],
         "bounding_boxes": [{"id": 9, "origin": ["nan", "-nan", 0.0],
                             "extent": ["inf", "-inf", 0.5]}],
         "platform_time": 12.5 + i,
         "traffic_light_times": [{"id": 7, "green_time": 10.0, "yellow_time": 3.0, "red_time": 2.0}],
         "trigger_volumes": [{"id": 7, "origin": [1.0, 2.0, 3.0], "extent": [0.5, 0.5, 2.0]}],
         "frame_counter": 5000 + i,
         "walker_bones": [{"id": 3, "bones": [{"name": "crl_root", "location": [0.0, 0.0, 1.0],
                                               "rotation": [0.0, 90.0, 0.0]}]}],
         "visual_time": 12.25 + i,
         "wheel_animations": [{"id": 2, "wheels": [{"location": 0, "steering_angle": 0.25, "tire_rotation": 90.0},
                                                   {"location": 1, "steering_angle": 0.0, "tire_rotation": 45.0}]}],
         "biker_animations": [{"id": 5, "forward_speed": 2.5, "engine_rotation": 0.0}],
         "doors": [{"id": 2, "doors": 3, "open": 1}],
         "weather": [{"cloudiness": 10.0, "precipitation": 0.0, "precipitation_deposits": 0.0,
                      "wind_intensity": 0.5, "sun_azimuth_angle": 45.0, "sun_altitude_angle": 30.0,
                      "fog_density": 0.0, "fog_distance": 0.0, "fog_falloff": 0.25, "wetness": 0.0,
                      "scattering_intensity": 1.0, "mie_scattering_scale": 0.03125,
                      "rayleigh_scattering_scale": 0.0331, "dust_storm": 0.0}]}
    if i == 0:
        s["physics_controls"] = [{
            "id": 2, "max_rpm": 5000.0, "moi": 1.0, "damping_rate_full_throttle": 0.25,
            "damping_rate_zero_throttle_clutch_engaged": 2.0, "damping_rate_zero_throttle_clutch_disengaged": 0.5,
            "use_gear_autobox": 1, "clutch_strength": 10.0, "final_ratio": 4.0, "mass": 1500.0,
            "drag_coefficient": 0.25, "center_of_mass_x": 0.0, "center_of_mass_y": 0.0, "center_of_mass_z": -0.5,
            "torque_curve": [{"x": 0.0, "y": 400.0}, {"x": 5000.0, "y": 500.0}],
            "forward_gears": [{"ratio": 3.5, "down_ratio": 0.5, "up_ratio": 0.75}],
            "steering_curve": [{"x": 0.0, "y": 1.0}],
            "wheels": [{"tire_friction": 3.5, "damping_rate": 0.25, "max_steer_angle": 70.0, "radius": 30.0,
                        "max_brake_torque": 1500.0, "max_handbrake_torque": 3000.0,
                        "lat_stiff_max_load": 2.0, "lat_stiff_value": 17.0, "long_stiff_value": 1000.0,
                        "position_x": 1.0, "position_y": -1.0, "position_z": 0.0}]}]
    if i == 2:
        s["duration"] = 0.03125  # not the step to the next frame, so the file keeps it
        s["raw"] = [{"id": 200, "data": "AQID"}]
    return s


CARLA_FRAMES = 6
# Every CARLA event kind, by the frame it belongs to.
CARLA_EVENTS = [
    (0, {"kind": "add", "id": 2, "actor_type": 1, "location": [1.0, 2.0, 3.0], "rotation": [0.0, 0.0, 90.0],
         "uid": 17, "blueprint": "vehicle.lincoln.mkz_2020",
         "attributes": [{"type": 3, "id": "role_name", "value": "hero"}, {"type": 5, "id": "color", "value": "0,0,0"}]}),
    (0, {"kind": "add", "id": 3, "actor_type": 2, "location": [5.0, 6.0, 1.0], "rotation": [0.0, 0.0, 0.0],
         "uid": 18, "blueprint": "walker.pedestrian.0001", "attributes": []}),
    (1, {"kind": "parent", "id": 9, "parent": 2}),
    (3, {"kind": "collision", "id": 1, "actor1": 2, "actor2": 3, "hero1": 1, "hero2": 0}),
    (5, {"kind": "delete", "id": 3}),
]


def player_state(i):
    """samp-player: on foot for 10 states, then driving: model 411 in seat 0, then 522 in seat 1
    (a new part), its last states without model and seat (the part goes on)."""
    if i < 10:
        return onfoot(i)
    st = dict(vehicle(i - 10), t=600 + 40 * (i - 10))
    if i < 15:
        st.update(vehicle_model=411, seat=0)
    elif i < 18:
        st.update(vehicle_model=522, seat=1)
    return st


PLAYER_STATES = 20


def subset(got, sent):
    """The keys we sent, as recd exported them (item flags and data default when absent)."""
    out = {}
    for k in sent:
        out[k] = got.get(k)
    return out


class RecordsAllFormats:
    """Sends every format's sessions through a client and checks the files recd wrote; shared
    with test_java_client.py, whose client is the Java one behind an adapter."""

    def send_all_formats(self, client, prefix):
        ses = {f: f"{prefix}-{f}" for f in ("samp-onfoot", "samp-vehicle", "recap", "carla", "samp-player")}
        client.open(ses["samp-onfoot"], "samp-onfoot", start_time=1763213398000)
        client.open(ses["samp-vehicle"], "samp-vehicle")
        client.open(ses["recap"], "recap", **recap_open())
        client.open(ses["carla"], "carla", **carla_open())
        client.open(ses["samp-player"], "samp-player", start_time=1763213398000)
        for i in range(40):
            client.state(ses["samp-onfoot"], **onfoot(i))
            client.state(ses["samp-vehicle"], **vehicle(i))
            if i < CARLA_FRAMES:
                client.state(ses["carla"], **carla_state(i))
                for frame, ev in CARLA_EVENTS:
                    if frame == i:
                        client.event(ses["carla"], **ev)
            if i < PLAYER_STATES:
                client.state(ses["samp-player"], **player_state(i))
            if i % 10 == 9:
                client.flush()  # a server tick
                if prefix.startswith(("udp", "java-udp")):
                    time.sleep(0.01)  # UDP has no backpressure: keep bursts small on a busy box
        for tick in range(RECAP_TICKS):
            client.state(ses["recap"], **recap_state(tick))
            for ev in RECAP_EVENTS:
                if ev["tick"] == tick:
                    client.event(ses["recap"], **ev)
            if tick == 6:
                client.end_member(ses["recap"])
        for s in ses.values():
            client.close_session(s)
        return ses

    def reconnect_after_restart(self, key, connect, sync, finish):
        """A daemon restart: the connection dies, the reconnect waits until recd listens again,
        and the resume opens the session anew (its first file was finalized at the stop).
        connect(recd) gives a sender, sync(sender) pushes what was sent, finish(sender) ends it
        and returns its count of reconnects."""
        r = Recd(token=TOKEN, extra_yaml="shutdown:\n  drain_timeout: 2s\n")
        try:
            c = connect(r)
            c.open(key, "samp-onfoot")
            for i in range(10):
                c.state(key, **onfoot(i))
            sync(c)
            r.restart()
            # The first write after the restart may still land in the dead socket's buffer and be
            # lost without an error (TCP cannot tell); a later one fails and reconnects.
            for batch in range(1, 4):
                for i in range(10 * batch, 10 * batch + 10):
                    c.state(key, **onfoot(i))
                sync(c)
                time.sleep(0.05)
            c.close_session(key)
            self.assertEqual(finish(c), 1)
            self.assertTrue(r.wait_for_files([("samp-onfoot", key)]), r.log_text())
            r.stop()
            files = r.files("samp-onfoot", key)
            self.assertEqual(len(files), 2, files)
            before = [m["t"] for m in r.export(files[0]) if m["type"] == "state"]
            after = [m["t"] for m in r.export(files[1]) if m["type"] == "state"]
            self.assertEqual(before, [onfoot(i)["t"] for i in range(10)])
            self.assertEqual(after[-10:], [onfoot(i)["t"] for i in range(30, 40)])
        finally:
            r.cleanup()

    def recorded(self, fmt, session):
        """The recording files of a session in order: samp-player's parts as its manifest lists
        them once the session ended (the manifest itself holds arrival times: left out)."""
        if fmt != "samp-player":
            return self.recd.files(fmt, session)

        def ended():
            man = [f for f in self.recd.files(fmt, session) if f.endswith(".json")]
            try:
                with open(man[0]) as f:
                    doc = json.load(f)
            except (IndexError, OSError, ValueError):
                return None
            return doc if doc.get("complete") else None

        doc = self.recd.wait_until(ended)
        self.assertTrue(doc, self.recd.log_text())
        return [os.path.join(self.recd.root, p["path"]) for p in doc["parts"]]

    def check_carla(self, msgs):
        states = [m for m in msgs if m["type"] == "state"]
        self.assertEqual(len(states), CARLA_FRAMES)
        for i, st in enumerate(states):
            sent = carla_state(i)
            self.assertEqual(subset(st, sent), sent, f"carla frame {i}")
        events = [m for m in msgs if m["type"] == "event"]
        self.assertEqual([subset(got, sent) for got, (_, sent) in zip(events, CARLA_EVENTS)],
                         [sent for _, sent in CARLA_EVENTS])
        self.assertEqual(msgs[0]["carla"], carla_open()["carla"])

    def check_player(self, session):
        parts = self.recorded("samp-player", session)
        self.assertEqual(len(parts), 3, parts)  # on foot, model 411 seat 0, model 522 seat 1
        states = [m for p in parts for m in self.recd.export(p) if m["type"] == "state"]
        self.assertEqual(len(states), PLAYER_STATES)
        for i, st in enumerate(states):
            sent = {k: v for k, v in player_state(i).items() if k not in ("t", "vehicle_model", "seat")}
            self.assertEqual(subset(st, sent), sent, f"samp-player state {i}")

    def assert_same_recordings(self, ses_a, ses_b, formats=("carla", "samp-player")):
        """The files of two sends of the same messages are byte-identical, for each of formats
        (by default those where binary frames and NDJSON give the same recording)."""
        for fmt in formats:
            a, b = self.recorded(fmt, ses_a[fmt]), self.recorded(fmt, ses_b[fmt])
            self.assertEqual(len(a), len(b), (a, b))
            for fa, fb in zip(a, b):
                with open(fa, "rb") as x, open(fb, "rb") as y:
                    self.assertTrue(x.read() == y.read(), f"{fa} and {fb} differ")

    def check_files(self, ses):
        want = [(f, s) for f, s in ses.items()]
        self.assertTrue(self.recd.wait_for_files(want), "recd did not finalize " + repr(want) +
                        "\n" + self.recd.log_text())
        for fmt, s in ses.items():
            if fmt == "samp-player":
                self.check_player(s)
                continue
            files = self.recd.files(fmt, s)
            self.assertEqual(len(files), 1, files)
            self.assertFalse(os.path.basename(files[0]).startswith("1970"), files[0])  # start_time set
            msgs = self.recd.export(files[0])
            self.assertEqual(msgs[0]["type"], "open")
            self.assertEqual(msgs[0]["format"], fmt)
            states = [m for m in msgs if m["type"] == "state"]
            if fmt == "recap":
                self.assertEqual(len(states), RECAP_TICKS)
                for tick, st in enumerate(states):
                    sent = recap_state(tick)
                    got = subset(st, sent)
                    for it in got["equipment"] + got["inventory"]:
                        it.setdefault("flags", 0)
                    for it in sent["equipment"] + sent["inventory"]:
                        it.setdefault("flags", 0)
                    self.assertEqual(got, sent)
                events = [m for m in msgs if m["type"] == "event"]
                self.assertEqual(len(events), len(RECAP_EVENTS))
                for got, sent in zip(events, RECAP_EVENTS):
                    self.assertEqual(subset(got, sent), sent)
                hdr = msgs[0]["recap"]
                self.assertEqual((hdr["name"], hdr["player"], hdr["weather"]), ("client-test", "Alex", 1))
                self.assertGreaterEqual(sum(m["type"] == "flush" for m in msgs), 1)
            elif fmt == "carla":
                self.check_carla(msgs)
            else:
                gen = onfoot if fmt == "samp-onfoot" else vehicle
                self.assertEqual(len(states), 40)
                for i, st in enumerate(states):
                    sent = gen(i)
                    self.assertEqual(subset(st, sent), sent, f"{fmt} state {i}")


class PythonClientAgainstRecd(RecordsAllFormats, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.recd = Recd(token=TOKEN)

    @classmethod
    def tearDownClass(cls):
        cls.recd.cleanup()

    def run_transport(self, transport, encoding):
        with Client(self.recd.url(transport, encoding), auth=TOKEN) as c:
            ses = self.send_all_formats(c, f"{transport}-{encoding}")
        self.assertEqual(c.messages_lost, 0)
        self.check_files(ses)

    def test_tcp_binary(self):
        self.run_transport("tcp", "binary")

    def test_tcp_ndjson(self):
        self.run_transport("tcp", "ndjson")

    def test_unix_binary(self):
        self.run_transport("unix", "binary")

    def test_unix_ndjson(self):
        self.run_transport("unix", "ndjson")

    def test_udp_binary(self):
        self.run_transport("udp", "binary")

    def test_udp_ndjson(self):
        self.run_transport("udp", "ndjson")

    def test_binary_and_ndjson_record_the_same(self):
        ses = {}
        for encoding in ("binary", "ndjson"):
            with Client(self.recd.url("unix", encoding), auth=TOKEN) as c:
                ses[encoding] = self.send_all_formats(c, f"same-{encoding}")
            self.check_files(ses[encoding])
        self.assert_same_recordings(ses["binary"], ses["ndjson"])

    def test_small_batches(self):
        # Many small batches and datagrams: every batch must stand alone (no key_len 0 across).
        with Client(self.recd.url("tcp", "binary"), auth=TOKEN, batch_bytes=100) as c:
            ses = self.send_all_formats(c, "tcp-small")
        self.check_files(ses)
        with Client(self.recd.url("udp", "binary"), auth=TOKEN, datagram_bytes=200) as c:
            ses = self.send_all_formats(c, "udp-small")
        self.check_files(ses)

    def test_without_token_refused(self):
        c = Client(self.recd.url("tcp", "ndjson"))
        c.open("no-token", "samp-onfoot")
        with self.assertRaises(ServerError) as cm:
            c.close()
        self.assertIn("auth", str(cm.exception).lower())

    def test_reconnect_resumes_session(self):
        for transport in ("tcp", "unix"):
            for encoding in ("binary", "ndjson"):
                key = f"reconnect-{transport}-{encoding}"
                with Client(self.recd.url(transport, encoding), auth=TOKEN) as c:
                    c.open(key, "samp-onfoot")
                    for i in range(10):
                        c.state(key, **onfoot(i))
                    c.flush()
                    c._sock.shutdown(socket.SHUT_RDWR)  # the connection breaks
                    for i in range(10, 20):
                        c.state(key, **onfoot(i))
                    c.flush()  # fails, reconnects, resumes, sends the batch again
                    for i in range(20, 30):
                        c.state(key, **onfoot(i))
                    c.close_session(key)
                self.assertEqual(c.reconnects, 1)
                self.assertEqual(c.messages_lost, 0)
                self.assertTrue(self.recd.wait_for_files([("samp-onfoot", key)]), self.recd.log_text())
                files = self.recd.files("samp-onfoot", key)
                self.assertEqual(len(files), 1, files)
                states = [m for m in self.recd.export(files[0]) if m["type"] == "state"]
                self.assertEqual([s["t"] for s in states], [onfoot(i)["t"] for i in range(30)])

    def test_reconnect_after_recd_restarts(self):
        def finish(c):
            c.close()
            return c.reconnects

        self.reconnect_after_restart(
            "restart", lambda r: Client(r.url("tcp", "binary"), auth=TOKEN, reconnect_attempts=12),
            lambda c: c.flush(), finish)

    def test_auto_seq_over_udp(self):
        with Client(self.recd.url("udp", "binary"), auth=TOKEN, auto_seq=True) as c:
            ses = self.send_all_formats(c, "udp-seq")
        self.check_files(ses)

    def test_untimed_binary_states_are_stamped(self):
        key = "untimed"
        with Client(self.recd.url("tcp", "binary"), auth=TOKEN) as c:
            c.open(key, "samp-vehicle")
            for i in range(5):
                st = vehicle(i)
                del st["t"]
                c.state(key, **st)
            c.close_session(key)
        self.assertTrue(self.recd.wait_for_files([("samp-vehicle", key)]), self.recd.log_text())
        states = [m for m in self.recd.export(self.recd.files("samp-vehicle", key)[0])
                  if m["type"] == "state"]
        self.assertEqual(len(states), 5)
        self.assertEqual(sorted(s["t"] for s in states), [s["t"] for s in states])


class PlayerAndRing(unittest.TestCase):
    """samp-player sessions and instant replay through the client, binary frames and NDJSON."""

    @classmethod
    def setUpClass(cls):
        cls.recd = Recd()

    @classmethod
    def tearDownClass(cls):
        cls.recd.cleanup()

    def run_encoding(self, encoding):
        player, ring = f"py-player-{encoding}", f"py-ring-{encoding}"
        with Client(self.recd.url("tcp", encoding)) as c:
            c.open(player, "samp-player")
            for i in range(10):  # t 100..550 on foot, then driving from 600
                c.state(player, **onfoot(i))
            for i in range(10):
                c.state(player, **dict(vehicle(i), t=600 + 40 * i, vehicle_model=411, seat=0))
            c.close_session(player)
            c.open(ring, "samp-onfoot", ring=True)
            for i in range(40):  # t 100 .. 2050
                c.state(ring, **onfoot(i))
            c.save(ring, 500, "clip")
            c.close_session(ring)
        self.assertTrue(self.recd.wait_for_files([("samp-player", player), ("samp-onfoot", ring)]))

        def ended_manifest():
            # The manifest is stored by its own job, again at each part's start and end: wait for
            # the version that says the session ended.
            manifest = [f for f in self.recd.files("samp-player", player) if f.endswith(".json")]
            if len(manifest) != 1:
                return None
            try:
                with open(manifest[0]) as f:
                    doc = json.load(f)
            except (OSError, ValueError):
                return None
            return doc if doc.get("complete") else None

        doc = self.recd.wait_until(ended_manifest)
        files = self.recd.files("samp-player", player)
        self.assertEqual(len([f for f in files if f.endswith(".json")]), 1, files)
        parts = doc["parts"] if doc else []
        self.assertEqual([(p["type"], p["start_ms"]) for p in parts], [("onfoot", 100), ("vehicle", 600)])
        self.assertEqual((parts[1]["vehicle_model"], parts[1]["seat"]), (411, 0))
        clips = self.recd.files("samp-onfoot", ring)
        self.assertEqual([os.path.basename(f) for f in clips], ["clip.rec"])
        self.assertEqual(os.path.getsize(clips[0]), 8 + 11 * 72)  # t 1550 .. 2050 every 50 ms

    def test_binary(self):
        self.run_encoding("binary")

    def test_ndjson(self):
        self.run_encoding("ndjson")

    def test_refusals(self):
        with self.assertRaisesRegex(EncodeError, "save.last_ms"):
            encode_binary({"type": "save", "session": "p", "last_ms": 0, "label": "x"}, None, False)
        with self.assertRaisesRegex(EncodeError, "save.label"):
            encode_binary({"type": "save", "session": "p", "last_ms": 5, "label": ".x"}, None, False)
        with self.assertRaisesRegex(EncodeError, "vehicle_model"):
            encode_binary(dict(vehicle(0), type="state", session="p", vehicle_model=99), "samp-player", False)


class Encoding(unittest.TestCase):
    def test_carla_edge_frames_equal_the_c_librarys(self):
        # NaN payloads as bits (signalling ones too), -0.0, subnormals, f32's largest: each frame
        # byte for byte against the one the C library's client sends for the same JSON line.
        key = "py-frames-carla-edges"
        msgs = carla_edge_messages(key)
        with tempfile.TemporaryDirectory(prefix="recd_py_frames.") as tmp:
            path = os.path.join(tmp, key + ".jsonl")
            with open(path, "w") as f:
                f.writelines(json.dumps(m) + "\n" for m in msgs)
            c_frames = c_library_frames(path, key)
        self.assertEqual(len(c_frames), len(msgs))
        for i, (m, c) in enumerate(zip(msgs, c_frames)):
            self.assertEqual(encode_binary(m, "carla", False).hex(), c, f"message {i}: {json.dumps(m)[:200]}")

    def test_carla_nan_strings_are_checked(self):
        state = {"type": "state", "session": "c", "frame": 0, "elapsed": 0,
                 "walker_animations": [{"id": 1, "speed": "nan:0x3f800000"}]}
        with self.assertRaisesRegex(EncodeError, "not a NaN"):
            encode_binary(state, "carla", False)
        state["walker_animations"][0]["speed"] = "nan:0x7fc0"
        with self.assertRaisesRegex(EncodeError, "8 or 16"):
            encode_binary(state, "carla", False)

    def test_wire_md_example(self):
        m = {"type": "close", "session": "ab", "seq": 0x0102030405060708, "end_time": -2}
        self.assertEqual(encode_binary(m, None, False).hex(),
                         "d701050113000000026162" "0807060504030201" "feffffffffffffff")

    def test_onfoot_frame_size(self):
        m = dict(onfoot(0), type="state", session="p")
        self.assertEqual(len(encode_binary(m, "samp-onfoot", True)), 85)  # docs/wire.md 2.4

    def test_refusals_name_the_field(self):
        bad = dict(onfoot(0), type="state", session="p", health=300)
        with self.assertRaisesRegex(EncodeError, r"state\.health: 300 does not fit u8"):
            encode_binary(bad, "samp-onfoot", False)
        with self.assertRaisesRegex(EncodeError, "NaN"):
            encode_ndjson(dict(onfoot(0), type="state", session="p", velocity=[float("nan"), 0, 0]), False)
        with self.assertRaisesRegex(EncodeError, "valid session key"):
            encode_ndjson({"type": "close", "session": "../x"}, False)
        with self.assertRaisesRegex(EncodeError, "no binary encoding"):
            encode_binary({"type": "open", "session": "c", "format": "not-yet"}, "not-yet", False)

    def test_auto_seq_numbers_each_session(self):
        rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rx.bind(("127.0.0.1", 0))
        rx.settimeout(10)
        with Client(f"udp://127.0.0.1:{rx.getsockname()[1]}?encoding=ndjson", auto_seq=True,
                    datagram_bytes=65000) as c:
            c.open("a", "samp-onfoot")
            c.open("b", "samp-onfoot")
            for i in range(3):
                c.state("a", **onfoot(i))
            c.state("b", **onfoot(0))
            c.close_session("a")
        import json
        lines = [json.loads(x) for x in rx.recv(65536).splitlines()]
        rx.close()
        self.assertEqual([(m["session"], m["seq"]) for m in lines],
                         [("a", 0), ("b", 0), ("a", 1), ("a", 2), ("a", 3), ("b", 1), ("a", 4)])

    def test_urls(self):
        from recd_client import parse_url
        u = parse_url("tcp://[::1]:7070?encoding=ndjson")
        self.assertEqual((u.transport, u.host, u.port, u.encoding), ("tcp", "::1", 7070, "ndjson"))
        self.assertEqual(parse_url("unix:///run/recd.sock").path, "/run/recd.sock")
        self.assertEqual(parse_url("udp://127.0.0.1:1?encoding=auto").encoding, "binary")
        for bad, why in (("http://x:1", "scheme"), ("tcp://x", "PORT"), ("tcp://x:0", "PORT"),
                         ("tcp://x:70000", "port"), ("tcp://x:1?speed=2", "unknown query key"),
                         ("tcp://x:1?encoding=xml", "encoding")):
            with self.assertRaisesRegex(ValueError, why):
                parse_url(bad)

    def test_ndjson_passes_any_format_through(self):
        line = encode_ndjson({"type": "state", "session": "w", "t": 5, "actors": [{"id": 1}]}, True)
        self.assertEqual(line, b'{"type":"state","t":5,"actors":[{"id":1}]}\n')

    def test_format_table_has_every_format(self):
        self.assertEqual({"samp-onfoot", "samp-vehicle", "recap", "samp-player", "carla"},
                         set(recd_client.FORMATS))


if __name__ == "__main__":
    unittest.main(verbosity=2)
