#!/usr/bin/env bash
# What a process pays to start on a GPU, alone and with one process per
# GPU starting at once (issue 27: the split job's fixed cost per worker):
# CUDA's start (`seamstream devices`), GStreamer's nvcodec plugin loading
# (its plugin_init probes every visible GPU's decoders and encoders), and
# both, each with nothing else holding the GPUs and again while a holder
# process keeps a CUDA context open on every GPU (as persistence mode
# would). On a host of several GPUs, with the bundle:
#   bench/gpu-init.sh
set -u
. .gpu/b/env.sh
gpus=$(nvidia-smi -L | wc -l)
nvidia-smi -q | grep -m1 -i "persistence mode" | sed 's/^ */host: /'
now() { date +%s%N; }
timed() { # label n cmd...: the wall time of n copies at once, one per GPU
  local label=$1 n=$2; shift 2
  local t0 pids=() i; t0=$(now)
  for i in $(seq 0 $(( n - 1 ))); do CUDA_VISIBLE_DEVICES=$i "$@" > /dev/null 2>&1 & pids+=($!); done
  for i in "${pids[@]}"; do wait "$i"; done
  printf '%-44s %2d at once  %6d ms\n' "$label" "$n" $(( ($(now) - t0) / 1000000 ))
}
round() {
  for n in 1 "$gpus"; do
    timed "CUDA start (seamstream devices)" "$n" seamstream devices
    # A fresh registry each time, so the plugin is loaded, not just listed.
    timed "nvcodec plugin load (gst-inspect nvh264dec)" "$n" gst-inspect-1.0 nvh264dec
  done
}
echo "== nothing else on the GPUs"; round
holders=()
for i in $(seq 0 $(( gpus - 1 ))); do
  CUDA_VISIBLE_DEVICES=$i seamstream run test:ball null --device cuda --live --size 64x64 --fps 1 \
    --frames 100000 > /dev/null 2>&1 & holders+=($!)
done
sleep 8
echo "== a holder process on every GPU"; round
kill "${holders[@]}" 2>/dev/null
