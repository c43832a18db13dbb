#!/usr/bin/env bash
# CI: the Slurm path (deploy/slurm) end to end on this one machine: a
# one-node Slurm cluster in a temporary directory, a 3-segment CPU job
# submitted with deploy/slurm/submit.sh, and its output checked.
#
#   .ci/slurm-localhost.sh [SEAMSTREAM [CLIP [COUNT_CMD]]]
#
#   SEAMSTREAM  the binary (default target/release/seamstream)
#   CLIP        a short video (default: a 3 s test clip made with gst-launch-1.0)
#   COUNT_CMD   a command that, given a file as its last argument, prints its
#               number of video frames (default: ffprobe's packet count, or
#               the buffers gst-launch-1.0's parsebin gives)
#
# FAKE=1: SEAMSTREAM is a stand-in that writes text parts; the frame check
# is replaced by checking that OUT is the parts joined in order.
# Debian 12; needs root (re-runs itself with sudo); installs slurm-wlm and
# munge if missing. SLURM_CI_TIMEOUT: seconds to wait for the jobs (600).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
say() { echo "slurm-ci: $*"; }
fail() {
  echo "slurm-ci: FAIL: $*" >&2
  exit 1
}

abs() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s' "$repo/$1" ;; esac; }
bin=$(abs "${1:-target/release/seamstream}")
clip=${2:+$(abs "$2")}
count_cmd=${3:-}
[ -x "$bin" ] || fail "seamstream binary '$bin' is not executable; build it (cargo build --release) or pass its path as the first argument"
[ -z "$clip" ] || [ -r "$clip" ] || fail "clip '$clip' is not readable; pass a short video as the second argument"

if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || fail "run as root or install sudo: slurmctld, slurmd and munged need root"
  exec sudo --preserve-env=FAKE,SLURM_CI_TIMEOUT,G_DEBUG "$repo/.ci/slurm-localhost.sh" "$bin" "$clip" "$count_cmd"
fi

# --- packages ----------------------------------------------------------------
missing=()
for p in slurm-wlm munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- teardown (set before anything starts) -----------------------------------
work=$(mktemp -d /tmp/seamstream-slurm.XXXXXX)
chmod 755 "$work"
pids=() started_munged=0 ok=0
cleanup() {
  set +e
  # Jobs first (their slurmstepd and seamstream outlive slurmd), then the
  # daemons we started.
  if [ ${#pids[@]} -gt 0 ] && [ -n "$(squeue -h -o %A 2>/dev/null)" ]; then
    squeue -h -o %A | xargs -r scancel --full
    for _ in $(seq 20); do [ -z "$(squeue -h -o %A 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  if [ "$started_munged" = 1 ] && [ -s /run/munge/munged.pid ]; then kill "$(cat /run/munge/munged.pid)"; fi
  if [ "$ok" = 1 ]; then rm -rf "$work"; else
    echo "slurm-ci: logs kept in $work" >&2
    for f in "$work"/slurmctld.log "$work"/slurmd.log; do
      [ -f "$f" ] && { echo "--- $f (last 30 lines)" >&2; tail -n 30 "$f" >&2; }
    done
  fi
}
trap cleanup EXIT

# --- munge ---------------------------------------------------------------------
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  say "munged already running"
else
  if [ ! -s /etc/munge/munge.key ]; then
    say "creating /etc/munge/munge.key"
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
  install -d -o munge -g munge -m 755 /run/munge
  install -d -o munge -g munge -m 700 /var/lib/munge /var/log/munge
  runuser -u munge -- munged || fail "munged did not start; see /var/log/munge/munged.log"
  started_munged=1
  munge -n | unmunge >/dev/null || fail "munged started but does not answer (munge -n | unmunge)"
fi

# --- one-node cluster ------------------------------------------------------------
node=$(hostname -s 2>/dev/null || true)
node=${node:-localhost}
cpus=$(nproc)
mem_mb=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) * 9 / 10 / 1024)) # below the real size, or slurmd drains the node
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf
# Ports off the defaults (6817/6818) so that a real Slurm on the machine is
# left alone; no cgroups (containers); CR_CPU: each task takes one CPU.
cat >"$SLURM_CONF" <<EOF
ClusterName=seamstream-ci
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -c -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
say "cluster: node $node, $cpus CPUs, ${mem_mb} MB, in $work"
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -N -n "$node" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { cat "$work"/*.out >&2; fail "a Slurm daemon exited during start-up (its output is above)"; }
  done
  sleep 1
done
[ "$state" = idle ] || { sinfo -R >&2 || true; fail "node $node is '${state:-unknown}', not idle, after 60 s"; }
say "node $node idle"

# --- the job -------------------------------------------------------------------
if [ -z "$clip" ]; then
  clip=$work/clip.mp4
  if [ "${FAKE:-0}" = 1 ]; then echo "not a video" >"$clip"; else
    gst-launch-1.0 -q -e videotestsrc num-buffers=90 ! video/x-raw,width=320,height=180,framerate=30/1 \
      ! x264enc ! h264parse ! mp4mux name=m ! filesink location="$clip" \
      audiotestsrc num-buffers=130 ! audioconvert ! avenc_aac ! aacparse ! m. ||
      fail "could not make a test clip with gst-launch-1.0; pass a clip as the second argument"
  fi
fi
out=$work/out.${clip##*.}
n=3
SEAMSTREAM=$bin "$repo/deploy/slurm/submit.sh" "$clip" "$out" $n --cpu -- --device cpu --op gaussian:sigma=1.5 ||
  fail "deploy/slurm/submit.sh failed (its message is above)"

# No slurmdbd, so no sacct: wait until squeue lists no job; the controller
# keeps finished jobs' states (MinJobAge) for scontrol to report.
timeout=${SLURM_CI_TIMEOUT:-600}
for ((t = 0; ; t++)); do
  [ -z "$(squeue -h -o %A)" ] && break
  ((t < timeout)) || { squeue >&2; fail "jobs still queued after $timeout s (SLURM_CI_TIMEOUT)"; }
  sleep 1
done
say "jobs finished after ~${t} s"

# --- checks -----------------------------------------------------------------------
parts=$out.parts
# One line a job (each array task is one): id, task, name, state, exit code.
states=$(scontrol -o show job | awk '{
  for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = substr($i, length(kv[1]) + 2) }
  print f["JobId"], (f["ArrayTaskId"] == "" ? "-" : f["ArrayTaskId"]), f["JobName"], f["JobState"], f["ExitCode"]; delete f
}')
echo "$states" | sed 's/^/  job /'
bad=$(echo "$states" | awk '$4 != "COMPLETED"')
if [ -n "$bad" ] || [ "$(echo "$states" | grep -c COMPLETED)" -ne $((n + 1)) ]; then
  for f in "$parts"/logs/*.log; do echo "--- $f" >&2; cat "$f" >&2; done
  fail "expected $n segments and the join, all COMPLETED (job logs above); not so:
${bad:-$n + 1 jobs expected, $(echo "$states" | grep -c COMPLETED) completed}"
fi
for ((k = 0; k < n; k++)); do
  ls "$parts"/logs/segment-*_"$k".log >/dev/null 2>&1 || fail "no log for segment $k in $parts/logs"
done
[ -s "$out" ] || fail "OUT $out is missing or empty although every job completed"

if [ "${FAKE:-0}" = 1 ]; then
  expected=$(for ((k = 0; k < n; k++)); do echo "segment $k/$n of $clip: --device cpu --op gaussian:sigma=1.5"; done)
  [ "$(cat "$out")" = "$expected" ] || fail "OUT is not the $n parts in order:
$(cat "$out")"
  say "PASS (FAKE=1: OUT is the $n parts in order)"
  ok=1
  exit 0
fi

# Frames of a file, counted as coded video packets (not from the duration).
count_frames() {
  if [ -n "$count_cmd" ]; then
    read -ra cmd <<<"$count_cmd"
    "${cmd[@]}" "$1"
  elif command -v ffprobe >/dev/null; then
    ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$1"
  else
    # parsebin's video buffers are the file's coded frames; fakesink -v prints
    # one "chain" line for each.
    env -u G_DEBUG gst-launch-1.0 -v filesrc location="$1" ! parsebin \
      ! 'video/x-h264;video/x-h265;video/x-vp8;video/x-vp9;video/x-av1' \
      ! fakesink silent=false 2>&1 | grep -c 'last-message = chain' || true
  fi
}
frames() {
  local c
  c=$(count_frames "$1" | tr -d '[:space:]') || true
  [[ $c =~ ^[1-9][0-9]*$ ]] || fail "could not count the frames of $1 (got '$c'); pass a counting command as the third argument"
  printf '%s' "$c"
}
want=$(frames "$clip")
got=$(frames "$out")
sum=0
for ((k = 0; k < n; k++)); do
  c=$(frames "$parts/part-$(printf %05d $k).${out##*.}")
  sum=$((sum + c))
done
say "frames: clip $want, parts $sum, OUT $got"
[ "$sum" = "$want" ] || fail "the parts hold $sum frames, the clip $want"
[ "$got" = "$want" ] || fail "OUT has $got frames, the clip $want"
say "PASS"
ok=1
