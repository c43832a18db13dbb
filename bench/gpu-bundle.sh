#!/usr/bin/env bash
# Bundles the release binary and the GPU test binaries into .gpu/b for the
# GPU host (see bench/gpu-check.sh). Run after
#   cargo build --release --features fault-injection && cargo test --release --features fault-injection --no-run
#   bench/gpu-bundle.sh           the binary, the tests and 5-s excerpts of
#                                 three shared clips
#   bench/gpu-bundle.sh quality   the binary and every shared clip whole
#                                 (for gpu-check.sh quality; the carry is
#                                 limited to 64 MiB, so not both)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = quality ]; then
  rm -rf .gpu/b .gpu/clips; mkdir -p .gpu/clips
  ../shared/gpu/bundle.sh .gpu/b target/release/seamstream
  # (the WebM clip needs libvpx, which the bundle leaves out: measure it
  # on the CPU here)
  cp ../shared/data/video/*.mp4 .gpu/clips/
  strip .gpu/b/bin/seamstream
  du -sh .gpu/b .gpu/clips
  exit 0
fi
tests=()
# (seamstream_cuda: the GPU crate's own tests, some of which drive the GPU)
for n in segments elements gpu kernel_cache seamstream_cuda; do
  f=$(ls -t target/release/deps/$n-* 2>/dev/null | grep -v '\.d$' | head -1 || true)
  [ -n "$f" ] && tests+=("$f")
done
rm -rf .gpu/b
# The default plugins, and the audio parsers (parsebin reads the AAC of a
# split job's check with them).
export GST_BUNDLE_PLUGINS="coreelements app videotestsrc videoconvertscale typefindfunctions playback \
  isomp4 matroska x264 videoparsersbad nvcodec y4menc y4mdec rawparse videorate png jpeg pbtypes audioparsers debug \
  deinterlace videofilter"
../shared/gpu/bundle.sh .gpu/b target/release/seamstream "${tests[@]}"
# The first seconds of three shared real clips, for the retarget test
# there (the carry is limited to 64 MiB; GPU frames equal the CPU's, so the
# quality figures of every clip can be made here).
rm -rf .gpu/clips; mkdir -p .gpu/clips
# Without ffmpeg here, the shared clips go whole (about 12 MB in all).
command -v ffmpeg >/dev/null || cp ../shared/data/video/*.mp4 .gpu/clips/
for c in dog-walk-720p cockatoo-handheld-720p promo-cuts-titles-720p; do
  ffmpeg -v error -y -i "../shared/data/video/$c.mp4" -t 5 -an -c copy ".gpu/clips/$c.mp4" || true
done
# One excerpt keeps its AAC track, for the transcode check (audio copied
# through a run on the GPU).
ffmpeg -v error -y -i ../shared/data/video/promo-cuts-titles-720p.mp4 -t 5 -c copy \
  .gpu/clips/promo-audio.mp4 || true
# (without ffmpeg here, the whole clip: the split test's clip with audio)
[ -s .gpu/clips/promo-audio.mp4 ] || cp ../shared/data/video/promo-cuts-titles-720p.mp4 .gpu/clips/promo-audio.mp4
# The plugin in its own folder (gpu-check.sh elements points
# GST_PLUGIN_PATH at it; the tests register the elements themselves).
mkdir -p .gpu/b/plugin
[ -f target/release/libgstseamstream.so ] && cp target/release/libgstseamstream.so .gpu/b/plugin/
# The whole dog-walk clip at 1080p (289 frames), and four times over (1156
# frames, copied, not encoded again), for the elements' throughput: the
# difference between the two takes GStreamer's start out of the figure.
ffmpeg -v error -y -i ../shared/data/video/dog-walk-720p.mp4 -an -vf scale=1920:1080 \
  -c:v libx264 -preset fast -crf 23 .gpu/clips/dog-walk-1080p.mp4 || true
ffmpeg -v error -y -stream_loop 3 -i .gpu/clips/dog-walk-1080p.mp4 -c copy \
  .gpu/clips/dog-walk-1080p-x4.mp4 || true
# Symbols off: the carry to the GPU host is limited to 64 MiB.
strip .gpu/b/plugin/libgstseamstream.so .gpu/b/bin/seamstream .gpu/b/bin/elements* .gpu/b/bin/gpu-* .gpu/b/bin/kernel_cache* .gpu/b/bin/segments* .gpu/b/bin/seamstream_cuda-* 2>/dev/null || true
du -sh .gpu/b
# The same binary decoding with GStreamer's NVIDIA decoder instead of
# seamstream's, for side-by-side rows (multi-gpu.sh, start-time.sh).
printf '#!/bin/sh\nSEAMSTREAM_NVDEC=0 exec "$(dirname "$0")/seamstream" "$@"\n' > .gpu/b/bin/seamstream-nvcodec
chmod +x .gpu/b/bin/seamstream-nvcodec
# The carry to the GPU host is limited to 64 MiB, the working tree
# included; without ffmpeg here the clips go whole and .gpu is about 72 MB.
# So it also goes packed: carry .gpu.tar.xz (about 28 MB), and
# gpu-check.sh unpacks it there.
rm -f .gpu.tar.xz
tar cf - .gpu | xz -T0 -6 > .gpu.tar.xz
du -sh .gpu .gpu.tar.xz
