/* SPDX-License-Identifier: MIT */
/* The .rec blocks' motion under editing: interpolation between two blocks (positions and
 * velocities linearly, the rotation by slerp), speed changes, turning about a vertical axis, and
 * which fields are controls a resampler must never lose. */
#include <math.h>

#include "formats/rec/rec_edit.h"

static float lerpf(float a, float b, double f)
{
    return (float)((double)a + ((double)b - (double)a) * f);
}

static recd_vec3f lerp3(recd_vec3f a, recd_vec3f b, double f)
{
    recd_vec3f r = {lerpf(a.x, b.x, f), lerpf(a.y, b.y, f), lerpf(a.z, b.z, f)};
    return r;
}

/* Spherical interpolation along the shorter arc; nearly equal rotations blend linearly. */
static recd_quat rec_edit_slerp(recd_quat a, recd_quat b, double f)
{
    double aw = a.w, ax = a.x, ay = a.y, az = a.z;
    double bw = b.w, bx = b.x, by = b.y, bz = b.z;
    double dot = aw * bw + ax * bx + ay * by + az * bz;
    if (dot < 0) {
        dot = -dot;
        bw = -bw, bx = -bx, by = -by, bz = -bz;
    }
    double ka, kb;
    if (dot > 0.9995) {
        ka = 1.0 - f;
        kb = f;
    } else {
        double theta = acos(dot);
        double s = sin(theta);
        ka = sin((1.0 - f) * theta) / s;
        kb = sin(f * theta) / s;
    }
    double w = ka * aw + kb * bw, x = ka * ax + kb * bx, y = ka * ay + kb * by,
           z = ka * az + kb * bz;
    double n = sqrt(w * w + x * x + y * y + z * z);
    if (n == 0)
        return a;
    recd_quat r = {(float)(w / n), (float)(x / n), (float)(y / n), (float)(z / n)};
    return r;
}

void rec_edit_interpolate(const recd_msg *a, const recd_msg *b, double f, recd_msg *out)
{
    *out = *a;
    if (a->format == RECD_MSG_FMT_SAMP_ONFOOT) {
        const recd_rec_onfoot *pa = &a->onfoot, *pb = &b->onfoot;
        recd_rec_onfoot *o = &out->onfoot;
        o->position = lerp3(pa->position, pb->position, f);
        o->velocity = lerp3(pa->velocity, pb->velocity, f);
        o->rotation = rec_edit_slerp(pa->rotation, pb->rotation, f);
        if (pa->surf_id == pb->surf_id)
            o->surf_offset = lerp3(pa->surf_offset, pb->surf_offset, f);
    } else {
        const recd_rec_vehicle *pa = &a->vehicle, *pb = &b->vehicle;
        recd_rec_vehicle *o = &out->vehicle;
        o->position = lerp3(pa->position, pb->position, f);
        o->velocity = lerp3(pa->velocity, pb->velocity, f);
        o->rotation = rec_edit_slerp(pa->rotation, pb->rotation, f);
        o->vehicle_health = lerpf(pa->vehicle_health, pb->vehicle_health, f);
    }
}

bool rec_edit_same_controls(const recd_msg *a, const recd_msg *b)
{
    if (a->format == RECD_MSG_FMT_SAMP_ONFOOT) {
        const recd_rec_onfoot *x = &a->onfoot, *y = &b->onfoot;
        return x->keys == y->keys && x->left_right == y->left_right && x->up_down == y->up_down &&
               x->weapon == y->weapon && x->additional_key == y->additional_key &&
               x->special_action == y->special_action && x->anim_id == y->anim_id &&
               x->surf_id == y->surf_id && x->health == y->health && x->armour == y->armour;
    }
    const recd_rec_vehicle *x = &a->vehicle, *y = &b->vehicle;
    return x->keys == y->keys && x->left_right == y->left_right && x->up_down == y->up_down &&
           x->weapon == y->weapon && x->additional_key == y->additional_key &&
           x->vehicle_id == y->vehicle_id && x->siren == y->siren &&
           x->landing_gear == y->landing_gear && x->trailer_id == y->trailer_id &&
           x->driver_health == y->driver_health && x->driver_armour == y->driver_armour &&
           x->extra.bits == y->extra.bits;
}

static void scale3(recd_vec3f *v, double k)
{
    v->x = (float)(v->x * k);
    v->y = (float)(v->y * k);
    v->z = (float)(v->z * k);
}

void rec_edit_scale_velocity(recd_msg *m, double k)
{
    scale3(m->format == RECD_MSG_FMT_SAMP_ONFOOT ? &m->onfoot.velocity : &m->vehicle.velocity, k);
}

static void turn(const recd_edit_xform *x, double px, double py, double *ox, double *oy)
{
    *ox = x->cos_a * px - x->sin_a * py;
    *oy = x->sin_a * px + x->cos_a * py;
}

static void move_point(recd_vec3f *p, const recd_edit_xform *x)
{
    double rx, ry;
    turn(x, (double)p->x - x->pivot[0], (double)p->y - x->pivot[1], &rx, &ry);
    p->x = (float)(x->pivot[0] + rx + x->translate[0]);
    p->y = (float)(x->pivot[1] + ry + x->translate[1]);
    p->z = (float)((double)p->z + x->translate[2]);
}

static void turn_vector(recd_vec3f *v, const recd_edit_xform *x)
{
    double rx, ry;
    turn(x, v->x, v->y, &rx, &ry);
    v->x = (float)rx;
    v->y = (float)ry;
}

/* The file stores the conjugate of the body rotation (docs/formats/samp-rec.md), so turning the
 * body by r in the world multiplies the stored value by conj(r) on the right. The sign of w is
 * kept: q and -q are the same rotation, and keeping it makes four quarter turns an identity. */
static recd_quat rec_edit_turn_quat(recd_quat q, double half_cos, double half_sin)
{
    double c = half_cos, s = half_sin;
    double w = q.w * c + q.z * s;
    double x = q.x * c - q.y * s;
    double y = q.x * s + q.y * c;
    double z = -q.w * s + q.z * c;
    if ((q.w >= 0) != (w >= 0) && w != 0)
        w = -w, x = -x, y = -y, z = -z;
    recd_quat r = {(float)w, (float)x, (float)y, (float)z};
    return r;
}

void rec_edit_transform(recd_msg *m, const recd_edit_xform *x)
{
    if (m->format == RECD_MSG_FMT_SAMP_ONFOOT) {
        recd_rec_onfoot *b = &m->onfoot;
        move_point(&b->position, x);
        turn_vector(&b->velocity, x);
        b->rotation = rec_edit_turn_quat(b->rotation, x->half_cos, x->half_sin);
    } else {
        recd_rec_vehicle *b = &m->vehicle;
        move_point(&b->position, x);
        turn_vector(&b->velocity, x);
        b->rotation = rec_edit_turn_quat(b->rotation, x->half_cos, x->half_sin);
    }
}

bool rec_edit_position(const recd_msg *m, double pos[3])
{
    const recd_vec3f *p =
        m->format == RECD_MSG_FMT_SAMP_ONFOOT ? &m->onfoot.position : &m->vehicle.position;
    pos[0] = p->x;
    pos[1] = p->y;
    pos[2] = p->z;
    return true;
}
