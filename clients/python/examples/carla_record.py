#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Records a running CARLA world into recd through the recd Python client: each world snapshot
# becomes one `carla` state (a simulation frame), and actors appearing, disappearing, being
# attached and colliding become events. Usage:
#   python3 carla_record.py --carla localhost:2000 --to tcp://127.0.0.1:7070?encoding=ndjson \
#       --session town10-run1 [--auth TOKEN] [--frames N] [--collision-sensors]
#
# The messages are the carla model of docs/protocol.md section 2.8, sent as NDJSON (the client
# passes every field through). A frame is one message: a world of a few hundred actors needs
# recd's limits.max_frame raised, and --max-frame here to match.
import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import recd_client  # noqa: E402

# carla.ActorType-like categories of the CARLA recorder's EventAdd (reference: FCarlaActor).
OTHER, VEHICLE, WALKER, TRAFFIC_LIGHT, TRAFFIC_SIGN, SENSOR = range(6)


def actor_kind(type_id: str) -> int:
    for prefix, kind in (("vehicle.", VEHICLE), ("walker.pedestrian", WALKER),
                         ("traffic.traffic_light", TRAFFIC_LIGHT), ("traffic.", TRAFFIC_SIGN),
                         ("sensor.", SENSOR)):
        if type_id.startswith(prefix):
            return kind
    return OTHER


def _vec(v):
    return [float(v.x), float(v.y), float(v.z)]


def _rot(r):
    return [float(r.roll), float(r.pitch), float(r.yaw)]


def _finite(values):
    """Sensors and the spectator report NaN/inf boxes; recd refuses non-finite numbers."""
    return all(math.isfinite(x) for x in values)


# ---- the messages (docs/protocol.md section 2.8) ----
# CARLA logs hold Unreal units: locations in centimetres, rotations (roll, pitch, yaw) in degrees,
# walker speeds in cm/s, kinematics in m/s. The Python API gives metres.
CM = 100.0
NOT_AN_ACTOR = 0xFFFFFFFF  # Collision's "hit the static world"
STRING_ATTRIBUTE = 3  # carla.ActorAttributeType.String


def _cm(v):
    return [float(v.x) * CM, float(v.y) * CM, float(v.z) * CM]


def open_message(world, start_time_ms: int) -> dict:
    return {"format": "carla", "start_time": start_time_ms,
            # additional_data: the log has bounding boxes and platform time, as CARLA's
            # start_recorder(..., additional_data=True) writes them.
            "carla": {"map": world.get_map().name, "date": start_time_ms // 1000, "width": "f32",
                      "ids": "0.9.16", "additional_data": True}}


def attribute_types(world, type_id: str) -> dict:
    """Attribute id -> carla.ActorAttributeType value, from the blueprint (String if unknown)."""
    try:
        bp = world.get_blueprint_library().find(type_id)
        return {a.id: int(a.type) for a in bp}
    except Exception:  # a stand-in or an actor without a blueprint (spectator, map props)
        return {}


def actor_add_message(world, actor) -> dict:
    tf = actor.get_transform()
    types = attribute_types(world, actor.type_id)
    return {"kind": "add", "id": actor.id, "actor_type": actor_kind(actor.type_id),
            "location": _cm(tf.location), "rotation": _rot(tf.rotation), "uid": 0,
            "blueprint": actor.type_id,
            "attributes": [{"type": types.get(k, STRING_ATTRIBUTE), "id": k, "value": str(v)}
                           for k, v in sorted(actor.attributes.items())]}


def actor_del_message(actor_id: int) -> dict:
    return {"kind": "delete", "id": actor_id}


def parent_message(child_id: int, parent_id: int) -> dict:
    return {"kind": "parent", "id": child_id, "parent": parent_id}


def collision_message(running_id: int, actor_id: int, other_id, hero_ids) -> dict:
    return {"kind": "collision", "id": running_id, "actor1": actor_id,
            "actor2": NOT_AN_ACTOR if other_id is None else other_id,
            "hero1": int(actor_id in hero_ids), "hero2": int(other_id in hero_ids)}


def frame_message(frame: int, elapsed: float, snapshot, actors, platform_s: float) -> dict:
    """One simulation frame: the snapshot's positions and kinematics, plus what the actor
    handles report (vehicle controls and lights, walker speed, traffic lights, boxes)."""
    positions, kinematics, boxes = [], [], []
    vehicles, walkers, lights, traffic = [], [], [], []
    for a in snapshot:
        actor = actors.get(a.id)
        if actor is None or actor_kind(actor.type_id) == SENSOR:
            continue
        tf = a.get_transform()
        positions.append({"id": a.id, "location": _cm(tf.location), "rotation": _rot(tf.rotation)})
        kinematics.append({"id": a.id, "linear_velocity": _vec(a.get_velocity()),
                           "angular_velocity": _vec(a.get_angular_velocity())})
        bb = getattr(actor, "bounding_box", None)
        if bb is not None and _finite(_vec(bb.location) + _vec(bb.extent)):
            boxes.append({"id": a.id, "origin": _cm(bb.location), "extent": _cm(bb.extent)})
        kind = actor_kind(actor.type_id)
        if kind == VEHICLE:
            c = actor.get_control()
            vehicles.append({"id": a.id, "steering": float(c.steer), "throttle": float(c.throttle),
                             "brake": float(c.brake), "handbrake": int(bool(c.hand_brake)),
                             "gear": int(c.gear)})
            lights.append({"id": a.id, "state": int(actor.get_light_state())})
        elif kind == WALKER:
            v = a.get_velocity()
            walkers.append({"id": a.id, "speed": math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z) * CM})
        elif kind == TRAFFIC_LIGHT:
            traffic.append({"id": a.id, "frozen": int(bool(actor.is_frozen())),
                            "elapsed": float(actor.get_elapsed_time()), "state": int(actor.get_state())})
    return {"frame": frame, "elapsed": elapsed, "positions": positions,
            "traffic_lights": traffic, "vehicle_animations": vehicles, "walker_animations": walkers,
            "vehicle_lights": lights, "kinematics": kinematics, "bounding_boxes": boxes,
            "platform_time": platform_s}


class CarlaRecorder:
    """Turns world snapshots into recd messages for one session (one episode of one world).
    Each snapshot is one state (frames count from 1, time from the first snapshot), followed by
    the events of that frame, which recd writes into the frame's event packets."""

    def __init__(self, client: recd_client.Client, session: str, world, start_time_ms=None):
        self.client = client
        self.session = session
        self.world = world
        self.start_time_ms = start_time_ms if start_time_ms is not None else int(time.time() * 1000)
        self.platform_start = time.monotonic()
        self.actors = {}  # id -> actor handle of the actors seen alive
        self.parents = {}  # id -> parent id already sent
        self.hero_ids = set()
        self.pending_collisions = []  # (actor id, other id or None), from sensor callbacks
        self.collisions = 0  # CARLA's running collision id
        self.frames = 0
        self.first_elapsed = None

    def start(self):
        self.client.open(self.session, **open_message(self.world, self.start_time_ms))

    def on_collision(self, event):
        """A sensor.other.collision callback (carla.CollisionEvent: .actor is the actor the
        sensor is attached to, .other_actor what it hit, None for the static world)."""
        other = event.other_actor.id if event.other_actor is not None else None
        self.pending_collisions.append((event.actor.id, other))

    def record(self, snapshot):
        """One snapshot: the frame's state, then events for what changed among the actors."""
        elapsed = float(snapshot.timestamp.elapsed_seconds)
        if self.first_elapsed is None:
            self.first_elapsed = elapsed
        self.frames += 1
        alive = {a.id: a for a in self.world.get_actors()}
        self.client.state(self.session, **frame_message(
            self.frames, max(0.0, elapsed - self.first_elapsed), snapshot, alive,
            time.monotonic() - self.platform_start))
        for actor_id in sorted(set(self.actors) - set(alive)):
            self.client.event(self.session, **actor_del_message(actor_id))
            self.parents.pop(actor_id, None)
        for actor_id in sorted(set(alive) - set(self.actors)):
            actor = alive[actor_id]
            if actor.attributes.get("role_name") == "hero":
                self.hero_ids.add(actor_id)
            self.client.event(self.session, **actor_add_message(self.world, actor))
        self.actors = alive
        for actor_id, actor in sorted(alive.items()):
            parent = actor.parent.id if actor.parent is not None else None
            if parent is not None and self.parents.get(actor_id) != parent:
                self.client.event(self.session, **parent_message(actor_id, parent))
                self.parents[actor_id] = parent
        seen = set()
        for pair in self.pending_collisions:  # CARLA records each pair once per frame
            if pair not in seen:
                seen.add(pair)
                self.collisions += 1
                self.client.event(self.session, **collision_message(self.collisions, *pair, self.hero_ids))
        self.pending_collisions.clear()
        self.client.flush()  # one simulation frame is on the wire before the next

    def stop(self):
        self.client.close_session(self.session)
        self.client.close()


def attach_collision_sensors(carla, world, recorder):
    """One collision sensor per vehicle: CARLA reports collisions only through sensors."""
    bp = world.get_blueprint_library().find("sensor.other.collision")
    sensors = []
    for actor in world.get_actors().filter("vehicle.*"):
        s = world.spawn_actor(bp, carla.Transform(), attach_to=actor)
        s.listen(recorder.on_collision)
        sensors.append(s)
    return sensors


def main(argv=None, carla_module=None):
    p = argparse.ArgumentParser(description="Record a CARLA world into recd (format carla).")
    p.add_argument("--carla", default="localhost:2000", help="CARLA server HOST:PORT")
    p.add_argument("--to", default="tcp://127.0.0.1:7070?encoding=ndjson", help="recd URL")
    p.add_argument("--session", default="carla-episode", help="recd session key")
    p.add_argument("--auth", help="recd's auth.token")
    p.add_argument("--frames", type=int, default=0, help="stop after N frames (0: until Ctrl-C)")
    p.add_argument("--max-frame", type=int, default=65536,
                   help="largest message in bytes (recd's limits.max_frame)")
    p.add_argument("--collision-sensors", action="store_true",
                   help="attach a collision sensor to every vehicle to record collisions")
    args = p.parse_args(argv)
    if carla_module is None:
        try:
            import carla as carla_module  # the CARLA PythonAPI package (pip install carla)
        except ImportError:
            print("error: the carla Python package is not installed", file=sys.stderr)
            return 2
    carla = carla_module
    host, _, port = args.carla.rpartition(":")
    cc = carla.Client(host or "localhost", int(port))
    cc.set_timeout(10.0)
    world = cc.get_world()
    rec = CarlaRecorder(recd_client.Client(args.to, auth=args.auth, max_frame=args.max_frame),
                        args.session, world)
    rec.start()
    sensors = attach_collision_sensors(carla, world, rec) if args.collision_sensors else []
    frames = 0
    try:
        while args.frames == 0 or frames < args.frames:
            rec.record(world.wait_for_tick(10.0))
            frames += 1
    except KeyboardInterrupt:
        pass
    finally:
        for s in sensors:
            s.stop()
            s.destroy()
        rec.stop()
    print(f"recorded {frames} frames into session {args.session}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
