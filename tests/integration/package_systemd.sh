# SPDX-License-Identifier: MIT
# The packaged service under a real systemd: boots systemd as PID 1 of new namespaces in a
# throw-away root (an overlay with this machine's / read-only below a tmpfs, with empty /tmp,
# /var/tmp and /run of its own and none of the host's enabled units), installs the .deb files
# there with dpkg -i (the real postinst enables and starts recd.service), sends recordings to
# recd's own listener and to recd.socket's port, stops the service and checks that it stopped
# cleanly and left finalized, valid files, and that dpkg -r stops it. Skips where that cannot run
# (not root, no CAP_SYS_ADMIN, no systemd, overlayfs, cgroup2 or namespaces refused).
# Runs as two processes: this one (checks, scratch folder, cgroup, final cleanup) and itself with
# --inside in a private mount namespace, so every mount vanishes with it even when it is killed.
set -u
: "${RECD_BUILD_DIR:?}" "${RECD_SOURCE_DIR:?}"
skip() {
    echo "SKIP: $*"
    exit 77
}
scale=${RECD_TEST_TIME_SCALE:-1}
pkg="$RECD_BUILD_DIR/test-packages" # the package_build fixture's output
systemd=/lib/systemd/systemd

# Kills whatever still runs in cgroup $cg and removes it and the cgroups systemd made below it.
remove_cgroup() {
    [ -d "$cg" ] || return 0
    echo 1 >"$cg/cgroup.kill" 2>/dev/null
    for _ in $(seq 100); do
        grep -qx 'populated 0' "$cg/cgroup.events" 2>/dev/null && break
        sleep 0.1
    done
    find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
    [ ! -d "$cg" ] || echo "warning: could not remove the cgroup $cg" # stdout: stderr may be muted
}

if [ "${1:-}" != --inside ]; then
    if grep -q '^RECD_SANITIZE:BOOL=ON' "$RECD_BUILD_DIR/CMakeCache.txt"; then
        skip "sanitizer build; packages are built from the normal build"
    fi
    [ "$(id -u)" -eq 0 ] || skip "needs root (mounts, namespaces, dpkg -i in the throw-away root)"
    cap_eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
    [ $((0x${cap_eff:-0} >> 21 & 1)) -eq 1 ] || skip "needs CAP_SYS_ADMIN (a container without privileges?)"
    [ -x "$systemd" ] || skip "$systemd is not installed (apt-get install systemd)"
    for tool in unshare nsenter pivot_root setpriv dpkg findmnt; do
        command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"
    done
    ls "$pkg"/recd_*.deb >/dev/null 2>&1 || skip "no packages in $pkg (package_build skipped or failed)"
    # systemd in the root runs in a cgroup of its own below ours, on the cgroup2 hierarchy.
    cgroot=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
    [ -n "$cgroot" ] || skip "no cgroup2 hierarchy is mounted"
    own=$(sed -n 's/^0:://p' /proc/self/cgroup)
    unshare --mount --pid --fork --cgroup --net --uts --ipc true 2>/dev/null ||
        skip "creating namespaces is refused here"
    # What runs killed with SIGKILL (a ctest timeout) left: their processes are gone (their root
    # died with its unshare) but the empty cgroup and scratch folder stay. Named after their pid.
    parent="$cgroot${own%/}"
    for old in "$parent"/recd-smoke.* "${TMPDIR:-/tmp}"/package_systemd.*.*; do
        pid=${old##*/}
        pid=${pid#*.}
        pid=${pid%%.*}
        case "$pid" in '' | *[!0-9]*) continue ;; esac
        kill -0 "$pid" 2>/dev/null && continue
        if [ -d "$parent/recd-smoke.$pid" ]; then
            grep -qx 'populated 0' "$parent/recd-smoke.$pid/cgroup.events" || continue
        fi
        if [ "${old#"$cgroot"}" != "$old" ]; then
            find "$old" -depth -type d -exec rmdir {} + 2>/dev/null
        else
            rm -rf --one-file-system "$old"
        fi
    done
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/package_systemd.$$.XXXXXX")
    cg="$parent/recd-smoke.$$"
    mkdir "$cg" 2>/dev/null || { rmdir "$tmp"; skip "cannot make a cgroup under $parent"; }
    # The inside kills and unmounts on its own; this catches what a killed inside left behind.
    # rm stays on this file system: here the scratch mount points are plain empty folders.
    trap 'remove_cgroup; rm -rf --one-file-system "$tmp"' EXIT
    start=$(date +%s)
    unshare --mount --propagation private bash "$0" --inside "$tmp" "$cg"
    rc=$?
    echo "package_systemd: $(($(date +%s) - start)) s"
    exit "$rc"
fi

# ---- inside a private mount namespace ----
tmp=$2
cg=$3
# shellcheck source=../shell/expect.sh
. "$(dirname "$0")/../shell/expect.sh"
root="$tmp/root"
upid= # the unshare process whose child is the root's systemd
pid1= # that systemd's pid here, outside its PID namespace

# Runs a command in the booted root: its namespaces, its / and a plain environment, no input.
in_root() {
    nsenter -t "$pid1" -m -u -i -n -p -C -r -w \
        env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 SYSTEMD_PAGER= "$@" </dev/null
}

shutdown_root() {
    if [ -n "$upid" ]; then
        # SIGKILL to every process of the root, systemd included; without bash's "Killed" line.
        { remove_cgroup; kill -KILL "$upid"; wait "$upid"; } 2>/dev/null
    fi
    umount -R "$root" 2>/dev/null
    umount "$tmp/rw" 2>/dev/null
}
trap shutdown_root EXIT

# What the journal says, when a step fails.
show_journal() {
    [ -n "$pid1" ] && in_root journalctl --no-pager -n 60 "$@" >&2
}

# Prints how long the test has run, after what: where the time goes on a slow machine.
began=$(date +%s%N)
elapsed() {
    echo "$(( ($(date +%s%N) - began) / 1000000 )) ms: $*"
}

# Polls CMD... every 0.2 s for up to SECONDS (scaled), until it succeeds.
wait_for() {
    local n=$(($1 * 5 * scale))
    shift
    for _ in $(seq "$n"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}

# ---- the root: an overlay of / with every change in a tmpfs ----
mkdir -p "$tmp/rw" "$root"
mount -t tmpfs -o size=1g,mode=0755 recd-smoke "$tmp/rw" || skip "mounting a tmpfs is refused"
mkdir "$tmp/rw/upper" "$tmp/rw/work"
# A lower layer is one file system: the root's /proc, /sys and /dev are empty folders.
layers="lowerdir=/,upperdir=$tmp/rw/upper,workdir=$tmp/rw/work"
if ! mount -t overlay -o "$layers" recd-smoke "$root" 2>"$tmp/mount.err"; then
    skip "overlayfs over / is refused: $(cat "$tmp/mount.err")"
fi
if [ ! -x "$root$systemd" ] || [ ! -x "$root/usr/bin/dpkg" ]; then
    skip "/usr is not on the root file system: the overlay has no systemd or dpkg"
fi
# A small /dev as containers get it.
mount -t tmpfs -o mode=0755,size=1m recd-dev "$root/dev"
for node in null zero full random urandom tty; do
    touch "$root/dev/$node"
    mount --bind "/dev/$node" "$root/dev/$node"
done
mkdir -p "$root/dev/pts" "$root/dev/shm" # systemd mounts devpts and a tmpfs there
ln -s pts/ptmx "$root/dev/ptmx"            # PrivateDevices= fails without /dev/ptmx
ln -s /proc/self/fd "$root/dev/fd"
for fd in 0:stdin 1:stdout 2:stderr; do ln -s "/proc/self/fd/${fd%%:*}" "$root/dev/${fd#*:}"; done

# The host's /tmp, /var/tmp and /run are not the root's: each is an empty tmpfs of its own, so
# what the host keeps there (a million files left by benchmarks, say) cannot slow the boot. On a
# host whose /tmp is on /, the overlay would otherwise show it, and tmpfiles' `D /tmp` would
# write a whiteout for every entry before sysinit.target is reached.
mount -t tmpfs -o mode=1777,size=256m recd-tmp "$root/tmp"
mount -t tmpfs -o mode=1777,size=64m recd-vartmp "$root/var/tmp"
mount -t tmpfs -o mode=0755,size=64m recd-run "$root/run"
# No mount of the host's /etc/fstab: the root is already all it needs.
: >"$root/etc/fstab"

# Only what recd.service needs starts: recd-smoke.target is the boot target and wants only
# sysinit.target. What the host enabled (its own .wants folders) and what its packages hook into
# the early targets (udev, avahi, cups, colord... arrive with some packages' recommends) do not
# start: every .wants link of the early targets is hidden except journald's. recd.service's
# postinst enables it again in a .wants folder of its own.
cat >"$root/etc/systemd/system/recd-smoke.target" <<'EOF'
[Unit]
Description=recd smoke test (tests/integration/package_systemd.sh)
Requires=sysinit.target
After=sysinit.target
EOF
keep_wanted='^(systemd-journald\.service|systemd-journald\.socket|systemd-journald-dev-log\.socket|systemd-journal-flush\.service)$'
for wants in "$root"/etc/systemd/system/*.wants "$root"/usr/lib/systemd/system/*.wants; do
    [ -d "$wants" ] || continue
    for link in "$wants"/*; do
        [ -L "$link" ] || [ -e "$link" ] || continue
        [[ ${link##*/} =~ $keep_wanted ]] || rm -f "$link" # a whiteout in the upper layer
    done
done
# Units that the targets name directly (Wants= in the unit file rather than a .wants link), that
# reach the kernel, or that clean the host's folders are masked as well.
for unit in systemd-modules-load.service systemd-sysctl.service systemd-remount-fs.service \
    systemd-udevd.service systemd-udev-trigger.service systemd-udev-settle.service \
    systemd-udevd-control.socket systemd-udevd-kernel.socket systemd-timesyncd.service \
    systemd-pstore.service systemd-binfmt.service systemd-hwdb-update.service timers.target \
    systemd-tmpfiles-setup.service systemd-tmpfiles-clean.service systemd-tmpfiles-clean.timer \
    sys-kernel-debug.mount sys-kernel-tracing.mount sys-kernel-config.mount tmp.mount \
    sys-fs-fuse-connections.mount dev-hugepages.mount proc-sys-fs-binfmt_misc.automount; do
    ln -sf /dev/null "$root/etc/systemd/system/$unit"
done
rm -f "$root/var/lib/man-db/auto-update" # no man-db index rebuild after dpkg -i (seconds)
# A container image's policy-rc.d (exit 101) would keep the postinst from starting the service:
# the root is a booted system, where maintainer scripts may start services.
rm -f "$root/usr/sbin/policy-rc.d"
mkdir -p "$root/var/cache/recd-smoke"
debs=
for p in recd rectool librecd1; do
    deb=$(ls "$pkg/$p"_*.deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] || { echo "FAIL: no $p package in $pkg" >&2; exit 1; }
    cp "$deb" "$root/var/cache/recd-smoke/"
    debs="$debs /var/cache/recd-smoke/${deb##*/}"
done

# ---- boot: systemd as PID 1 of new PID, mount, cgroup, network, UTS and IPC namespaces ----
# The kernel stays out of reach: /sys and /proc/sys read-only, no module loading or clock setting.
# --kill-child: the root dies with unshare, even when this script is killed.
boot='
mount -t sysfs -o ro sysfs "$1/sys" &&
mount -t cgroup2 cgroup2 "$1/sys/fs/cgroup" &&
mount --bind "$1/proc/sys" "$1/proc/sys" && mount -o remount,bind,ro "$1/proc/sys" || exit 99
if [ -e "$1/proc/sysrq-trigger" ]; then
    mount --bind "$1/proc/sysrq-trigger" "$1/proc/sysrq-trigger" &&
    mount -o remount,bind,ro "$1/proc/sysrq-trigger" || exit 99
fi
cd "$1" && pivot_root . . && umount -l . || exit 97
exec /usr/bin/env -i container=recd-smoke '"$systemd"' --system --unit=recd-smoke.target'
(
    echo "$BASHPID" >"$cg/cgroup.procs" || exit 98
    exec unshare --pid --fork --kill-child=SIGKILL --mount --propagation private --cgroup --net --uts --ipc \
        --mount-proc="$root/proc" \
        setpriv --bounding-set -sys_module,-sys_time,-sys_rawio,-wake_alarm,-syslog,-mac_admin,-mac_override \
        sh -c "$boot" sh "$root"
) >"$tmp/console.log" 2>&1 &
upid=$!
booted=
for _ in $(seq $((150 * scale))); do
    kill -0 "$upid" 2>/dev/null || break
    [ -n "$pid1" ] || pid1=$(pgrep -P "$upid" | head -n 1)
    if [ -n "$pid1" ]; then
        state=$(in_root systemctl is-system-running 2>/dev/null)
        case "$state" in running | degraded) booted=$state && break ;; esac
    fi
    sleep 0.2
done
if [ -z "$booted" ]; then
    if ! kill -0 "$upid" 2>/dev/null; then
        wait "$upid"
        case $? in
            98) skip "cannot move a process into the cgroup $cg" ;;
            99) skip "mounting sysfs, cgroup2 or a read-only /proc/sys in new namespaces is refused:" \
                "$(cat "$tmp/console.log")" ;;
            97) skip "pivot_root into the overlay is refused: $(cat "$tmp/console.log")" ;;
        esac
    fi
    cat "$tmp/console.log" >&2
    show_journal -b
    echo "FAIL: systemd did not boot in the root (state: ${state:-none})" >&2
    exit 1
fi
elapsed "systemd booted in the root: $booted ($(in_root systemctl --version | head -n 1))"
# The host's /tmp (which holds this test's own scratch folder at least) left no trace: had the
# root seen it, the boot would have written a whiteout for each of its entries up there.
traces=$(find "$tmp/rw/upper/tmp" "$tmp/rw/upper/var/tmp" -mindepth 1 2>/dev/null | wc -l)
[ "$traces" -eq 0 ] || fail "the host's /tmp reached the root: $traces entries in the upper layer"
if [ "$booted" = degraded ]; then
    in_root systemctl --failed --no-legend >&2
fi

# ---- install: the real postinst enables recd.service and starts it (systemd runs) ----
# shellcheck disable=SC2086 # $debs: three paths without spaces
if ! in_root dpkg -i $debs >"$tmp/dpkg.log" 2>&1; then
    cat "$tmp/dpkg.log" >&2
    fail "dpkg -i of recd, rectool and librecd1 failed"
    exit 1
fi
[ "$(in_root systemctl is-enabled recd.service)" = enabled ] || fail "postinst did not enable recd.service"
# dpkg -i returns once the start job is done; the wait is for a slow READY=1 and restarts.
recd_settled() {
    state=$(in_root systemctl is-active recd.service)
    case "$state" in active | failed) return 0 ;; *) return 1 ;; esac
}
wait_for 30 recd_settled
if [ "$state" != active ]; then
    in_root systemctl status --no-pager recd.service >&2
    show_journal -u recd.service
    echo "FAIL: recd.service is $state after dpkg -i, not active" >&2
    exit 1
fi
elapsed "dpkg -i done, recd.service active"
in_root systemctl is-active --quiet recd.socket || fail "recd.socket is not active: recd.service wants it"

# ---- record: a session on recd's own listener (recd.yaml) and one on the socket systemd passes,
# both sent whole; a third that is still open when the service stops ----
expect 0 in_root rectool generate --format recap --scenario mixed --duration 5s --seed 7 -o /tmp/smoke.recap
expect 0 in_root rectool generate --format recap --scenario mixed --duration 60s --seed 8 -o /tmp/long.recap
expect 0 in_root rectool send /tmp/smoke.recap --session smoke-own --to tcp://127.0.0.1:7070 --speed max
expect 0 in_root rectool send /tmp/smoke.recap --session smoke-passed --to tcp://127.0.0.1:7400 --speed max
in_root sh -c 'echo $$ >/tmp/sender.pid && exec rectool send /tmp/long.recap --session smoke-open --to tcp://127.0.0.1:7070 --speed 1' >"$tmp/open.log" 2>&1 &
sender=$! # nsenter: the sender is its child, /tmp/sender.pid in the root's PID namespace
open_part() { in_root find /var/lib/recd/recordings -path '*/smoke-open/*.part' | grep -q .; }
wait_for 30 open_part || fail "no .part of the open session smoke-open within 30 s: $(cat "$tmp/open.log")"
elapsed "smoke-own and smoke-passed sent, smoke-open has a .part"
# The sender goes away without closing its session: recd keeps it open (rotation.idle_timeout is
# 60 s), so the stop has to finalize it. (Stopping with the sender still sending would wait out
# shutdown.drain_timeout, 10 s.)
in_root sh -c 'kill -KILL "$(cat /tmp/sender.pid)" 2>/dev/null'
{ wait "$sender"; } 2>/dev/null

# ---- stop: systemctl returns 0 once recd has finalized every file and exited 0 ----
expect 0 in_root systemctl stop recd.service
elapsed "systemctl stop recd.service returned"
[ "$(in_root systemctl is-active recd.service)" = inactive ] || fail "recd.service is $(in_root systemctl is-active recd.service) after stop"
result=$(in_root systemctl show -p Result -p ExecMainStatus recd.service | tr '\n' ' ')
[ "$result" = "Result=success ExecMainStatus=0 " ] || fail "recd.service stopped with $result"
in_root journalctl --no-pager -o cat -u recd.service >"$tmp/journal"
grep -q 'finalizing the files of 1 session' "$tmp/journal" || fail "smoke-open was not open when the service stopped"
grep -q 'every file is finalized' "$tmp/journal" || fail "recd did not log that every file is finalized"

# The recordings: under StateDirectory= (/var/lib/recd, a DynamicUser= service's private folder).
in_root find /var/lib/recd/recordings -type f >"$tmp/files" 2>&1
sed 's/^/recorded: /' "$tmp/files"
grep -q '\.part$' "$tmp/files" && fail "unfinalized parts left: $(grep '\.part$' "$tmp/files")"
for session in smoke-own smoke-passed smoke-open; do
    file=$(grep "/$session/.*\.recap$" "$tmp/files" | head -n 1)
    if [ -z "$file" ]; then
        fail "no finalized recording of session $session"
        continue
    fi
    expect 0 in_root rectool verify "$file"
    # The sessions sent whole arrived whole.
    [ "$session" = smoke-open ] || expect 0 in_root rectool diff /tmp/smoke.recap "$file"
done

elapsed "recordings checked"

# ---- remove: the prerm stops the running service and its socket before the files go ----
expect 0 in_root systemctl start recd.service
expect 0 in_root dpkg -r recd
for unit in recd.service recd.socket; do
    state=$(in_root systemctl is-active "$unit")
    [ "$state" = inactive ] || fail "$unit is $state after dpkg -r recd"
done
[ "$(in_root systemctl show -p Result --value recd.service)" = success ] ||
    fail "recd.service stopped by the prerm with $(in_root systemctl show -p Result --value recd.service)"

elapsed "dpkg -r recd done"
if [ "$failures" -ne 0 ]; then
    show_journal -u recd.service
    echo "$failures check(s) failed" >&2
    exit 1
fi
echo "package_systemd: dpkg -i started recd.service under systemd; it recorded on its own and on the passed socket; systemctl stop finalized every file, the open one too, and ended cleanly; dpkg -r stopped it"
