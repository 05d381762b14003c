# SPDX-License-Identifier: MIT
# The CARLA recording example (clients/python/examples/carla_record.py) driven by a stand-in
# world, since the carla package is not available here: actors spawn, get attached, collide and
# go away over a few ticks. The NDJSON the example sends (captured by a local socket) holds the
# open, one state per snapshot and the actor events of docs/protocol.md section 2.8; and a real
# recd records it into a CARLA .log that rectool verifies and exports back to the same frames
# and events.
import json
import os
import socket
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python", "examples"))

import carla_record  # noqa: E402


class V:
    def __init__(self, x=0.0, y=0.0, z=0.0):
        self.x, self.y, self.z = x, y, z


class Rot:
    def __init__(self, pitch=0.0, yaw=0.0, roll=0.0):
        self.pitch, self.yaw, self.roll = pitch, yaw, roll


class Transform:
    def __init__(self, location=None, rotation=None):
        self.location, self.rotation = location or V(), rotation or Rot()


class Box:
    def __init__(self, location, extent):
        self.location, self.extent = location, extent


class Control:
    steer, throttle, brake, hand_brake, gear = -0.25, 0.5, 0.0, False, 2


class Actor:
    def __init__(self, world, actor_id, type_id, attributes=None, parent=None):
        self.world, self.id, self.type_id = world, actor_id, type_id
        self.attributes = attributes or {}
        self.parent = parent
        self.bounding_box = Box(V(0, 0, 0.75), V(2.25, 1.0, 0.75))
        self.listener = None

    def get_transform(self):
        return Transform(V(10.0 * self.id + self.world.frame, 5.0, 0.5), Rot(0.0, 90.0, 0.0))

    def get_velocity(self):
        return V(1.5, 0.0, 0.0)

    def get_angular_velocity(self):
        return V(0.0, 0.0, 0.25)

    def get_control(self):
        return Control()

    def get_light_state(self):
        return 0x3

    def is_frozen(self):
        return False

    def get_elapsed_time(self):
        return 1.5

    def get_state(self):
        return 2

    def listen(self, callback):
        self.listener = callback

    def stop(self):
        self.listener = None

    def destroy(self):
        self.world.actors.pop(self.id, None)


class ActorList(list):
    def filter(self, pattern):
        prefix = pattern.rstrip("*")
        return ActorList(a for a in self if a.type_id.startswith(prefix))


class Timestamp:
    def __init__(self, elapsed):
        self.elapsed_seconds = elapsed


class Snapshot:
    def __init__(self, world):
        self.frame = world.frame
        self.timestamp = Timestamp(world.frame * 0.05)
        self._actors = list(world.actors.values())

    def __iter__(self):
        return iter(self._actors)


class World:
    """Tick 1: a walker appears; tick 2: a camera is attached to the hero and the hero hits the
    walker; tick 3: the walker is gone."""

    def __init__(self):
        self.frame = 0
        self.actors = {}
        self.next_id = 1
        self.spawn("vehicle.tesla.model3", {"role_name": "hero", "color": "255,0,0"})
        self.spawn("traffic.traffic_light")

    def spawn(self, type_id, attributes=None, parent=None):
        a = Actor(self, self.next_id, type_id, attributes, parent)
        self.actors[a.id] = a
        self.next_id += 1
        return a

    def get_map(self):
        return type("Map", (), {"name": "Carla/Maps/Town10HD_Opt"})()

    def get_actors(self):
        return ActorList(self.actors.values())

    def get_blueprint_library(self):
        return type("Lib", (), {"find": lambda _self, name: name})()

    def spawn_actor(self, bp, transform, attach_to=None):
        return self.spawn(bp, {}, attach_to)

    def wait_for_tick(self, timeout):
        self.frame += 1
        if self.frame == 1:
            self.spawn("walker.pedestrian.0001")
        walker = next((a for a in self.actors.values() if a.type_id.startswith("walker.")), None)
        if self.frame == 2:
            hero = self.actors[1]
            self.spawn("sensor.camera.rgb", {}, hero)
            for s in list(self.actors.values()):
                if s.listener:
                    s.listener(type("Ev", (), {"actor": hero, "other_actor": walker})())
                    s.listener(type("Ev", (), {"actor": hero, "other_actor": walker})())
        if self.frame == 3:
            del self.actors[walker.id]
        return Snapshot(self)


class FakeCarla:
    """The parts of the carla module the example uses."""

    Transform = Transform

    def __init__(self):
        self.world = World()
        outer = self

        class Client:
            def __init__(self, host, port):
                self.addr = (host, port)

            def set_timeout(self, s):
                pass

            def get_world(self):
                return outer.world

        self.Client = Client


class Capture:
    """A local TCP server that keeps what one client sends, then closes (no error reply)."""

    def __init__(self):
        self.srv = socket.create_server(("127.0.0.1", 0))
        self.port = self.srv.getsockname()[1]
        self.data = b""
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        conn, _ = self.srv.accept()
        with conn:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                self.data += chunk

    def messages(self):
        self.thread.join(30)
        self.srv.close()
        return [json.loads(line) for line in self.data.decode().splitlines() if line.strip()]


def run_example(url, session, auth="0123456789abcdef-token"):
    fake = FakeCarla()
    rc = carla_record.main(["--carla", "sim:2000", "--to", url, "--session", session, "--frames", "4",
                            "--collision-sensors", "--auth", auth], carla_module=fake)
    return rc


# Frame by frame: 1 hero, 2 traffic light, 3 collision sensor (spawned at start), 4 walker
# (tick 1), 5 camera on the hero (tick 2, when the hero hits the walker), the walker gone (tick 3).
EXPECTED_EVENTS = [
    (1, "add", 1), (1, "add", 2), (1, "add", 3), (1, "add", 4), (1, "parent", 3),
    (2, "add", 5), (2, "parent", 5), (2, "collision", 1),
    (3, "delete", 4)]


def events_by_frame(msgs):
    out, frame = [], None
    for m in msgs:
        if m["type"] == "state":
            frame = m["frame"]
        elif m["type"] == "event":
            out.append((frame, m["kind"], m["id"]))
    return out


class CarlaExample(unittest.TestCase):
    def test_records_a_stand_in_world(self):
        cap = Capture()
        self.assertEqual(run_example(f"tcp://127.0.0.1:{cap.port}?encoding=ndjson", "town10-run1"), 0)
        msgs = cap.messages()
        self.assertEqual(msgs[0], {"type": "open", "session": "town10-run1", "format": "carla",
                                   "start_time": msgs[0]["start_time"],
                                   "carla": {"map": "Carla/Maps/Town10HD_Opt",
                                             "date": msgs[0]["start_time"] // 1000,
                                             "width": "f32", "ids": "0.9.16", "additional_data": True},
                                   "auth": "0123456789abcdef-token"})
        self.assertEqual(msgs[-1]["type"], "close")
        states = [m for m in msgs if m["type"] == "state"]
        self.assertEqual([s["frame"] for s in states], [1, 2, 3, 4])
        self.assertEqual([round(s["elapsed"], 6) for s in states], [0.0, 0.05, 0.1, 0.15])
        self.assertEqual(events_by_frame(msgs), EXPECTED_EVENTS)
        add = next(m for m in msgs if m.get("kind") == "add")
        self.assertEqual((add["blueprint"], add["actor_type"], add["location"]),
                         ("vehicle.tesla.model3", 1, [1100.0, 500.0, 50.0]))  # centimetres
        self.assertIn({"type": 3, "id": "role_name", "value": "hero"}, add["attributes"])
        hit = next(m for m in msgs if m.get("kind") == "collision")
        self.assertEqual((hit["actor1"], hit["actor2"], hit["hero1"], hit["hero2"]), (1, 4, 1, 0))
        first = states[0]
        self.assertEqual([p["id"] for p in first["positions"]], [1, 2, 4])  # sensors have no position
        self.assertEqual(first["vehicle_animations"], [{"id": 1, "steering": -0.25, "throttle": 0.5,
                                                        "brake": 0.0, "handbrake": 0, "gear": 2}])
        self.assertEqual(first["traffic_lights"][0]["state"], 2)
        self.assertEqual(first["walker_animations"], [{"id": 4, "speed": 150.0}])  # cm/s
        self.assertNotIn(4, [p["id"] for p in states[2]["positions"]])

    def test_recd_records_the_example(self):
        if not os.environ.get("RECD") or not os.environ.get("RECTOOL"):
            self.skipTest("RECD and RECTOOL are not set (the daemon is not built)")
        sys.path.insert(0, HERE)
        from recd_harness import Recd
        r = Recd(token="0123456789abcdef-token")
        try:
            for transport in ("tcp", "unix"):
                session = f"carla-{transport}"
                self.assertEqual(run_example(r.url(transport, "ndjson"), session), 0)
                self.assertTrue(r.wait_for_files([("carla", session)]), r.log_text())
                files = r.files("carla", session)
                self.assertEqual(len(files), 1, files)
                self.assertTrue(files[0].endswith(".log"), files)
                msgs = r.export(files[0])  # rectool verify, then export
                self.assertEqual(msgs[0]["carla"]["map"], "Carla/Maps/Town10HD_Opt")
                self.assertEqual([m["frame"] for m in msgs if m["type"] == "state"], [1, 2, 3, 4])
                self.assertEqual(events_by_frame(msgs), EXPECTED_EVENTS)
        finally:
            r.cleanup()

    def test_binary_frames_record_the_same_log(self):
        # The example's messages, replayed through the client in binary frames and in NDJSON:
        # both logs export to the same messages.
        if not os.environ.get("RECD") or not os.environ.get("RECTOOL"):
            self.skipTest("RECD and RECTOOL are not set (the daemon is not built)")
        cap = Capture()
        self.assertEqual(run_example(f"tcp://127.0.0.1:{cap.port}?encoding=ndjson", "x"), 0)
        sent = cap.messages()
        sent[1]["bounding_boxes"].append({"id": 9, "origin": ["nan", 0.0, "-inf"], "extent": [1.0, "inf", 2.5]})
        sent[1]["weather"] = [{k: 0.5 for k in ("cloudiness", "precipitation", "precipitation_deposits",
                                                "wind_intensity", "sun_azimuth_angle", "sun_altitude_angle",
                                                "fog_density", "fog_distance", "fog_falloff", "wetness",
                                                "scattering_intensity", "mie_scattering_scale",
                                                "rayleigh_scattering_scale", "dust_storm")}]
        sent[1]["wheel_animations"] = [{"id": 1, "wheels": [{"location": 0, "steering_angle": 1.5, "tire_rotation": 2.0}]}]
        sent[1]["walker_bones"] = [{"id": 4, "bones": [{"name": "crl_root", "location": [0.0, 0.0, 1.0],
                                                        "rotation": [0.0, 90.0, 0.0]}]}]
        sent[1]["doors"] = [{"id": 1, "doors": 6, "open": 1}]
        sys.path.insert(0, HERE)
        from recd_harness import Recd
        sys.path.insert(0, os.path.join(HERE, "..", "..", "clients", "python"))
        from recd_client import Client
        r = Recd()
        try:
            for enc in ("binary", "ndjson"):
                with Client(r.url("unix", enc)) as c:
                    for m in sent:
                        if m["type"] in ("open", "state", "event", "close"):
                            c.send(dict(m, session=f"replay-{enc}"))
            want = [("carla", "replay-binary"), ("carla", "replay-ndjson")]
            self.assertTrue(r.wait_for_files(want), r.log_text())
            logs = [r.export(r.files(f, k)[0]) for f, k in want]
            self.assertEqual(logs[0], logs[1])
            self.assertEqual(events_by_frame(logs[0]), EXPECTED_EVENTS)
            self.assertEqual(logs[0][1]["bounding_boxes"][-1]["origin"], ["nan", 0.0, "-inf"])
        finally:
            r.cleanup()


if __name__ == "__main__":
    unittest.main(verbosity=2)
