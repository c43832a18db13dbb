#!/usr/bin/env bash
# The GPU host's whole check-and-bench, in one call (../shared/gpu/README.md):
#   here:  cargo build --release --features fault-injection && cargo test --release --features fault-injection --no-run
#          bench/gpu-bundle.sh            (bundles the binaries into .gpu/b, and packs .gpu
#                                          into .gpu.tar.xz: carry that, under the 64 MiB limit)
#   there: bench/gpu-check.sh [tests|bench|e2e|transcode|retarget|overhead|all|quality|elements|firststart|peers|segments]
#   (segments: a long clip at .gpu/long/clip.mp4, see bench/results/segments.md)
#   (peers: CV-CUDA unpacked in /root/stash first, see bench/peers/README.md)
#   (quality: bench/gpu-bundle.sh quality first; not part of all)
# Logs go to $OUT (or ./gpu-out); the last lines printed are a short summary.
set -u
what=${1:-all}
out=${OUT:-gpu-out}; mkdir -p "$out"; out=$(cd "$out" && pwd)
# Carried packed (gpu-bundle.sh writes .gpu.tar.xz beside .gpu).
[ -f .gpu/b/env.sh ] || { [ -f .gpu.tar.xz ] && tar xJf .gpu.tar.xz; }
. .gpu/b/env.sh
export SEAMSTREAM_CACHE="$out/cache"
export SEAMSTREAM_CLIPS="$PWD/.gpu/clips"
export SEAMSTREAM_DATA="$PWD/examples/data"
# Here a GPU test that cannot open the GPU fails instead of skipping.
export SEAMSTREAM_REQUIRE_GPU=1
summary=()
step() { # name command...
  local name=$1; shift
  local t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1; local rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  summary+=("$(printf '%-32s rc=%-3s %6d ms' "$name" "$rc" "$ms")")
  return $rc
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv > "$out/nvidia-smi.txt" 2>&1
seamstream devices > "$out/devices.txt" 2>&1
if [ "$what" = tests ] || [ "$what" = all ]; then
  for t in .gpu/b/bin/seamstream_cuda-*; do
    [ -x "$t" ] || continue
    step test-lib-gpu "$t" --test-threads=2
    grep -E "FAILED|panicked" "$out/test-lib-gpu.log" | head -5
    grep -E "test result" "$out/test-lib-gpu.log"
  done
  for t in .gpu/b/bin/gpu-* .gpu/b/bin/elements* .gpu/b/bin/kernel_cache*; do
    [ -x "$t" ] || continue
    n=$(basename "$t" | sed 's/-[0-9a-f]*$//')
    step "test-$n" "$t" --test-threads=4
    grep -E "^test .*(FAILED|ok)$|panicked|SKIP" "$out/test-$n.log" | grep -v " ok$" | head -5
    grep -E "test result" "$out/test-$n.log"
  done
  # The looped and variable-rate files split over GPU workers (the other
  # split tests compare lossless frames, which NVIDIA's decoder, the only
  # H.264 decoder in the bundle, cannot read).
  for t in .gpu/b/bin/segments-*; do
    [ -x "$t" ] || continue
    step test-segments-cuda env SEAMSTREAM_TEST_DEVICE=cuda "$t" --test-threads=4 \
      a_looped_file_whose_times_jump a_variable_rate_file
    grep -E "^test .*(FAILED|ok)$|panicked" "$out/test-segments-cuda.log" | grep -v " ok$" | head -5
    grep -E "test result" "$out/test-segments-cuda.log"
  done
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  step bench seamstream bench --runs 200 --op gaussian:sigma=2.5
  cat "$out/bench.log"
  step bench-json seamstream bench --runs 200 --op gaussian:sigma=2.5 --json
fi
if [ "$what" = e2e ] || [ "$what" = all ]; then
  for p in pipelines/*.toml; do
    n=$(basename "$p" .toml)
    step "e2e-$n" seamstream run --pipeline "$p" -o "$out/$n.mp4" --frames 90 --device cuda --json
    tail -2 "$out/e2e-$n.log"
  done
  ( cd "$out" && step e2e-default seamstream run --device cuda --json )
  tail -2 "$out/e2e-default.log"
  step e2e-1080p-x264 seamstream run test:ball "$out/ball.mp4" --size 1920x1080 --frames 300 --device cuda --op gaussian:sigma=2 --json
  tail -2 "$out/e2e-1080p-x264.log"
fi
if [ "$what" = transcode ] || [ "$what" = e2e ] || [ "$what" = all ]; then
  # A clip with audio, carved on the GPU: the AAC track is copied, and an
  # existing output survives a failed run (the outputs come back in $OUT).
  clip=.gpu/clips/promo-audio.mp4
  if [ -f "$clip" ]; then
    step transcode-audio seamstream run -i "$clip" "$out/promo-audio-carved.mp4" --device cuda \
      --op retarget:width=75% --json
    tail -3 "$out/transcode-audio.log"
    cp "$out/promo-audio-carved.mp4" "$out/keep.mp4"
    step transcode-refused seamstream run -i "$clip" "$out/keep.mp4" --device cuda \
      --op retarget:width=300%
    tail -1 "$out/transcode-refused.log"
    cmp "$out/promo-audio-carved.mp4" "$out/keep.mp4" && echo "keep.mp4 unchanged"
    rm -f "$out/keep.mp4"
  fi
fi
if [ "$what" = retarget ] || [ "$what" = all ]; then
  step bench-retarget seamstream bench retarget --sizes 1920x1080,3840x2160 --runs 5 \
    --clips none --device cuda
  cat "$out/bench-retarget.log"
  # Fast mode on the host's CPU cores (the CPU target is 720p at 30 fps).
  step bench-retarget-cpu seamstream bench retarget --sizes 1280x720,1920x1080 --runs 3 \
    --clips none --device cpu
  cat "$out/bench-retarget-cpu.log"
fi
if [ "$what" = quality ]; then
  # Both modes' quality on every shared clip, carved on the GPU (its frames
  # are the CPU's; the similarity is measured on the host's CPU cores).
  step quality-gpu seamstream bench retarget --no-speed --modes fast,exact --device cuda \
    --clips .gpu/clips
  cat "$out/quality-gpu.log"
fi
if [ "$what" = overhead ] || [ "$what" = all ]; then
  for d in cpu cuda; do
    step "overhead-$d" python3 bench/stream_overhead.py --seamstream "$(command -v seamstream)" --device $d
    cat "$out/overhead-$d.log"
  done
fi
if [ "$what" = elements ] || [ "$what" = all ]; then
  # The plugin (libgstseamstream.so, in the bundle's plugin folder) in
  # gst-launch-1.0, as its users run it: the README's lines with
  # device=cuda, CUDA memory from NVIDIA's decoder (caps shown by -v and
  # the element's debug log), the same frames as in system memory, and
  # throughput against identity in the element's place.
  export GST_PLUGIN_PATH="$PWD/.gpu/b/plugin"
  step inspect gst-inspect-1.0 seamcarve
  clip=.gpu/clips/dog-walk-720p.mp4
  step readme-line-1 gst-launch-1.0 -q filesrc location=$clip ! decodebin ! videoconvert \
    ! seamcarve width=960 device=cuda ! x264enc ! mp4mux ! filesink location="$out/b.mp4"
  step readme-line-2 gst-launch-1.0 -q videotestsrc is-live=true num-buffers=90 ! videoconvert \
    ! seamstream ops="gaussian:sigma=2,sobel" device=cuda ! fakesink
  D="filesrc location=$clip ! qtdemux ! h264parse ! nvh264dec"
  step caps-cuda env GST_DEBUG=seamstream:5 gst-launch-1.0 -v $D ! seamcarve width=960 device=cuda \
    ! cudadownload ! fakesink
  grep -E "seamcarve0.GstPad:(src|sink): caps|CUDA memory" "$out/caps-cuda.log" | head -4
  step frames-cudamem gst-launch-1.0 -q $D ! seamcarve width=960 device=cuda ! cudadownload \
    ! videoconvert ! y4menc ! filesink location="$out/e-cudamem.y4m"
  step frames-sysmem gst-launch-1.0 -q $D ! "video/x-raw" ! seamcarve width=960 device=cuda \
    ! videoconvert ! y4menc ! filesink location="$out/e-sysmem.y4m"
  step frames-cpu gst-launch-1.0 -q $D ! "video/x-raw" ! seamcarve width=960 device=cpu \
    ! videoconvert ! y4menc ! filesink location="$out/e-cpu.y4m"
  ( cd "$out" && md5sum e-cudamem.y4m e-sysmem.y4m e-cpu.y4m && rm -f e-*.y4m )
  for clip in dog-walk-1080p dog-walk-1080p-x4; do
    B="filesrc location=.gpu/clips/$clip.mp4 ! qtdemux ! h264parse ! nvh264dec"
    for round in 1 2 3; do
      for e in identity "seamcarve width=1440 device=cuda" "seamstream ops=gaussian:sigma=2 device=cuda"; do
        n=$(echo "$e" | cut -d' ' -f1)
        step "tp-$clip-$n-cudamem-$round" gst-launch-1.0 -q $B ! $e ! cudadownload ! fakesink sync=false
        step "tp-$clip-$n-sysmem-$round" gst-launch-1.0 -q $B ! "video/x-raw" ! $e ! fakesink sync=false
      done
    done
  done
fi
if [ "$what" = firststart ] || [ "$what" = all ]; then
  # A first start of each operation's chain with an empty kernel cache: the
  # kernels' own line of the summary (compiled before the source starts),
  # then the same run with the cache filled.
  printf '%-62s %9s %9s %9s %9s\n' "chain (1080p, 30 frames)" "empty: s" "compiled" "cached: s" "run: s" > "$out/firststart.txt"
  for op in "gray:matrix=bt601" "yuv:matrix=bt601,range=full" "gaussian:sigma=2.5,border=reflect101" \
      "box:radius=4,border=reflect101" "convolve:kernel=[0,-1,0,-1,5,-1,0,-1,0]" "sobel:ksize=5,output=dx" \
      "warp:affine=[0.9,-0.1,12,0.1,0.9,-5],interpolation=bicubic" "threshold:t=otsu,type=binary_inv" \
      "adaptive:method=sauvola,window=31,k=0.3" "integral" "equalize" \
      "retarget:width=75%,mode=fast" "retarget:width=75%,mode=exact" "segment:tile=32,threshold=0.5,output=borders"; do
    # Both caches empty: ours, and the CUDA driver's (CUDA_CACHE_PATH),
    # which NVRTC's compiles were seen to hit on a second start.
    cache="$out/fs-cache"; rm -rf "$cache" "$out/fs-nv"
    export CUDA_CACHE_PATH="$out/fs-nv"
    j1=$(SEAMSTREAM_CACHE="$cache" seamstream run test:ball null --frames 30 --size 1920x1080 --op "$op" --device cuda --json 2>/dev/null)
    j2=$(SEAMSTREAM_CACHE="$cache" seamstream run test:ball null --frames 30 --size 1920x1080 --op "$op" --device cuda --json 2>/dev/null)
    f() { echo "$1" | sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p"; }
    printf '%-62s %9s %9s %9s %9s\n' "$op" "$(f "$j1" kernel_seconds)" "$(f "$j1" kernels_compiled)" \
      "$(f "$j2" kernel_seconds)" "$(f "$j1" seconds)" >> "$out/firststart.txt"
  done
  rm -rf "$out/fs-cache" "$out/fs-nv"; unset CUDA_CACHE_PATH
  cat "$out/firststart.txt"
fi
if [ "$what" = peers ]; then
  # Ours, NPP and CV-CUDA side by side, one run, the same cases and method
  # (bench/peers/README.md): then bench/peers/table.py makes the table.
  step peers-ours sh -c "seamstream bench ops --runs 200 --json > '$out/ours.json'"
  # Our kernels' CUPTI durations, a process a case (the figure CV-CUDA's
  # column is): bench/peers/kernel_times.cpp injected by the driver.
  cupti=/usr/local/cuda/extras/CUPTI
  for kv in 12 11 10 9; do
    nvcc -shared -Xcompiler -fPIC -DKV=$kv -I$cupti/include -I/usr/local/cuda/include bench/peers/kernel_times.cpp \
      -L$cupti/lib64 -lcupti -Xlinker -rpath=$cupti/lib64 -o "$out/libkernel_times.so" 2>/dev/null && break
  done
  echo "kernel_times built with CUpti_ActivityKernel$kv"
  rm -f "$out/ours-cupti.tsv"
  for c in "gaussian 17 taps RGBA" "gaussian 17 taps gray" "box r=8 gray" "box r=8 RGBA" "warp affine" \
      "warp perspective" "threshold gray" "threshold otsu gray" "RGBA to gray" "equalize gray" "equalize RGBA"; do
    for s in 1920x1080 3840x2160; do
      CUDA_INJECTION64_PATH="$out/libkernel_times.so" KERNEL_TIMES_OUT="$out/ours-cupti.tsv" \
        KERNEL_TIMES_TAG="$c|$s|$((20 + 8 * 50))" seamstream bench ops --runs 50 --sizes $s --filter "$c" > /dev/null 2>&1
    done
  done
  cat "$out/ours-cupti.tsv"
  step peers-npp-build nvcc -O2 -arch=sm_90 -o "$out/npp_side" bench/peers/npp_side.cu \
    -lnppif -lnppig -lnppist -lnppidei -lnppitc -lnppicc -lnppial -lnppc
  step peers-npp sh -c "'$out/npp_side' 200 > '$out/npp.json'"
  cat "$out/peers-npp.log"
  site=/root/stash/site
  if [ ! -d "$site" ] && ls /root/stash/part.* >/dev/null 2>&1; then
    mkdir -p "$site" && cat /root/stash/part.* | xz -dc | tar -xf - -C "$site"
  fi
  step peers-cvcuda env PYTHONPATH="$site" python3 bench/peers/cvcuda_side.py --runs 200 --json "$out/cvcuda.json"
  cat "$out/peers-cvcuda.log"
  step peers-table sh -c "python3 bench/peers/table.py '$out/ours.json' '$out/cvcuda.json' '$out/npp.json' '$out/ours-cupti.tsv' > '$out/peers.md'"
  cat "$out/peers.md"
  rm -f "$out/npp_side" "$out/libkernel_times.so"
fi
if [ "$what" = segments ]; then
  # Split jobs on the GPU host (issue 15): a real clip with audio split over
  # four workers on the GPU and joined keeps every frame, its timestamps and
  # the audio (the other split tests make and decode lossless clips, which
  # needs gst-libav, not in the bundle: they run in CI); then one run against
  # --gpus 1 and --gpus 1 with 4 workers on a long clip, with the GPU's
  # utilisation sampled each second.
  # SEG_PRESET: x264's preset for the timed runs (default medium);
  # SEG_NO_TEST=1 skips the test.
  preset=${SEG_PRESET:-medium}
  t=$(ls .gpu/b/bin/segments-* 2>/dev/null | head -1)
  if [ -n "$t" ] && [ -z "${SEG_NO_TEST:-}" ]; then
    step test-segments-gpu env SEAMSTREAM_SPLIT_CLIP="$PWD/.gpu/clips/promo-audio.mp4" "$t" --ignored --nocapture a_real_clip
    grep -E "^test |test result|: one run|: 4 workers|frame for frame|panicked" "$out/test-segments-gpu.log"
  fi
  clip=$PWD/.gpu/long/clip.mp4
  work=/tmp/seg-work; rm -rf "$work"; mkdir -p "$work"
  nproc > "$out/nproc.txt"
  for op in "retarget:width=75%" "gaussian:sigma=2"; do
    n=${op%%:*}
    for how in single gpus1 gpus1-workers4; do
      case $how in
        single) args=(--device cuda) ;;
        gpus1) args=(--gpus 1) ;;
        gpus1-workers4) args=(--gpus 1 --workers 4) ;;
      esac
      nvidia-smi dmon -s u -d 1 > "$out/dmon-$n-$how.txt" 2>&1 & dmon=$!
      vmstat 1 > "$out/vmstat-$n-$how.txt" 2>&1 & vm=$!
      cd "$work"; step "seg-$n-$how-$preset" seamstream run "$clip" "$n-$how.mp4" --op "$op" --preset "$preset" "${args[@]}"; cd - > /dev/null
      kill $dmon $vm 2>/dev/null; wait $dmon $vm 2>/dev/null
      tail -4 "$out/seg-$n-$how-$preset.log"
      awk '!/^#/ && NF>2 {s+=$2; n++} END {if (n) printf "  GPU utilisation: mean %.0f%% over %d s\n", s/n, n}' "$out/dmon-$n-$how.txt"
      # vmstat's user+system CPU, past its first (since-boot) line.
      awk 'NR>3 && $13 ~ /^[0-9]+$/ {s+=$13+$14; n++} END {if (n) printf "  CPU busy: mean %.0f%% of %d cores\n", s/n, '"$(nproc)"'}' "$out/vmstat-$n-$how.txt"
    done
  done
  ls -la "$work" > "$out/seg-outputs.txt"
  rm -rf "$work"
fi
printf '%s\n' "${summary[@]}"
