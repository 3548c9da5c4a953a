#!/bin/bash
# The GPU health agent (planning/gpu_health.py): `preflight` once per boot, then `watch`.
#
# It holds no Kubernetes credential. It publishes its verdict as a node-feature-discovery
# feature file (labels `$PREFLIGHT_LABEL` and, on a fault, `$FAULT_LABEL`; NFD's master
# applies them and a NodeFeatureRule turns the fault into a taint), it tells the pod's gate
# (planning/gpu_gate.py) this boot's verdict and a held fault through files, and it asks kured
# for a drain and a reboot through a sentinel file. Whatever fails is written to `$PROBLEM`, which
# the container's readiness probe prints: the kubelet records it as the pod's event.
# DCGM runs as the GPU operator's standalone host engine on this node (`$DCGM_HOST`), which
# comes up after the driver: until it answers, the node's health is unknown, not faulty.
set -uo pipefail

# Where the pod mounts things (overridden only by tests/test_gpu_health.py).
HOST=${HOST_ROOT:-/host}
STATUS=${STATUS_DIR:-/status}
SYSFS=${SYSFS_ROOT:-/sys}
FEATURES=$HOST/features.d/platform-gpu-health
STAGING=$HOST/features.d/.platform-gpu-health # NFD skips dot files; written, then renamed
SENTINEL=$HOST/sentinel/reboot-required
LAST_REBOOT=$HOST/state/last-reboot-request
RESULT=$STATUS/preflight
PROBLEM=$STATUS/problem
FAULT=$STATUS/fault       # a held fault, for the gate to cordon the node
CORDONED=$STATUS/cordoned # the gate's answer
# This boot's verdict, on the host's tmpfs (`$BOOT_VERDICT`): the gate reads it, and a
# restarted pod reuses it rather than run the diagnostic on GPUs that jobs use by now.
VERDICT=${BOOT_VERDICT:-$HOST/sentinel/preflight}
# A fault must show in this many checks in a row before it taints the node or asks for a
# reboot: a driver reload or a link retraining is not a fault.
FAULT_AFTER=${FAULT_AFTER:-3}

dcgm() { dcgmi "$@" --host "$DCGM_HOST"; }

publish() { # $1: passed|failed, $2: the failed check's name or ""
    {
        # Stale results lapse: a dead or blind agent closes the gate (NFD's expiry-time directive).
        echo "# +expiry-time=$(date -u -d "+$((3 * CHECK_INTERVAL_SECONDS)) seconds" +%Y-%m-%dT%H:%M:%SZ)"
        echo "$PREFLIGHT_LABEL=$1"
        if [ -n "$2" ]; then echo "$FAULT_LABEL=$2"; fi
    } >"$STAGING" && mv "$STAGING" "$FEATURES"
}

fail() { # $1: check, $2: detail
    echo "$1: $2" | tee "$PROBLEM" >&2
    FAILED=$1
}

request_reboot() { # at most once per MIN_REBOOT_INTERVAL_SECONDS on this node
    [ "$REMEDIATE" = "true" ] || return 0
    local now last
    now=$(date +%s)
    last=$(cat "$LAST_REBOOT" 2>/dev/null || echo 0)
    if [ $((now - last)) -ge "$MIN_REBOOT_INTERVAL_SECONDS" ]; then
        echo "$now" >"$LAST_REBOOT" && touch "$SENTINEL"
        echo "reboot requested for $FAILED" >&2
    else
        echo "no reboot: the last request was $(((now - last) / 60)) minutes ago" >&2
    fi
}

dcgm_answers() { dcgm discovery -l >/dev/null 2>&1; }

wait_for() { # $1: what, $2: command; gives up after WAIT_SECONDS (the node stays unchecked)
    local waited=0
    until eval "$2"; do
        if [ "$waited" -ge "${WAIT_SECONDS:-900}" ]; then
            echo "unknown: $1 not ready after ${waited}s; the node stays unchecked" | tee "$PROBLEM" >&2
            return 1
        fi
        sleep 10
        waited=$((waited + 10))
    done
}

wait_cordoned() { # until the gate says the node is cordoned, at most GATE_WAIT_SECONDS
    local waited=0
    while [ ! -e "$CORDONED" ] && [ "$waited" -lt "${GATE_WAIT_SECONDS:-60}" ]; do
        sleep 2
        waited=$((waited + 2))
    done
    [ -e "$CORDONED" ] || echo "the gate has not cordoned the node after ${waited}s; tainting anyway" >&2
}

ib_ports_present() { [ "$IB_PORTS" -eq 0 ] || compgen -G "$SYSFS/class/infiniband/*/ports/1" >/dev/null; }

check_gpus() { # every GPU of the size is there ("8 GPUs found (Active).")
    local found
    found=$(dcgm discovery -l | sed -n 's/^\([0-9][0-9]*\) GPUs\{0,1\} found.*/\1/p')
    [ "${found:-0}" -eq "$EXPECTED_GPUS" ] || fail gpu-count "found ${found:-0} GPUs, expected $EXPECTED_GPUS"
}

check_infiniband() { # every InfiniBand port is ACTIVE at the size's speed
    [ "$IB_PORTS" -gt 0 ] || return 0
    local active=0 port rate
    for port in "$SYSFS"/class/infiniband/*/ports/1; do
        # Accelerated networking's Ethernet functions are mlx5 devices too.
        [ "$(cat "$port/link_layer" 2>/dev/null)" = "InfiniBand" ] || continue
        case "$(cat "$port/state")" in *ACTIVE*) ;; *) continue ;; esac
        rate=$(cut -d' ' -f1 <"$port/rate")
        [ "${rate%.*}" -ge "$IB_GBPS" ] && active=$((active + 1))
    done
    [ "$active" -eq "$IB_PORTS" ] || fail infiniband "$active of $IB_PORTS InfiniBand ports active at $IB_GBPS Gb/s"
}

check_diag() { # DCGM's diagnostic (level 0: not run, e.g. on partly MIG-partitioned GPUs)
    [ "$DIAG_LEVEL" -gt 0 ] || return 0
    local output status
    output=$(dcgm diag -r "$DIAG_LEVEL" 2>&1)
    status=$?
    if [ "$status" -ne 0 ] || echo "$output" | grep -q "Fail"; then
        fail dcgm-diag "$(echo "$output" | grep -m 3 -i "fail" | tr -s ' \n' ' ')"
    fi
}

check_health() { # DCGM's health watches: XIDs, memory, PCIe, NVLink, thermal, power, InfoROM
    local output
    # Watches live in the host engine's memory: set them again each round, so a restarted
    # engine is watched again (setting them is idempotent).
    dcgm health -s a >/dev/null 2>&1
    output=$(dcgm health -c 2>&1) || return 0 # no answer: unknown, not a fault
    if echo "$output" | grep "Overall Health" | grep -q "Failure"; then
        fail dcgm-health "$(echo "$output" | grep -m 3 -i "fail\|xid" | tr -s ' \n' ' ')"
    fi
}

published_this_boot() { # the verdict an agent published since this boot (an agent without
    # the boot's verdict file, from before it existed), or nothing
    local boot changed
    boot=$(sed -n 's/^btime //p' "${PROC_STAT:-/proc/stat}")
    changed=$(stat -c %Y "$FEATURES" 2>/dev/null || echo 0)
    [ "$changed" -gt "${boot:-0}" ] || return 0
    sed -n "s|^$PREFLIGHT_LABEL=||p" "$FEATURES"
}

preflight() {
    local judged earlier
    judged=$(cat "$VERDICT" 2>/dev/null)
    if [ -z "$judged" ]; then
        earlier=$(published_this_boot)
        case "$earlier" in
        passed) judged=passed ;;
        failed) judged="failed:$(sed -n "s|^$FAULT_LABEL=||p" "$FEATURES")" ;;
        esac
        [ -z "$judged" ] || echo "$judged" >"$VERDICT"
    fi
    if [ -n "$judged" ]; then # this boot was judged: keep its verdict
        echo "${judged%%:*}" >"$RESULT"
        exit 0
    fi
    rm -f "$FEATURES" "$PROBLEM" "$RESULT" # a new boot is unchecked until it passes
    # Not ready yet is not a fault: exit non-zero and the kubelet runs preflight again.
    wait_for "DCGM's host engine" dcgm_answers || exit 1
    wait_for "the InfiniBand devices" ib_ports_present || exit 1
    FAILED=""
    check_gpus
    [ -n "$FAILED" ] || check_infiniband
    [ -n "$FAILED" ] || check_diag
    if [ -n "$FAILED" ]; then
        echo failed >"$RESULT"
        echo "failed:$FAILED" >"$VERDICT" # the gate cordons the node and lifts its taint
        publish failed "$FAILED"
        request_reboot
    else
        echo passed >"$RESULT"
        echo passed >"$VERDICT" # the gate lifts the taint: the node takes work
        publish passed ""
    fi
    exit 0 # the verdict is the label; the watch container reports it
}

watch() {
    local verdict strikes=0 blind=0 fault=""
    verdict=$(cat "$RESULT" 2>/dev/null || echo failed)
    while true; do
        FAILED=""
        if dcgm_answers; then
            blind=0
            check_gpus
            [ -n "$FAILED" ] || check_infiniband
            [ -n "$FAILED" ] || check_health
            if [ -n "$FAILED" ]; then strikes=$((strikes + 1)); else strikes=0; fi
            if [ "$strikes" -ge "$FAULT_AFTER" ]; then
                # A fault held for FAULT_AFTER rounds: cordon, taint and ask for a reboot once.
                # The cordon comes first: a Ready, schedulable node with the fault's taint could
                # become the autoscaler's template of the pool, which no job would fit.
                if [ "$fault" != "$FAILED" ]; then
                    echo "$FAILED" >"$FAULT"
                    wait_cordoned
                    request_reboot
                fi
                fault=$FAILED
            elif [ "$strikes" -eq 0 ]; then
                fault=""
                if [ "$verdict" = passed ]; then rm -f "$PROBLEM"; fi
            fi
            publish "$verdict" "$fault"
        else
            # DCGM does not answer (restarting, upgrading): the health is unknown. Keep the
            # last verdict for a while, then let it lapse so no new work lands blind.
            blind=$((blind + 1))
            if [ "$blind" -lt 3 ]; then publish "$verdict" "$fault"; fi
        fi
        sleep "$CHECK_INTERVAL_SECONDS"
    done
}

case "${1:-}" in
preflight) preflight ;;
watch) watch ;;
*) echo "usage: $0 preflight|watch" >&2 && exit 2 ;;
esac
