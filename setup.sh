#!/usr/bin/env bash
# One-time set-up on Debian or Ubuntu: the GStreamer libraries and plugins
# seamstream builds against and runs with, Python's venv and pip (for
# `pip install ./python`), and a Rust toolchain if none is installed. Safe
# to run again.
#
#   ./setup.sh                     set up only
#   ./setup.sh COMMAND [ARGS...]   set up, then run COMMAND with cargo on PATH,
#                                  e.g. ./setup.sh cargo run --release -- image
set -euo pipefail

packages=(
  pkg-config build-essential ca-certificates curl
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-plugins-ugly gstreamer1.0-libav
  python3 python3-venv python3-pip
)

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "setup: run as root or install sudo: apt-get needs root to install ${packages[*]}" >&2
    exit 1
  fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: installing the Rust toolchain with rustup"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --component rustfmt,clippy
  export PATH="$HOME/.cargo/bin:$PATH"
  echo "setup: Rust installed; in new shells it is on PATH (or run: . \"\$HOME/.cargo/env\")"
fi
echo "setup: done"
if [ $# -gt 0 ]; then exec "$@"; fi
